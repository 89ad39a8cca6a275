"""Issue 44's "forgotten values" and "words": controls and tabs that survive a page change, links
that carry what the student did (and no untouched value), wording at the edges."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.lessons import attention_math as am
from tests.app.components import component_data, press
from tests.app.conftest import APP, open_page
from ui import state
from ui.i18n import load_strings
from ui.sections import embeddings


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _away_and_back(at: AppTest, page: str) -> None:
    at.switch_page("pages/tokenization.py" if page != "tokenization" else "pages/embeddings.py").run()
    at.switch_page(f"pages/{page}.py").run()
    assert_clean(at)


def test_embeddings_context_survives_a_page_change() -> None:
    # The map's two toggles answer in the browser (ui.components.space3d views): their page
    # change and link are tested in Chromium (tests/e2e/test_embeddings.py).
    at = open_page("embeddings")
    at.text_input(key="embeddings_context_a").set_value("The bank of the river is").run()
    at.text_input(key="embeddings_context_word").set_value("bank").run()
    assert_clean(at)
    _away_and_back(at, "embeddings")
    assert at.text_input(key="embeddings_context_a").value == "The bank of the river is"
    assert at.text_input(key="embeddings_context_word").value == "bank"
    assert dict(at.query_params).get("embeddings_context_word") == "bank"


def test_embeddings_context_example_fills_the_fields_and_stays_out_of_the_link() -> None:
    assert embeddings.CONTEXT_PRESETS == state.EMBEDDINGS_CONTEXT_PRESETS
    at = open_page("embeddings", lang="zh")
    strings = load_strings("zh")
    assert at.text_input(key="embeddings_context_word").value == strings["embeddings.context.capital.word"]
    at.selectbox(key="embeddings_context_preset").set_value("coref").run()
    assert_clean(at)
    assert at.text_input(key="embeddings_context_a").value == strings["embeddings.context.coref.a"]
    assert at.text_input(key="embeddings_context_word").value == strings["embeddings.context.coref.word"]
    params = dict(at.query_params)
    assert params.get("embeddings_context_preset") == "coref"
    assert not {"embeddings_context_a", "embeddings_context_b", "embeddings_context_word"} & params.keys(), params


def test_chosen_tabs_survive_a_page_change_and_a_language_switch() -> None:
    for page, name, first, tab_id in (("self_attention", "sa_tab", "steps", "dk"),
                                      ("tokenization", "tok_tab", "bpe", "model")):
        label_key = f"{page}.tab.{tab_id}"
        at = open_page(page)
        assert at.session_state[name] == load_strings("en")[f"{page}.tab.{first}"]
        at.session_state[state.durable_key(name)] = tab_id  # what the tab's on_change stores
        at.run()
        _away_and_back(at, page)
        assert at.session_state[name] == load_strings("en")[label_key]
        assert dict(at.query_params).get(name) == tab_id
        at.selectbox(key="w_lang").set_value("zh").run()
        assert_clean(at)
        assert at.session_state[name] == load_strings("zh")[label_key]


def test_a_crafted_tab_label_falls_back_with_a_note() -> None:
    at = open_page("self_attention")
    at.session_state[state.durable_key("sa_tab")] = "../../etc"
    at.run()
    assert_clean(at)
    assert at.session_state[state.durable_key("sa_tab")] == "steps"
    assert at.toast, "no note for the crafted tab"


def test_self_attention_link_leaves_the_cases_scores_out() -> None:
    # The lab answers in the browser (ui.components.lessons): the page sends the first case's
    # scores as the default, which the browser leaves out of the link (tests/e2e/test_lesson_knobs.py).
    at = open_page("self_attention")
    assert "sa_lab_scores" not in dict(at.query_params)
    data = component_data(at, "sa_lab")
    knobs = {k["name"]: k for k in data["knobs"]}
    assert data["cases"][0]["name"] == am.SEED_SOFTMAX_CASES[0][0]
    assert knobs["sa_lab_scores"]["value"] == knobs["sa_lab_scores"]["default"] == data["cases"][0]["scores"]
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params.update({"sa_lab_scores": "1, 2, 3"})
    fresh.run()
    fresh.switch_page("pages/self_attention.py").run()
    assert_clean(fresh)
    assert {k["name"]: k for k in component_data(fresh, "sa_lab")["knobs"]}["sa_lab_scores"]["value"] == "1, 2, 3"


def test_generation_link_carries_the_steps_not_the_calculator() -> None:
    at = open_page("generation")
    assert not [k for k in dict(at.query_params) if k.startswith("generation_")], dict(at.query_params)
    for _ in range(2):  # Next token: the preview component's button (ui.components.sampling_lab)
        shown = {k["name"]: k["value"] for k in component_data(at, "generation_knobs")["knobs"]}
        press(at, "generation_knobs", {"kind": "next", "knobs": shown})
    assert_clean(at)
    params = dict(at.query_params)
    assert params.get("generation_steps") == "2"
    assert not [k for k in params if k.startswith("generation_kv")], params
    text = [c.value for c in at.text]
    # The link opens a new session with the same two tokens generated again.
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params.update(params)
    fresh.run()
    fresh.switch_page("pages/generation.py").run()
    assert_clean(fresh)
    assert len(fresh.session_state["gen_steps"]) == 2
    assert text and [c.value for c in fresh.text][:1] == text[:1]
    shown = {k["name"]: k["value"] for k in component_data(fresh, "generation_knobs")["knobs"]}
    press(fresh, "generation_knobs", {"kind": "reset", "knobs": shown})
    assert "generation_steps" not in dict(fresh.query_params)


def test_tokenization_caption_at_step_zero_says_no_merge_yet() -> None:
    # The step's caption is drawn in the browser (ui.components.bpe_steps, bpe_steps.ts picks
    # "curve_caption_start" at step 0): the page sends both wordings, the start one in 中文 too.
    for lang, words in (("en", "Before any merge"), ("zh", None)):
        at = open_page("tokenization", lang=lang)
        labels = component_data(at, "tok_bpe_steps")["labels"]
        start = labels["curve_caption_start"]
        assert start == load_strings(lang)["tokenization.curve.caption_start"]
        assert start != labels["curve_caption"]
        if words:
            assert words in start and "at this step" not in start
