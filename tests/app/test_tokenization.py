"""The tokenization page in AppTest: BPE stepping on the seeds' corpus, uploads, the model's tokenizer."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.text.corpus import cjk_lexicon
from core.text.tokenizer import train_bpe
from tests.app.conftest import assert_clean, markdown_tables, open_page
from ui import state
from ui.components.bpe_steps import LABELS
from ui.i18n import load_strings

SEEDS = "low low low low low lower lower newest newest newest widest widest widest"


def _open(lang: str = "en", prompt: str | None = None) -> AppTest:
    at = open_page("tokenization", lang=lang, prompt=prompt)
    assert_clean(at)
    return at


def _parts(at: AppTest) -> dict[str, dict]:
    """The BPE step component's mounts by part ("steps", "encode"): the data Python sent."""
    from ui.components.bpe_steps import COMPONENT_NAME

    found: dict[str, dict] = {}

    def walk(node) -> None:  # noqa: ANN001
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name == COMPONENT_NAME:
            data = json.loads(proto.json)
            found[data["part"]] = data
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found


def _steps(at: AppTest) -> dict:
    return _parts(at)["steps"]


def _step_to(at: AppTest, n: int) -> AppTest:
    """The step as the server learns it: a link (``?tok_merge_step=n``) or another page's commit."""
    at.session_state[state.durable_key("tok_merge_step")] = n
    at.run()
    assert_clean(at)
    return at


def _merge_lines(data: dict, upto: int) -> list[tuple[str, str, str, int]]:
    return [(m["left"], m["right"], m["new"], m["count"]) for m in data["merges"][:upto]]


def test_renders_in_both_languages_with_the_seeds_corpus(lang: str) -> None:
    at = _open(lang)
    assert at.text_area(key="tok_corpus").value == SEEDS
    assert at.radio(key="tok_mode").value == "classic"
    data = _steps(at)
    assert data["knob"] == {"name": "tok_merge_step", "value": 0, "default": 0, "scope": data["knob"]["scope"]}
    assert len(data["merges"]) == 10 and data["curve"][0] == 74  # the seeds: 61 characters and 13 </w>
    assert at.text_input(key="tok_encode_word").value == "lowest"
    assert _parts(at)["encode"]["encode"] == [["lowest", ["l", "o", "w", "e", "s", "t", "</w>"]]]
    strings = load_strings(lang)
    for name, key in LABELS.items():  # every word the browser shows, in the page's language
        assert data["labels"][name] == strings[key], name
    assert len(at.tabs) == 2
    title = "Tokenization" if lang == "en" else "分词"
    assert title in at.title[0].value


def test_the_whole_trace_is_sent_once_as_core_recorded_it(lang: str) -> None:
    """The browser replays these (tests/e2e/test_tokenization.py checks it draws what core computes)."""
    at = _open(lang)
    data = _steps(at)
    result = train_bpe(SEEDS, 10, "classic", cjk_lexicon=cjk_lexicon())
    assert _merge_lines(data, 4) == [("l", "o", "lo", 7), ("lo", "w", "low", 7), ("e", "s", "es", 6),
                                     ("es", "t", "est", 6)]
    assert [(m["rank"], m["left"], m["right"], m["new"]) for m in data["merges"]] == [
        (m.rank, *m.pair, m.new) for m in result.merges]
    assert data["base"] == ["l", "o", "w", "e", "r", "n", "s", "t", "i", "d", "</w>"]  # the 11 base symbols
    assert data["curve"] == list(result.token_count_curve().tokens)
    starts = {w: pieces for w, _, pieces in result.segmentation_at(0)}
    assert [(w, f) for w, f, _ in data["words"]] == [("low", 5), ("newest", 3), ("widest", 3), ("lower", 2)]
    assert all(pieces == starts[w] for w, _, pieces in data["words"])
    assert data["distinct"] == 4


def test_pair_table_before_merge_one_marks_the_tie() -> None:
    first, second = _steps(_open())["merges"][0]["pairs"][:2]
    assert first == ["l", "o", 7, "chosen"]
    assert second == ["o", "w", 7, "tie"]


def test_a_linked_step_is_kept_and_clamped_to_the_training() -> None:
    at = _step_to(_open(), 3)
    assert _steps(at)["knob"]["value"] == 3
    assert _parts(at)["encode"]["knob"]["value"] == 3  # the encode box's split follows the same step
    at = _step_to(at, 50)  # a link made for a longer training
    assert _steps(at)["knob"]["value"] == 10
    at.session_state[state.durable_key("tok_merge_step")] = "x"  # a tampered value: the default, with a note
    at.run()
    assert not at.exception
    assert _steps(at)["knob"]["value"] == 0


