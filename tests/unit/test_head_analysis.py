"""Head behaviour labels on hand-made patterns, probes on a real (random) model's trace."""

from __future__ import annotations

import numpy as np
import pytest

from core.lessons import head_analysis as ha
from core.engine import names


def causal_uniform(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]


def previous_token(n: int) -> np.ndarray:
    p = np.zeros((n, n))
    p[0, 0] = 1
    p[np.arange(1, n), np.arange(n - 1)] = 1
    return p


def first_token(n: int) -> np.ndarray:
    p = np.zeros((n, n))
    p[:, 0] = 1
    return p


@pytest.mark.parametrize("pattern,label", [
    (previous_token(6), "previous_token"),
    (first_token(6), "first_token"),
    (np.eye(6), "self"),
    (causal_uniform(6), "broad"),
])
def test_ideal_patterns_get_their_label_with_score_one(pattern: np.ndarray, label: str) -> None:
    result = ha.label_head(pattern, layer=2, head=1)
    assert (result.label, result.layer, result.head) == (label, 2, 1)
    assert result.score == pytest.approx(1.0)


def test_scores_are_the_mean_weights() -> None:
    # Rows 2 and 3 are scored (rows 0 and 1 cannot tell behaviours apart).
    p = np.array([
        [1.0, 0, 0, 0],
        [0.5, 0.5, 0, 0],
        [0.2, 0.6, 0.2, 0],
        [0.1, 0.1, 0.4, 0.4],
    ])
    s = ha.behaviour_scores(p)
    assert s["previous_token"] == pytest.approx((0.6 + 0.4) / 2)
    assert s["first_token"] == pytest.approx((0.2 + 0.1) / 2)
    assert s["self"] == pytest.approx((0.2 + 0.4) / 2)
    expected_broad = ((1 - 0.6) / (1 - 1 / 3) + (1 - 0.4) / (1 - 1 / 4)) / 2  # 1 − largest weight, scaled
    assert s["broad"] == pytest.approx(expected_broad)
    # The label is the top score, always: broad 0.70 beats previous-token 0.50 here.
    result = ha.label_head(p)
    assert (result.label, result.score) == ("broad", pytest.approx(max(s.values())))


def test_mixed_and_too_short() -> None:
    p = np.array([[1.0, 0, 0], [1.0, 0, 0], [0.35, 0.33, 0.32]])  # nothing reaches 0.4 but broad…
    p[2] = [0.98, 0.01, 0.01]  # …so make row 2 sharp on token 0 (first-token 0.98)
    assert ha.label_head(p).label == "first_token"
    sharp_somewhere_else = np.zeros((6, 6))
    sharp_somewhere_else[0, 0] = 1
    sharp_somewhere_else[1:, 1] = 1  # every later query looks at position 1: sharp, but none of ours
    result = ha.label_head(sharp_somewhere_else)
    assert result.label == "mixed" and result.score == pytest.approx(0.25)  # previous-token only for q=2
    half_previous = previous_token(6) * 0.5 + causal_uniform(6) * 0.5  # half on the previous token
    assert ha.label_head(half_previous).label == "previous_token"
    short = ha.label_head(np.ones((1, 1)))
    assert short.label == ha.TOO_SHORT and np.isnan(short.score)


def test_two_token_prompt_uses_query_one() -> None:
    s = ha.behaviour_scores(np.array([[1.0, 0.0], [0.3, 0.7]]))
    assert s["self"] == pytest.approx(0.7) and s["previous_token"] == pytest.approx(0.3)


def test_bad_patterns_are_refused() -> None:
    for bad in (np.ones((2, 3)), np.ones(3), np.array([[np.nan]]), np.array([[1.0, -np.inf], [0.5, 0.5]])):
        with pytest.raises(ValueError):
            ha.behaviour_scores(bad)


