"""core.text.bpe_view: the tokenization page's helpers, checked on the seeds' worked example."""

from __future__ import annotations

import pytest

from core.text.bpe_view import (
    KNOWN_VOCABULARIES,
    CorpusProblem,
    clean_corpus,
    decode_corpus,
    display_width,
    embedding_matrix_params,
    encode_words_at,
    layout_chips,
    line_costs,
    most_frequent_words,
    pair_table,
    text_cost,
    token_lines,
    token_origins,
    vocab_breakdown,
    vocab_sizes,
)
from core.text.tokenizer import train_bpe

SEEDS = "low low low low low lower lower newest newest newest widest widest widest"


@pytest.fixture(scope="module")
def seeds():
    return train_bpe(SEEDS, 20, "classic")


# --- corpus input ------------------------------------------------------------------------


def test_decode_corpus_accepts_utf8_with_and_without_bom() -> None:
    assert decode_corpus("low lower 首都".encode()) == "low lower 首都"
    assert decode_corpus(b"\xef\xbb\xbflow") == "low"


@pytest.mark.parametrize(("data", "code"), [
    (b"", "empty"),
    (b"   \n\t ", "empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    (b"caf\xe9 au lait", "undecodable"),  # Latin-1, not UTF-8
    (bytes(range(1, 32)) * 10, "binary"),  # control characters, no NUL
])
def test_decode_corpus_refuses_what_is_not_text(data: bytes, code: str) -> None:
    with pytest.raises(CorpusProblem) as caught:
        decode_corpus(data)
    assert caught.value.code == code


def test_decode_corpus_refuses_a_file_over_the_limit() -> None:
    with pytest.raises(CorpusProblem) as caught:
        decode_corpus(b"a" * 101, max_bytes=100)
    assert caught.value.code == "too_large"
    assert decode_corpus(b"a" * 100, max_bytes=100) == "a" * 100


def test_clean_corpus_drops_controls_and_normalises_line_ends() -> None:
    assert clean_corpus("low\x00 lower\r\nnew\rest") == "low lower\nnew\nest"
    with pytest.raises(CorpusProblem):
        clean_corpus("\x00\x01")
    with pytest.raises(CorpusProblem):
        clean_corpus("x" * 11, max_chars=10)


# --- chips -------------------------------------------------------------------------------


def test_display_width_counts_cjk_double() -> None:
    assert display_width("首都ab") == 6
    assert display_width("") == 0


def test_layout_chips_wraps_and_never_overlaps() -> None:
    places = layout_chips(["ab", "cd", "ef"], line_width=7)
    assert [p.row for p in places] == [0, 0, 1]
    assert places[0].x1 <= places[1].x0  # a gap between neighbours
    assert places[2].x0 == 0
    wide = layout_chips(["x" * 50, "y"], line_width=10)
    assert [p.row for p in wide] == [0, 1]  # an over-wide chip gets its own row
    with pytest.raises(ValueError):
        layout_chips(["a"], line_width=0)


# --- counts ------------------------------------------------------------------------------


def test_text_cost_and_embedding_size() -> None:
    cost = text_cost("low lower", 3)
    assert (cost.chars, cost.tokens, cost.chars_per_token) == (9, 3, 3.0)
    assert text_cost("", 0).chars_per_token == 0.0
    # The curriculum's numbers: GPT-2 small 50,257 × 768 ≈ 38.6 M; GPT-3 ≈ 617 M.
    assert embedding_matrix_params(50_257, 768) == 38_597_376
    gpt3 = next(k for k in KNOWN_VOCABULARIES if k.name.startswith("GPT-3"))
    assert round(gpt3.embedding_params / 1e6) == 618  # 617.6 M, "≈ 6.17 亿" in the seeds
    with pytest.raises(ValueError):
        embedding_matrix_params(0, 768)


def test_line_costs_encode_each_line() -> None:
    costs = line_costs("ab\n\ncde", lambda s: list(s))
    assert [(c.chars, c.tokens) for c in costs] == [(2, 2), (3, 3)]


def test_token_lines_follow_newlines() -> None:
    assert token_lines([b"a", b"\n", b"b", b"c\n\n", b"d"]) == [0, 0, 1, 1, 3]


# --- training views on the seeds' corpus --------------------------------------------------


def test_pair_table_marks_the_winner_and_its_tie(seeds) -> None:
    rows = pair_table(seeds.merges[0])
    assert (rows[0].left, rows[0].right, rows[0].count, rows[0].status) == ("l", "o", 7, "chosen")
    assert (rows[1].left, rows[1].right, rows[1].count, rows[1].status) == ("o", "w", 7, "tie")
    assert all(r.status == "" for r in rows if r.count < 7)
    third = pair_table(seeds.merges[2])  # (e, s) 6 wins over its tie (s, t) 6
    assert (third[0].left, third[0].right, third[0].count) == ("e", "s", 6)
    assert any((r.left, r.right, r.status) == ("s", "t", "tie") for r in third)


def test_seeds_first_four_merges_and_vocabulary(seeds) -> None:
    first4 = [(m.new, m.count) for m in seeds.merges[:4]]
    assert first4 == [("lo", 7), ("low", 7), ("es", 6), ("est", 6)]
    vocab = vocab_breakdown(seeds.base_vocab, [m.new for m in seeds.merges[:4]])
    assert vocab.base_size == 11 and len(vocab.merged) == 4 and vocab.size == 15
    assert vocab.characters[-1] == "</w>"


def test_vocab_sizes_and_breakdown_ignore_repeated_results() -> None:
    assert vocab_sizes(["a", "b"], ["ab", "ab", "abb"]) == [2, 3, 3, 4]
    vocab = vocab_breakdown(["<|endoftext|>", "<0x00>", "<0xFF>", "a"], ["aa", "aa"], special=["<|endoftext|>"])
    assert vocab.special == ("<|endoftext|>",)
    assert vocab.byte_tokens == ("<0x00>", "<0xFF>")
    assert vocab.characters == ("a",)
    assert vocab.merged == ("aa",) and vocab.size == 5


def test_most_frequent_words_keeps_corpus_order_on_ties(seeds) -> None:
    words = most_frequent_words(seeds.segmentation_at(0), 3)
    assert [(w, f) for w, f, _ in words] == [("low", 5), ("newest", 3), ("widest", 3)]
    with pytest.raises(ValueError):
        most_frequent_words([], 0)


def test_encode_words_at_splits_lowest_into_low_and_est(seeds) -> None:
    [lowest] = encode_words_at(seeds, "lowest", 4)
    assert lowest.pieces == ("low", "est", "</w>")
    assert [m.new for m in lowest.merges] == ["lo", "low", "es", "est"]
    assert [e.word for e in encode_words_at(seeds, "low  lower", 2)] == ["low", "lower"]


def test_encode_words_at_keeps_the_leading_space_in_gpt_mode() -> None:
    result = train_bpe(SEEDS, 8, "gpt", cjk_lexicon=())
    words = [e.word for e in encode_words_at(result, "lowest newer", 8)]
    assert words == ["lowest", " newer"]


def test_token_origins_rebuild_each_tokens_merge_path() -> None:
    tok = train_bpe(SEEDS, 5, "classic").tokenizer
    trace = tok.encode_with_trace("lowest")
    origins = token_origins(trace, known=lambda s: True)
    assert list(trace.tokens) == ["low", "est</w>"]
    assert [[m.new for m in o.path] for o in origins] == [["lo", "low"], ["es", "est", "est</w>"]]


def test_token_origins_give_byte_fallback_tokens_an_empty_path() -> None:
    tok = train_bpe("ab ab ab", 2, "gpt", cjk_lexicon=()).tokenizer
    vocab = set(tok.vocab())
    trace = tok.encode_with_trace("ab 首")  # 首 was never seen: spelled as 3 UTF-8 bytes
    origins = token_origins(trace, known=lambda s: s in vocab)
    assert len(origins) == len(trace.tokens)
    assert [len(o.path) for o in origins] == [1, 0, 0, 0, 0]  # only "ab" was built by a merge
    assert [o.piece_index for o in origins] == [0, 1, 2, 2, 2]
    assert trace.tokens[-3:] == ("<0xE9>", "<0xA6>", "<0x96>")