def test_more_merges_than_possible_stops_early_with_a_note() -> None:
    at = _open()
    at.number_input(key="tok_num_merges").set_value(100).run()
    assert_clean(at)
    assert any("stopped after 15" in i.value for i in at.info), [i.value for i in at.info]
    assert len(_steps(at)["merges"]) == 15


def test_gpt_mode_has_byte_tokens_and_leading_spaces() -> None:
    at = _open()
    at.radio(key="tok_mode").set_value("gpt").run()
    assert_clean(at)
    data = _steps(at)
    assert len(data["bytes"]) == 256 and data["special"] == ["<|endoftext|>"]
    assert any(word.startswith("␣") for word, _, _ in data["words"])  # gpt words keep their leading space
    assert data["show"][" "] == "␣"


def test_a_new_corpus_retrains_and_resets_the_view() -> None:
    at = _step_to(_open(), 4)
    scope = _steps(at)["knob"]["scope"]
    at.text_area(key="tok_corpus").set_value("aaa aaa bbb").run()
    assert_clean(at)
    data = _steps(at)
    assert _merge_lines(data, 1) == [("a", "a", "aa", 4)]  # "aaa" twice: (a,a) occurs 2 × 2 times
    assert data["knob"]["scope"] != scope  # the browser starts this corpus from the server's step


def test_preset_switches_the_corpus_in_both_languages(lang: str) -> None:
    at = _step_to(_open(lang), 3)
    at.selectbox(key="tok_corpus_preset").set_value("chinese").run()
    assert_clean(at)
    assert "首都" in at.text_area(key="tok_corpus").value
    assert _steps(at)["knob"]["value"] == 0  # a preset starts from step 0
    at.radio(key="tok_mode").set_value("gpt").run()
    assert_clean(at)
    assert _steps(at)["merges"]


@pytest.mark.parametrize("bad", ["", "   \n  ", "\x00\x01\x02"])
def test_empty_or_control_only_corpus_gets_a_message(bad: str, lang: str) -> None:
    at = _open(lang)
    at.text_area(key="tok_corpus").set_value(bad).run()
    assert not at.exception
    assert at.warning, "no message for an empty corpus"
    assert "steps" not in _parts(at)


def test_html_in_the_corpus_stays_text() -> None:
    at = _open()
    at.text_area(key="tok_corpus").set_value("<b>bold</b> <b>bold</b> <script>x</script>").run()
    assert_clean(at)
    for block in at.markdown:
        # Any angle bracket of user text sits inside a code span, never as markup.
        for line in str(block.value).splitlines():
            outside = "".join(part for i, part in enumerate(line.split("`")) if i % 2 == 0)
            assert "<b>" not in outside and "<script" not in outside, line
    # The component gets the words as data (it writes them with textContent: e2e checks no <b> appears).
    assert "<b>bold</b>" in [w for w, _, _ in _steps(at)["words"]]


def test_upload_replaces_the_box_and_bad_files_get_a_message(lang: str) -> None:
    at = _open(lang)
    at.file_uploader(key="tok_upload").set_value(("story.txt", ("hug " * 50 + "pug " * 20).encode(), "text/plain")).run()
    assert_clean(at)
    assert any("story.txt" in i.value for i in at.info)
    assert _merge_lines(_steps(at), 1) == [("u", "g", "ug", 70)]
    for name, data in (("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00"), ("latin1.txt", b"caf\xe9 au lait"),
                       ("huge.txt", b"a " * (1024 * 1024 + 1))):
        at.file_uploader(key="tok_upload").set_value((name, data, "text/plain")).run()
        assert not at.exception, name
        assert at.warning, f"no message for {name}"
    at.file_uploader(key="tok_upload").set_value(None).run()
    assert_clean(at)
    assert at.text_area(key="tok_corpus").value == SEEDS


def test_encode_box_changes_with_the_word() -> None:
    at = _step_to(_open(), 4)
    at.text_input(key="tok_encode_word").set_value("newer lowest").run()
    assert_clean(at)
    encode = _parts(at)["encode"]
    assert encode["encode"] == [["newer", ["n", "e", "w", "e", "r", "</w>"]],
                                ["lowest", ["l", "o", "w", "e", "s", "t", "</w>"]]]
    assert encode["knob"]["value"] == 4
    at.text_input(key="tok_encode_word").set_value("  ").run()
    assert_clean(at)
    assert "encode" not in _parts(at)


def test_corpus_and_step_survive_a_page_change() -> None:
    at = _step_to(_open(), 4)
    at.switch_page("app.py").run()
    at.switch_page("pages/tokenization.py").run()
    assert_clean(at)
    assert _steps(at)["knob"]["value"] == 4


