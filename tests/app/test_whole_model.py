"""Whole-model page: both languages, the calculator's presets and its bad-input handling.

The calculator answers in the browser (ui.components.calculators): here, what the server sends it
(presets, the durable values checked, the limits); its numbers are compared with core by
tests/unit/test_calculators_math.py and on the page by tests/e2e/test_calculators.py."""

from __future__ import annotations

import dataclasses
import json

from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import pytest
from streamlit.testing.v1 import AppTest

from core.lessons.param_count import PRESETS, ArchSpec, count_parameters
from tests.app.components import component_data
from tests.app.conftest import APP, assert_clean, open_page
from tests.app.lesson_components import knob_values
from ui import state
from ui.components.calculators import WM_FIELDS

PAGE = "whole_model"


def tables_text(at) -> str:  # noqa: ANN001
    """Every table's text on the page: data frames, and Markdown tables as read (escapes dropped)."""
    frames = [d.value.to_string() for d in at.dataframe]
    markdown = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("| ")]
    return "\n".join(frames + markdown)


def _calculator(at) -> dict:  # noqa: ANN001
    """The counter's data as sent to the browser, its knobs as {name: value}."""
    data = component_data(at, "wm_calculator")
    data["knobs"] = knob_values(data["knobs"])
    return data


def _spec_of(data: dict) -> dict:
    """The config the browser starts from: every input's value (``wm_<field>``)."""
    return {f: data["knobs"][f"wm_{f}"] for f in WM_FIELDS}


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    schema = load_schema()
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert charts  # the logit-lens grid (the calculator's charts are drawn in the browser)
    for spec in charts:
        validate_jsonschema(spec, schema)
        assert spec.get("title")
    data = _calculator(at)
    assert component_data(at, "wm_layer_share")["view"] == "share"
    assert not [v for v in data["labels"].values() if "⟦" in v], "a label is missing"
    ours = data["presets"][0]
    assert ours["key"] == "__ours__" and data["knobs"]["wm_preset"] == "__ours__"
    # The browser prints ✓ when the count of our config equals sum(p.numel()) of the loaded model.
    assert count_parameters(ArchSpec(**ours["spec"])).total == int(data["ours"]["numel"])
    assert _spec_of(data) == ours["spec"]
    assert [p["key"] for p in data["presets"][1:]] == list(PRESETS)
    tables = tables_text(at)
    assert "124,439,808" in tables and "DeepSeek V4 Pro" in tables


def test_the_limits_sent_are_the_declared_ones() -> None:
    """The browser's boxes accept exactly what ui.state accepts from a link."""
    at = open_page(PAGE, lang="en")
    for field, high in _calculator(at)["limits"].items():
        assert state.SPECS[f"wm_{field}"].check(high) == high and state.SPECS[f"wm_{field}"].check(1) == 1
        for bad in (0, high + 1):
            with pytest.raises(state.Invalid):
                state.SPECS[f"wm_{field}"].check(bad)


def test_presets_exact() -> None:
    at = open_page(PAGE, lang="en")
    for preset in ("gpt2-small", "llama-7b", "llama3-8b"):
        at.session_state["kept.wm_preset"] = preset
        at.run()
        assert_clean(at)
        data = _calculator(at)
        sent = next(p for p in data["presets"] if p["key"] == preset)
        assert data["knobs"]["wm_preset"] == preset and _spec_of(data) == sent["spec"]
        assert count_parameters(ArchSpec(**sent["spec"])).total == PRESETS[preset].published == int(sent["published"])


def test_a_link_s_values_come_back_and_survive_a_page_change() -> None:
    """A link carries the preset and the changed numbers; the counter starts from them, on every visit."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update({"wm_preset": "llama-7b", "wm_n_layer": "40", "wm_bias": "1"})
    at.run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    llama = {k: v for k, v in dataclasses.asdict(PRESETS["llama-7b"].spec).items() if k != "n_shared"}
    expected = {**llama, "n_layer": 40, "bias": True}
    data = _calculator(at)
    assert data["knobs"]["wm_preset"] == "llama-7b" and _spec_of(data) == expected
    assert {"wm_preset": "llama-7b", "wm_n_layer": "40", "wm_bias": "1"}.items() <= dict(at.query_params).items()
    # The preset's own values are the defaults (they stay out of the link); the changed ones are not.
    defaults = {k["name"]: k["default"] for k in component_data(at, "wm_calculator")["knobs"]}
    assert defaults["wm_n_layer"] == 32 and defaults["wm_bias"] == 0 and defaults["wm_vocab"] == 32000
    assert "wm_vocab" not in dict(at.query_params)
    at.switch_page("app.py").run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    data = _calculator(at)
    assert data["knobs"]["wm_preset"] == "llama-7b" and _spec_of(data) == expected


def test_crafted_calculator_values_fall_back_with_a_note() -> None:
    at = open_page(None, lang="zh")
    for name, value in {"wm_preset": "../../etc/passwd", "wm_n_layer": -7, "wm_vocab": 10**12, "wm_norm": "batchnorm",
                        "wm_tied": "yes", "wm_n_experts": float("nan")}.items():
        at.session_state[f"kept.{name}"] = value
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    data = _calculator(at)
    assert data["knobs"]["wm_preset"] == "__ours__"
    assert _spec_of(data) == data["presets"][0]["spec"]  # back to our model's own config
    toasts = [str(x.value) for x in at.toast]
    assert toasts and all("已恢复为默认值" in x for x in toasts), toasts


def test_the_hand_count_says_its_magnitudes_in_the_pages_language() -> None:
    """The textbook counts in 万 (10⁴); the English page said "3,860万 + 79万 + …" in its total row."""
    tables = {}
    for lang in ("en", "zh"):
        at = open_page(PAGE, lang=lang)
        assert_clean(at)
        tables[lang] = tables_text(at)
    assert "万" not in tables["en"] and "亿" not in tables["en"]
    assert "38.6 M + 790,000 + 12 × (2.36 M + 4.72 M + 12,000)" in tables["en"]
    assert "3,860 万 + 79 万 + 12 × (236 万 + 472 万 + 1.2 万)" in tables["zh"]