def test_label_heads_and_groups_on_a_stacked_trace() -> None:
    n = 5
    layer0 = np.stack([previous_token(n), causal_uniform(n)])
    layer1 = np.stack([np.eye(n), first_token(n)])
    trace = {names.act_name("pattern", layer=0): layer0, names.act_name("pattern", layer=1): layer1}
    patterns = ha.stack_patterns(trace, 2)
    assert patterns.shape == (2, 2, n, n)
    assert [b.label for b in ha.label_heads(patterns)] == ["previous_token", "broad", "self", "first_token"]
    groups = ha.attention_to_groups(patterns, 4, [[0], [2, 3]])
    np.testing.assert_allclose(groups[0, 0], [0, 1])  # previous-token head: all on position 3
    np.testing.assert_allclose(groups[0, 1], [0.2, 0.4])
    np.testing.assert_allclose(groups[1, 1], [1, 0])
    with pytest.raises(ValueError, match="not visible"):
        ha.attention_to_groups(patterns, 2, [[3]])
    with pytest.raises(KeyError):
        ha.stack_patterns(trace, 3)


def test_find_word_across_token_boundaries() -> None:
    tokens = ["小明", "把", "苹", "果", "放进", "书包", "，"]
    assert ha.find_word(tokens, "苹果") == [2, 3]
    assert ha.find_word(tokens, "书包") == [5]
    assert ha.find_word(["The", " apple", " and", " the", " apple"], "apple", occurrence=1) == [4]
    with pytest.raises(ValueError):
        ha.find_word(tokens, "香蕉")
    with pytest.raises(ValueError):
        ha.find_word(tokens, "")


def test_labels_on_a_real_model_trace() -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from core.engine.model import GPTConfig, build_model

    model = build_model(GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=32, n_ctx=16, vocab_size=50), seed=0)
    _, trace = model.run_with_trace(list(range(1, 9)))
    patterns = ha.stack_patterns(trace, 2)
    labels = ha.label_heads(patterns)
    assert len(labels) == 4
    for b in labels:
        assert b.label in (*ha.BEHAVIOURS, ha.MIXED)
        assert all(0.0 <= v <= 1.0 + 1e-9 for v in b.scores.values())
    np.testing.assert_allclose(ha.attention_from(patterns, 7).sum(axis=-1), 1.0, atol=1e-5)


# --- the coreference probe ---------------------------------------------------------------------


def _corpus_prompt(pair: ha.CorefPair, to_fruit: bool) -> str:
    """The same sentence written by the corpus generator (core.text.corpus), for an exact comparison."""
    from core.text import corpus

    world = corpus.load_world()
    lang = pair.lang
    person = next(p for p in world.people if pair.to_fruit.prompt.startswith(p.name.get(lang)))
    find = lambda words, text: next(w for w in words if w.get(lang) == text)  # noqa: E731
    fruit_cat, box_cat = world.categories["fruit"], world.categories["container"]
    trait = find(fruit_cat.traits, pair.fruit_trait) if to_fruit else find(box_cat.traits, pair.container_trait)
    left = "留在" in pair.to_fruit.prompt or " left " in pair.to_fruit.prompt
    item = corpus.CorefItem(person, find(fruit_cat.words, pair.fruit), find(box_cat.words, pair.container),
                            trait, to_fruit, 1 if left else 0)
    return item.prompt(lang)


@pytest.mark.parametrize("pair", ha.COREF_PAIRS, ids=lambda p: p.key)
def test_coref_presets_are_in_the_corpus_form(pair: ha.CorefPair) -> None:
    assert pair.to_fruit.prompt == _corpus_prompt(pair, to_fruit=True)
    assert pair.to_container.prompt == _corpus_prompt(pair, to_fruit=False)
    assert pair.to_fruit.answer.strip() == pair.fruit and pair.to_container.answer.strip() == pair.container
    if pair.lang == "en":
        assert pair.to_fruit.answer.startswith(" ")  # as the tokenizer sees the next word
    assert ha.COREF_PAIRS[0].to_fruit.prompt == "小明把苹果放进书包，因为它太甜了。它指的是"  # the seeds' sentence


