"""Whole-model page: both languages, the calculator's presets and its bad-input handling."""

from __future__ import annotations

import json

from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from core.lessons.param_count import PRESETS
from tests.app.conftest import assert_clean, open_page

PAGE = "whole_model"


def _metric(at, label: str) -> str:
    return {m.label: m.value for m in at.metric}[label]


def tables_text(at) -> str:  # noqa: ANN001
    """Every table's text on the page: data frames, and Markdown tables as read (escapes dropped)."""
    frames = [d.value.to_string() for d in at.dataframe]
    markdown = [m.value.replace("\\", "") for m in at.markdown if m.value.startswith("| ")]
    return "\n".join(frames + markdown)


def test_renders_in_both_languages(lang: str) -> None:
    at = open_page(PAGE, lang=lang)
    assert_clean(at)
    schema = load_schema()
    charts = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(charts) >= 3
    for spec in charts:
        validate_jsonschema(spec, schema)
        assert spec.get("title")
    assert at.success  # our model: counted == sum(p.numel())
    assert "✓" in at.success[0].value
    tables = tables_text(at)
    assert "124,439,808" in tables and "DeepSeek V4 Pro" in tables


def test_presets_exact() -> None:
    at = open_page(PAGE, lang="en")
    names = list(PRESETS)
    for preset, total in (("gpt2-small", "124,439,808"), ("llama-7b", "6,738,415,616"), ("llama3-8b", "8,030,261,248")):
        at.session_state["kept.wm_preset"] = preset  # (AppTest applies a format_func twice: set the state)
        at.run()
        assert_clean(at)
        assert _metric(at, "total parameters") == total
        assert "✓" in at.success[0].value


def test_editing_the_config() -> None:
    at = open_page(PAGE, lang="en")
    at.session_state["kept.wm_preset"] = "gpt2-small"
    at.run()
    prefix = "wm_"
    at.number_input(key=prefix + "n_layer").set_value(24).run()
    assert_clean(at)
    assert _metric(at, "total parameters") == f"{124_439_808 + 12 * 7_087_872:,}"
    at.number_input(key=prefix + "n_head").set_value(7).run()  # 768 is not divisible by 7
    assert_clean(at)
    assert at.warning
    at.number_input(key=prefix + "n_head").set_value(12).run()
    at.number_input(key=prefix + "n_experts").set_value(8).run()
    at.number_input(key=prefix + "n_active").set_value(2).run()
    assert_clean(at)
    assert _metric(at, "total parameters") != _metric(at, "used per token")


def test_calculator_survives_a_page_change_and_goes_into_the_link() -> None:
    at = open_page(PAGE, lang="en")
    at.session_state["kept.wm_preset"] = "llama-7b"  # (AppTest applies a format_func twice: set the state)
    at.run()
    assert _metric(at, "total parameters") == "6,738,415,616"
    at.number_input(key="wm_n_layer").set_value(40).run()
    at.checkbox(key="wm_bias").set_value(True).run()
    assert_clean(at)
    edited = _metric(at, "total parameters")
    assert edited != "6,738,415,616"
    assert {"wm_preset": "llama-7b", "wm_n_layer": "40", "wm_bias": "1"}.items() <= dict(at.query_params).items()
    at.switch_page("app.py").run()
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    assert at.selectbox(key="wm_preset").value == "llama-7b"
    assert at.number_input(key="wm_n_layer").value == 40
    assert at.checkbox(key="wm_bias").value is True
    assert _metric(at, "total parameters") == edited
    at.session_state["kept.wm_preset"] = "gpt2-small"  # another preset starts from its own values
    at.run()
    assert at.number_input(key="wm_n_layer").value == 12
    assert _metric(at, "total parameters") == "124,439,808"


def test_crafted_calculator_values_fall_back_with_a_note() -> None:
    at = open_page(None, lang="zh")
    for name, value in {"wm_preset": "../../etc/passwd", "wm_n_layer": -7, "wm_vocab": 10**12, "wm_norm": "batchnorm",
                        "wm_tied": "yes", "wm_n_experts": float("nan")}.items():
        at.session_state[f"kept.{name}"] = value
    at.switch_page(f"pages/{PAGE}.py").run()
    assert_clean(at)
    assert at.selectbox(key="wm_preset").value == "__ours__"
    assert at.number_input(key="wm_n_layer").value >= 1
    assert at.selectbox(key="wm_norm").value in ("layernorm", "rmsnorm")
    assert at.success and "✓" in at.success[0].value  # back to our model's own config, counted exactly
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
