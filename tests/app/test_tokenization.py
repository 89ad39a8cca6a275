"""The tokenization page in AppTest: BPE stepping on the seeds' corpus, uploads, the model's tokenizer."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import (
    assert_clean, chart_title, markdown_tables, open_page, vega_charts_by_place, vega_spec,
)

SEEDS = "low low low low low lower lower newest newest newest widest widest widest"


def _open(lang: str = "en", prompt: str | None = None) -> AppTest:
    at = open_page("tokenization", lang=lang, prompt=prompt)
    assert_clean(at)
    return at


def _markdown(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.markdown)


def _captions(at: AppTest) -> str:
    return "\n".join(str(c.value) for c in at.caption)


def _step_to(at: AppTest, n: int) -> AppTest:
    at.slider(key="tok_merge_step").set_value(n).run()
    assert_clean(at)
    return at


def test_renders_in_both_languages_with_the_seeds_corpus(lang: str) -> None:
    at = _open(lang)
    assert at.text_area(key="tok_corpus").value == SEEDS
    assert at.radio(key="tok_mode").value == "classic"
    for key in ("tok_forward", "tok_back", "tok_play", "tok_first", "tok_last"):
        assert at.button(key=key) is not None
    assert at.slider(key="tok_merge_step").value == 0
    assert at.text_input(key="tok_encode_word").value == "lowest"
    assert len(at.tabs) == 2
    charts = at.get("vega_lite_chart")
    assert len(charts) >= 3  # word chips, token-count curve, encoded word
    for chart in charts:
        spec = vega_spec(chart)
        assert spec.get("title"), "every chart has a title"
    title = "Tokenization" if lang == "en" else "分词"
    assert title in at.title[0].value


def test_forward_four_times_shows_the_seeds_merges(lang: str) -> None:
    at = _open(lang)
    for _ in range(4):
        at.button(key="tok_forward").click().run()
    assert_clean(at)
    assert at.slider(key="tok_merge_step").value == 4
    text = _markdown(at)
    for line in ("`l` + `o` → `lo` (7)", "`lo` + `w` → `low` (7)", "`e` + `s` → `es` (6)", "`es` + `t` → `est` (6)"):
        assert line in text, line
    assert "`l` `o` `w` `e` `r` `n` `s` `t` `i` `d` `</w>`" in text  # the 11 base symbols
    assert [m.value for m in at.metric if m.label in ("Vocabulary size", "词表大小")][0] == "15"
    summary = "11 base symbols + 4 merged tokens = 15" if lang == "en" else "11 个基础符号 + 4 个合并 token = 15"
    assert summary in _captions(at)
    # The encode box: a new word, split with the merges learned so far.
    assert "`lowest` → `low` + `est` + `</w>`" in text


def test_pair_table_before_merge_one_marks_the_tie() -> None:
    at = _step_to(_open(), 1)
    first, second = markdown_tables(at)[0][:2]
    assert (first["Left"], first["Right"], first["Count"]) == ("l", "o", "7")
    assert "merged" in first["Result"]
    assert (second["Left"], second["Right"], second["Count"]) == ("o", "w", "7")
    assert "tie" in second["Result"]
    table = next(m.value for m in at.markdown if m.value.startswith("| Left"))
    assert "| **l** | **o** | **7** |" in table and "| *o* | *w* | *7* |" in table  # merged bold, tie italic
    assert "Tie rule" in _captions(at)


def test_back_first_and_last_buttons() -> None:
    at = _step_to(_open(), 3)
    at.button(key="tok_back").click().run()
    assert at.slider(key="tok_merge_step").value == 2
    at.button(key="tok_last").click().run()
    last = at.slider(key="tok_merge_step").value
    assert last == 10  # the default number of merges
    assert "Merge 10 of 10" in _markdown(at)
    at.button(key="tok_first").click().run()
    assert at.slider(key="tok_merge_step").value == 0
    assert_clean(at)


def test_play_advances_to_the_last_step_and_stops() -> None:
    at = _open()
    at.number_input(key="tok_num_merges").set_value(3).run()
    at.button(key="tok_play").click().run(timeout=60)
    assert_clean(at)
    assert at.slider(key="tok_merge_step").value == 3
    assert at.session_state["tok_playing"] is False
    assert at.button(key="tok_play").label.endswith("Play")


def test_more_merges_than_possible_stops_early_with_a_note() -> None:
    at = _open()
    at.number_input(key="tok_num_merges").set_value(100).run()
    assert_clean(at)
    assert any("stopped after 15" in i.value for i in at.info), [i.value for i in at.info]
    at.button(key="tok_last").click().run()
    assert at.slider(key="tok_merge_step").value == 15


def test_gpt_mode_has_byte_tokens_and_leading_spaces() -> None:
    at = _open()
    at.radio(key="tok_mode").set_value("gpt").run()
    assert_clean(at)
    at.button(key="tok_forward").click().run()
    text = _markdown(at)
    assert "256 byte tokens" in text
    assert "`<|endoftext|>`" in text
    assert "␣" in text  # gpt words keep their leading space, shown as ␣


def test_a_new_corpus_retrains_and_resets_the_view() -> None:
    at = _open()
    at.text_area(key="tok_corpus").set_value("aaa aaa bbb").run()
    assert_clean(at)
    at.button(key="tok_forward").click().run()
    assert "`a` + `a` → `aa` (4)" in _markdown(at)  # "aaa" twice: (a,a) occurs 2 × 2 times


def test_preset_switches_the_corpus_in_both_languages(lang: str) -> None:
    at = _open(lang)
    at.selectbox(key="tok_corpus_preset").set_value("chinese").run()
    assert_clean(at)
    assert "首都" in at.text_area(key="tok_corpus").value
    at.radio(key="tok_mode").set_value("gpt").run()
    at.button(key="tok_forward").click().run()
    assert_clean(at)


@pytest.mark.parametrize("bad", ["", "   \n  ", "\x00\x01\x02"])
def test_empty_or_control_only_corpus_gets_a_message(bad: str, lang: str) -> None:
    at = _open(lang)
    at.text_area(key="tok_corpus").set_value(bad).run()
    assert not at.exception
    assert at.warning, "no message for an empty corpus"


def test_html_in_the_corpus_stays_text() -> None:
    at = _open()
    at.text_area(key="tok_corpus").set_value("<b>bold</b> <b>bold</b> <script>x</script>").run()
    assert_clean(at)
    at.button(key="tok_last").click().run()
    assert_clean(at)
    for block in at.markdown:
        # Any angle bracket of user text sits inside a code span, never as markup.
        for line in str(block.value).splitlines():
            outside = "".join(part for i, part in enumerate(line.split("`")) if i % 2 == 0)
            assert "<b>" not in outside and "<script" not in outside, line


def test_upload_replaces_the_box_and_bad_files_get_a_message(lang: str) -> None:
    at = _open(lang)
    at.file_uploader(key="tok_upload").set_value(("story.txt", ("hug " * 50 + "pug " * 20).encode(), "text/plain")).run()
    assert_clean(at)
    assert any("story.txt" in i.value for i in at.info)
    at.button(key="tok_forward").click().run()
    assert "`u` + `g` → `ug` (70)" in _markdown(at)
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
    text = _markdown(at)
    assert "`newer` →" in text and "`lowest` → `low` + `est` + `</w>`" in text


def test_corpus_and_step_survive_a_page_change() -> None:
    at = _step_to(_open(), 4)
    at.switch_page("app.py").run()
    at.switch_page("pages/tokenization.py").run()
    assert_clean(at)
    assert at.slider(key="tok_merge_step").value == 4


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
    assert len(sizes) == 2  # Part 1's BPE vocabulary and the model's
    vocab = int(sizes[1].replace(",", ""))
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
    assert at.slider(key="tok_merge_step").value == 4
    assert "分词" in at.title[0].value


def test_both_builtin_models_work() -> None:
    at = _open()
    at.selectbox(key="w_model").set_value("modern").run()
    assert_clean(at)
    assert "modern" in " ".join(str(c.value) for c in at.caption) + str(markdown_tables(at)[-1])


def test_word_chips_and_encoded_word_show_each_tokens_vocabulary_id(lang: str) -> None:
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    from ui.i18n import load_strings

    at = _open(lang)
    for _ in range(4):
        at.button(key="tok_forward").click().run()
    assert_clean(at)
    id_title = load_strings(lang)["tokenization.vocab_id"]
    # 11 base symbols (ids 0-10), then the merges in order: lo 11, low 12, es 13, est 14.
    expected = {"low": "12", "est": "14", "</w>": "10", "e": "3", "r": "4"}
    seen: dict[str, str] = {}
    with_id = 0
    for chart in at.get("vega_lite_chart"):
        spec = vega_spec(chart)
        tooltips = [t for layer in spec.get("layer", []) for t in layer.get("encoding", {}).get("tooltip", [])]
        if id_title not in [t.get("title") for t in tooltips]:
            continue
        with_id += 1
        for dataset in chart.proto.datasets:
            frame = convert_arrow_bytes_to_pandas_df(dataset.data.data)
            seen.update(zip(frame["full"], frame["detail_0"]))
    assert with_id == 2  # the corpus's word chips and the encoded word
    for token, i in expected.items():
        assert seen[token] == i, (token, seen)


def test_the_pair_caption_names_the_winner_of_the_corpus_shown(lang: str) -> None:
    """The caption under the pair counts explained (l, o) even on the Chinese corpus: it names
    this corpus's winning pair and count (the (l, o) example is marked as the classic corpus')."""
    at = _open(lang)
    at.selectbox(key="tok_corpus_preset").set_value("chinese").run()
    at = _step_to(at, 1)
    first = markdown_tables(at)[0][0]
    left, right, count = list(first.values())[:3]
    assert (left, right) != ("l", "o")
    winner = f"({left}, {right})"
    captions = _captions(at)
    assert winner in captions and count in captions[captions.index(winner):], (winner, count, captions)


def test_a_merge_step_changes_the_charts_data_not_their_specs() -> None:
    """The merge slider: every chart (chips, curve, encoded word) keeps its place and its spec
    text from step to step (a ties note may come and go above them), so the browser swaps the
    data into the charts it has; titles and the curve's marked step travel as data."""
    at = _open("en")
    seen = {}
    for step in (0, 1, 4, 2, 6):
        _step_to(at, step)
        seen[step] = vega_charts_by_place(at)
    places = list(seen[0])
    assert len(places) >= 3 and all(list(charts) == places for charts in seen.values())
    for place in places:
        assert len({charts[place].proto.spec for charts in seen.values()}) == 1, place
    for step, charts in seen.items():  # the chips' title names the step
        assert f"after {step} merges" in chart_title(vega_spec(charts[places[0]]))
    curve = next(p for p in places if any(q.get("name") == "current" for q in vega_spec(seen[0][p]).get("params", [])))
    current = {step: {q["name"]: q["value"] for q in vega_spec(charts[curve])["params"]}["current"]
               for step, charts in seen.items()}
    assert current == {step: step for step in seen}