def _tokenizer():
    from pathlib import Path

    from core.text.tokenizer import BPETokenizer

    folder = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "tokenizer"
    if not (folder / "bpe.json").is_file():
        pytest.skip("the corpus tokenizer has not been built")
    return BPETokenizer.load(folder)


def test_continuation_token_id_uses_the_token_after_the_prompt() -> None:
    tok = _tokenizer()
    case = ha.COREF_PAIRS[1].to_fruit  # English: "... It means the" + " apple"
    ids = tok.encode(case.prompt + case.answer)
    assert ha.continuation_token_id(tok, case.prompt, case.answer) == ids[len(tok.encode(case.prompt))]
    assert tok.decode([ha.continuation_token_id(tok, case.prompt, case.answer)]).startswith(" a")
    with pytest.raises(ValueError):
        ha.continuation_token_id(tok, case.prompt, "")


def test_coreference_probe_on_a_random_model() -> None:
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    from core.engine.model import GPTConfig, build_model

    tok = _tokenizer()
    model = build_model(GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=32, n_ctx=64,
                                  vocab_size=tok.vocab_size), seed=0)
    pair = ha.COREF_PAIRS[0]
    probes = []
    for case in (pair.to_fruit, pair.to_container):
        ids = tok.encode(case.prompt)
        logits, trace = model.run_with_trace(ids)
        tokens = [tok.decode([i]) for i in ids]
        probe = ha.coreference_probe(case, tokens, ha.stack_patterns(trace, 2), logits[-1], tok)
        assert probe.query_pos == len(ids) - 1
        assert "".join(tokens[i] for i in probe.answer_positions) == case.answer
        assert probe.attention.shape == (2, 2, 2)
        assert np.all(probe.attention >= 0) and np.all(probe.attention.sum(-1) <= 1 + 1e-6)
        assert 0 < probe.p_answer < 1 and len(probe.top) == 5
        assert probe.correct == (probe.top[0][0] == probe.answer_id)
        probes.append(probe)
    shift = ha.coref_shift(*probes)
    fruit_lean_sweet = probes[0].attention[..., 0] - probes[0].attention[..., 1]
    fruit_lean_small = probes[1].attention[..., 1] - probes[1].attention[..., 0]
    np.testing.assert_allclose(shift, fruit_lean_sweet - fruit_lean_small)


def test_coref_shift_by_hand() -> None:
    def probe(answer_w: float, distractor_w: float) -> ha.CorefProbe:
        return ha.CorefProbe(ha.COREF_PAIRS[0].to_fruit, 5, [2], [4], np.array([[[answer_w, distractor_w]]]),
                             1, 2, 0.5, 0.1, [(1, 0.5)])

    # Sweet sentence: 0.6 on the fruit, 0.1 on the container -> leans +0.5 to the fruit.
    # Small sentence: 0.5 on the container (its answer), 0.2 on the fruit -> leans −0.3 to the fruit.
    assert ha.coref_shift(probe(0.6, 0.1), probe(0.5, 0.2))[0, 0] == pytest.approx(0.8)
    assert ha.coref_shift(probe(0.3, 0.3), probe(0.3, 0.3))[0, 0] == pytest.approx(0.0)  # ignores the trait


def test_label_is_always_the_top_score_of_its_own_table() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(3, 9))
        logits = rng.normal(0, float(rng.uniform(0.1, 4)), size=(n, n))
        logits[np.triu_indices(n, 1)] = -np.inf
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        b = ha.label_head(p)
        top = max(b.scores.values())
        assert b.score == pytest.approx(top)
        if b.label != ha.MIXED:
            assert b.scores[b.label] == top
        else:
            assert top < ha.LABEL_THRESHOLD