# --- Part 2: the live model's tokenizer ---------------------------------------------------


def test_model_tokenizer_follows_the_sidebar_prompt(lang: str) -> None:
    at = _open(lang, prompt="法国的首都是")
    assert at.text_area(key="tok_model_text").value == "法国的首都是"
    metrics = {m.label: m.value for m in at.metric}
    chars = "Characters" if lang == "en" else "字符数"
    assert metrics[chars] == "6"
    tokens = "Tokens" if lang == "en" else "Token 数"
    assert 1 <= int(metrics[tokens]) <= 6
    assert any("[" in c.value and "]" in c.value for c in at.caption)  # the ids line


def test_quirk_buttons_load_examples_with_live_notes(lang: str) -> None:
    at = _open(lang)
    at.button(key="tok_quirk_strawberry").click().run()
    assert_clean(at)
    assert "strawberry" in at.text_area(key="tok_model_text").value
    assert any("strawberry" in i.value for i in at.info)
    at.button(key="tok_quirk_numbers").click().run()
    assert_clean(at)
    note = " ".join(i.value for i in at.info)
    assert "9.11 →" in note and "`9`" in note
    at.button(key="tok_quirk_languages").click().run()
    assert_clean(at)
    table = markdown_tables(at)[-2]  # per-line costs (the last table is the vocabulary one)
    assert len(table) == 2 and all(int(list(row.values())[2]) > 0 for row in table)  # its token counts
    at.button(key="tok_quirk_sidebar").click().run()
    assert at.text_area(key="tok_model_text").value == at.session_state["prompt"]


def test_model_text_problems_get_a_message() -> None:
    at = _open()
    for bad in ("", "x" * 5000):
        at.text_area(key="tok_model_text").set_value(bad).run()
        assert not at.exception
        assert at.warning


def test_vocab_explainer_uses_the_live_model() -> None:
    at = _open()
    metrics = {m.label: m.value for m in at.metric}
    sizes = [m.value for m in at.metric if m.label == "Vocabulary size"]
    assert len(sizes) == 1  # the model's (Part 1's BPE vocabulary is drawn by the browser)
    vocab = int(sizes[0].replace(",", ""))
    d_model = int(metrics["d_model"])
    assert int(metrics["Embedding matrix (vocab × d_model)"].replace(",", "")) == vocab * d_model
    assert metrics["Share of the model's parameters"].endswith("%")


def test_switching_language_keeps_the_page_state() -> None:
    at = _step_to(_open("en"), 4)
    at.radio(key="tok_mode").set_value("gpt").run()
    at.selectbox(key="w_lang").set_value("zh").run()
    assert_clean(at)
    assert at.selectbox(key="tok_corpus_preset").value == "seeds"
    assert at.radio(key="tok_mode").value == "gpt"
    data = _steps(at)
    assert data["knob"]["value"] == 4
    assert data["labels"]["slider"] == load_strings("zh")["tokenization.step.slider"]
    assert "分词" in at.title[0].value


def test_both_builtin_models_work() -> None:
    at = _open()
    at.selectbox(key="w_model").set_value("modern").run()
    assert_clean(at)
    assert "modern" in " ".join(str(c.value) for c in at.caption) + str(markdown_tables(at)[-1])


def test_word_chips_and_encoded_word_show_each_tokens_vocabulary_id(lang: str) -> None:
    at = _open(lang)
    # 11 base symbols (ids 0-10), then the merges in order: lo 11, low 12, es 13, est 14.
    expected = {"low": 12, "est": 14, "</w>": 10, "e": 3, "r": 4}
    for part, tokens in (("steps", expected), ("encode", ("low", "est", "</w>", "e"))):  # encode: "lowest"'s
        ids = _parts(at)[part]["ids"]
        for token in tokens:
            assert ids[token] == expected[token], (part, token, ids)


def test_the_pair_caption_names_the_winner_of_the_corpus_shown(lang: str) -> None:
    """The caption under the pair counts names this corpus's winning pair and count (the
    browser fills the template with the pair marked "chosen")."""
    at = _open(lang)
    at.selectbox(key="tok_corpus_preset").set_value("chinese").run()
    data = _steps(at)
    left, right, count, status = data["merges"][0]["pairs"][0]
    assert status == "chosen" and (left, right) != ("l", "o")
    assert (left, right, count) == (data["merges"][0]["left"], data["merges"][0]["right"], data["merges"][0]["count"])
    assert "{left}" in data["labels"]["tie_rule"] and "{count}" in data["labels"]["tie_rule"]
