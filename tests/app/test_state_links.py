"""The one state layer (ui/state): declared values, crafted values, page changes and view links."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, open_page, overview_svg
from tests.app.lesson_components import lesson_components
from ui import page as ui_page
from ui import state
from ui.i18n import load_strings, translate

PAGES = ("tokenization", "embeddings", "positional_encoding", "self_attention", "multi_head_attention",
         "logits_sampling", "generation", "transformer_block", "whole_model")
# Bound only for a RoPE model (the "modern" preset); every other control is bound on its page's first run.
ROPE_ONLY = {"pe_rope_layer", "pe_rope_head"}
# Bound only once a page has something to show them for.
CONDITIONAL = {"tok_merge_step"}
RESET_MARK = {"en": "reset to its default", "zh": "已恢复为默认值"}
CANDIDATES: tuple[Any, ...] = ("../../../etc/passwd", 10**12, -7, 3.7, None, {"x": 1}, float("nan"), "x" * 300_000)


def _bad_value(spec: state.Spec) -> Any:
    """The first crafted value this declared check refuses."""
    for value in CANDIDATES:
        try:
            spec.check(value)
        except (state.Invalid, TypeError, ValueError, OverflowError):
            return value
    raise AssertionError(f"{spec.name} accepts every crafted value")


def assert_clean(at: AppTest) -> None:
    """No exception (missing translations are the job of each page's own tests)."""
    assert not at.exception, [e.value for e in at.exception]


def _toasts(at: AppTest) -> list[str]:
    return [str(t.value) for t in at.toast]


def test_every_declared_label_is_translated() -> None:
    for lang in ("en", "zh"):
        strings = load_strings(lang)
        missing = [s.name for s in state.SPECS.values() if s.label not in strings]
        assert not missing, (lang, missing)


def test_every_declared_default_passes_its_own_check() -> None:
    for spec in state.SPECS.values():
        for lang in ("en", "zh"):
            default = spec.default_for(lang)
            if default is None and spec.name in {"pe_pairs", "pe_rope_pairs"}:
                continue  # the page passes the default (it depends on d_model)
            assert spec.check(default) == default, spec.name


def test_url_round_trip_of_every_declared_value() -> None:
    for spec in state.SPECS.values():
        default = spec.default_for("en")
        if default is None:
            continue
        assert spec.check(spec.parse(spec.dump(default))) == default, spec.name


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_crafted_sidebar_values_fall_back_with_a_note(lang: str) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["lang"] = lang
    for spec in state.SPECS.values():
        if spec.pages is None and spec.name != state.LANG:
            at.session_state[spec.durable] = _bad_value(spec)
    at.run()
    assert_clean(at)
    assert at.session_state["model"] == "classic"
    assert at.session_state["seed"] == 0
    assert at.session_state["prompt"] == state.DEFAULT_PROMPTS[lang]
    toasts = _toasts(at)
    assert len(toasts) >= 3 and all(RESET_MARK[lang] in t for t in toasts), toasts
    # The page still works: choose a model again.
    at.selectbox(key="w_model").set_value("modern").run()
    assert_clean(at)
    assert at.session_state["model"] == "modern"


def test_a_crafted_language_falls_back() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["lang"] = "../xx"
    at.run()
    assert_clean(at)
    assert at.session_state["lang"] == "en"


@pytest.mark.parametrize("page", PAGES)
def test_crafted_page_values_fall_back_with_a_note(page: str) -> None:
    lang = "zh" if page in ("embeddings", "self_attention", "generation") else "en"
    at = open_page(None, lang=lang)
    if page == "positional_encoding":
        at.session_state["model"] = "modern"
    specs = [s for s in state.SPECS.values() if s.pages is not None and page in s.pages]
    assert specs, page
    for spec in specs:
        at.session_state[spec.durable] = _bad_value(spec)
    at.switch_page(f"pages/{page}.py").run()
    assert_clean(at)
    checked = [s for s in specs if s.name not in CONDITIONAL]
    for spec in checked:
        value = at.session_state[spec.durable]
        try:
            spec.check(value)  # now a valid value (the default, or what the page passes as one)
        except state.Invalid as err:
            raise AssertionError(f"{spec.name} kept a crafted value") from err
    assert _toasts(at), "no note for the crafted values"
    assert all(RESET_MARK[lang] in t for t in _toasts(at)), _toasts(at)
    at.run()  # still works on the next run, no new notes
    assert_clean(at)


def test_commit_refuses_values_no_option_offers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A crafted websocket message calls on_change with any value: the durable key stays valid."""
    session: dict[str, Any] = {"lang": "en", "model": "modern"}
    monkeypatch.setattr(st, "session_state", session)
    for name, bad in (("model", "../../secret"), ("lang", "xx"), ("seed", -1), ("pe_d_model", 7),
                      ("pe_base", 12345), ("generation_kv_dtype", "fp1"), ("generation_kv_preset", "nope"),
                      ("tok_mode", ["classic"]), ("mha_scores", "yes"), ("embeddings_lab_rows", [[1]])):
        spec = state.SPECS[name]
        session[spec.widget] = bad
        state.commit(name)()
        assert spec.check(session[spec.durable]) == session[spec.durable], name
    assert session["model"] == "classic"  # back to the default, not the crafted name
    assert len(session["_state_notes"]) >= 9


def test_commit_refuses_an_option_the_widget_did_not_offer(monkeypatch: pytest.MonkeyPatch) -> None:
    session: dict[str, Any] = {"lang": "en", "_state_limits": {"mha_layer": state.Limit(options=(0, 1, 2, 3))}}
    monkeypatch.setattr(st, "session_state", session)
    session["mha_layer"] = 9  # valid for some model, but not among this widget's options
    state.commit("mha_layer")()
    assert session["kept.mha_layer"] == 0
    assert session["_state_notes"] == ["multi_head_attention.layer"]


def test_crafted_prompt_preset_keeps_the_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    session: dict[str, Any] = {"lang": "en", "prompt": "my text", "w_preset_en": "../../etc/passwd"}
    monkeypatch.setattr(st, "session_state", session)
    ui_page._on_preset_change()
    assert session["prompt"] == "my text"
    assert session["_state_notes"] == ["sidebar.preset"]


# --- page changes keep every control ---------------------------------------------------------------

SETTINGS: tuple[tuple[str, str, str, Any], ...] = (
    # page, widget kind, widget key, a value that is not the default
    # mha_scores, mha_grid: switches drawn in the browser now (ui.components.mha_heads; tests/e2e).
    # pe_d_model, pe_position, sa_scale, sa_mask: knobs drawn in the browser now (ui.components.lessons);
    # tests/e2e/test_state_links.py and test_lesson_knobs.py keep them across page changes.
    ("self_attention", "text_input", "sa_tokens", "I like cats"),
    ("self_attention", "slider", "sa_dk", 64),
    ("embeddings", "toggle", "embeddings_lab_normalise", True),
    ("embeddings", "slider", "embeddings_nn_k", 5),
    # logits_sampling_top_n, logits_sampling_n_samples and the sampling knobs: drawn in the browser
    # now (tests/e2e/test_sampling_knobs.py keeps them across page changes).
    ("generation", "slider", "generation_max_new", 7),
    ("tokenization", "number_input", "tok_num_merges", 20),
    ("tokenization", "radio", "tok_mode", "gpt"),
    ("transformer_block", "slider", "tb_grad_depth", 20),
    ("transformer_block", "text_input", "tb_norm_x", "1, 2, 3"),
)
# The parameter counter and the KV-cache memory calculator are browser components now
# (ui.components.calculators): tests/app/test_whole_model.py, test_generation.py and
# tests/e2e/test_calculators.py keep their values across page changes and links.


@pytest.mark.parametrize("page", sorted({s[0] for s in SETTINGS}))
def test_page_controls_survive_a_page_change(page: str) -> None:
    at = open_page(page)
    mine = [s for s in SETTINGS if s[0] == page]
    for _, kind, key, value in mine:
        getattr(at, kind)(key=key).set_value(value).run()
        assert_clean(at)
    at.switch_page("app.py").run()
    at.switch_page(f"pages/{page}.py").run()
    assert_clean(at)
    for _, kind, key, value in mine:
        assert getattr(at, kind)(key=key).value == value, key


def test_generated_text_survives_a_page_change() -> None:
    from tests.app.components import press

    at = open_page("generation")
    press(at, "generation_knobs", {"kind": "next", "knobs": {}})  # Next token (a component button)
    press(at, "generation_knobs", {"kind": "next", "knobs": {}})
    steps = list(at.session_state["gen_steps"])
    assert len(steps) == 2
    at.switch_page("pages/tokenization.py").run()
    at.switch_page("pages/generation.py").run()
    assert_clean(at)
    assert at.session_state["gen_steps"] == steps


# --- the view as a link ------------------------------------------------------------------------------


def test_link_values_open_the_same_view() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": "zh", "prompt": "日本的首都是", "model": "modern", "seed": "7",
                            "mha_layer": "1", "mha_scores": "1"})
    at.run()
    assert_clean(at)
    assert (at.session_state["lang"], at.session_state["prompt"], at.session_state["model"],
            at.session_state["seed"]) == ("zh", "日本的首都是", "modern", 7)
    assert not _toasts(at)
    at.switch_page("pages/multi_head_attention.py").run()
    assert_clean(at)
    assert at.session_state[state.durable_key("mha_layer")] == 1  # the browser's head picker starts there
    assert at.session_state[state.durable_key("mha_scores")] is True  # the browser's scores switch starts on


def test_tampered_link_values_fall_back_with_a_note() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"lang": "../../x", "model": "../../etc/passwd", "seed": "-1", "pe_d_model": "7",
                            "pe_base": "3", "mha_layer": "1e9", "embeddings_lab_rows": "[[1,2]]",
                            "unknown": "ignored"})
    at.run()
    assert_clean(at)
    assert (at.session_state["lang"], at.session_state["model"], at.session_state["seed"]) == ("en", "classic", 0)
    assert len(_toasts(at)) >= 6
    at.switch_page("pages/positional_encoding.py").run()
    assert_clean(at)
    assert lesson_components(at)["pe_table"]["knobs"]["pe_d_model"] == 8


def test_the_address_carries_the_view_and_leaves_defaults_out() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert dict(at.query_params) == {}  # all defaults: a bare address
    at.selectbox(key="w_model").set_value("modern").run()
    at.number_input(key="w_seed").set_value(5).run()
    assert dict(at.query_params) == {"model": "modern", "seed": "5"}
    at.switch_page("pages/self_attention.py").run()
    at.slider(key="sa_dk").set_value(16).run()
    assert dict(at.query_params) == {"model": "modern", "seed": "5", "sa_dk": "16"}
    assert at.sidebar.get("iframe"), "no link control in the sidebar"
    at.slider(key="sa_dk").set_value(128).run()  # back to the default: out of the link
    assert "sa_dk" not in dict(at.query_params)
    at.switch_page("app.py").run()
    assert dict(at.query_params) == {"model": "modern", "seed": "5"}  # another page: its own controls only


def test_a_run_writes_the_address_once_not_once_per_control(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bound control used to rebuild and compare the whole link (20 times a Self-attention
    run); now ``setup`` syncs once and a control only when its own value or default moved."""
    at = open_page("self_attention")
    calls: list[int] = []
    original = state.sync_url

    def counting() -> None:
        calls.append(1)
        original()

    monkeypatch.setattr(state, "sync_url", counting)
    at.run()
    assert_clean(at)
    assert len(calls) <= 2, len(calls)
    calls.clear()
    at.slider(key="sa_dk").set_value(16).run()  # a fragment's control: the address follows it
    assert_clean(at)
    assert dict(at.query_params).get("sa_dk") == "16"
    assert 1 <= len(calls) <= 3, len(calls)


def test_a_value_a_page_puts_reaches_the_address() -> None:
    at = open_page("embeddings")
    state_key = state.durable_key("embeddings_lab_normalise")
    default = at.session_state[state_key]
    at.toggle(key="embeddings_lab_normalise").set_value(not default).run()
    assert dict(at.query_params).get("embeddings_lab_normalise") == ("0" if default else "1")
    at.toggle(key="embeddings_lab_normalise").set_value(default).run()  # the default again: out of the link
    assert "embeddings_lab_normalise" not in dict(at.query_params)


def test_overview_boxes_carry_the_view() -> None:
    at = open_page(None, prompt="The capital of Japan is")
    at.selectbox(key="w_model").set_value("modern").run()
    root = ET.fromstring(overview_svg(at))
    hrefs = [a.get("href") for a in root.iter("{http://www.w3.org/2000/svg}a")]
    assert "./tokenization?prompt=The+capital+of+Japan+is&model=modern" in hrefs


def test_a_chinese_browser_gets_the_chinese_default_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "_browser_locale", lambda: "zh-CN")
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert_clean(at)
    assert at.session_state["lang"] == "zh"
    assert at.session_state["prompt"] == "法国的首都是"
    # The language is in the link (a student with an English browser opens it in 中文 too);
    # the prompt is that language's default, so it stays out.
    assert dict(at.query_params) == {"lang": "zh"}


def test_the_default_prompt_follows_a_language_switch_unless_typed() -> None:
    at = open_page(None, lang="en")
    at.selectbox(key="w_lang").set_value("zh").run()
    assert at.session_state["prompt"] == "法国的首都是"
    at.text_area(key="w_prompt").set_value("my own words").run()
    at.selectbox(key="w_lang").set_value("en").run()
    assert at.session_state["prompt"] == "my own words"
