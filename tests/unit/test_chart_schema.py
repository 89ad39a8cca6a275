"""Every chart is a Vega-Lite dict built with ``ui.charts.vl``: each builder's spec, on
representative inputs, is valid against the Vega-Lite schema that ships with Altair (plain and
presenter-themed), and the shared helpers do what the builders rely on."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import altair as alt
import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.charts import attention, common, tokens, vl

ROOT = Path(__file__).resolve().parents[2]


def _valid(spec: dict) -> None:
    """Valid Vega-Lite as built and as drawn (themed for the presenter, titles wrapped)."""
    for form in (spec, common.style_vega(spec, presenter=True)):
        validate_jsonschema(json.loads(json.dumps({k: v for k, v in form.items() if k != "datasets"}, default=str)),
                            load_schema())


def _rows(spec: dict, name: str | None = None) -> list[dict]:
    data = spec["datasets"][name or spec["data"]["name"]]
    return data.to_dict(orient="records") if hasattr(data, "to_dict") else list(data)


MATRIX = np.array([[0.5, -1.25, 3.0], [2.0, np.nan, -np.inf]])
HEAT = dict(title="T", x_title="X", y_title="Y", value_title="V")
CHIPS = [tokens.Chip("low ×5", "low", "low"), tokens.Chip("low ×5", "est", "est", ("3",), True),
         tokens.Chip("newest ×2", "n" * 30, "n" * 30, ("1",))]
W = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]

BUILDERS = {
    "heatmap": lambda: common.heatmap(np.abs(np.nan_to_num(MATRIX, neginf=0.0)), ["r1", "r2"], ["c1", "c2", "c3"], **HEAT),
    "heatmap diverging, grey cells, values, steps": lambda: common.heatmap(
        MATRIX, ["r1", "r2"], ["c1", "c2", "c3"], **HEAT, diverging=True, show_values=True, cell_size=22),
    "heatmap other scheme": lambda: common.heatmap(np.eye(2), ["a", "b"], ["a", "b"], **HEAT, scheme="viridis"),
    "bar_chart": lambda: common.bar_chart(["a", "b"], [0.5, float("nan")], title="T", x_title="x", y_title="y"),
    "attention weights": lambda: attention.attention_heatmap(W, list("abcd"), **HEAT, masked_text="m"),
    "attention scores": lambda: attention.attention_heatmap(np.where(W > 0, W - 0.3, -np.inf), list("abcd"), **HEAT,
                                                           masked_text="m", scores=True),
    "attention compact": lambda: attention.attention_heatmap(
        np.tril(np.ones((attention.DENSE_HEATMAP_MAX + 1,) * 2)), [str(i) for i in range(attention.DENSE_HEATMAP_MAX + 1)],
        **HEAT, masked_text="m"),
    "value_matrix_spec": lambda: attention.value_matrix_spec(MATRIX, ["r1", "r2"], ["c1", "c2", "c3"], **HEAT),
    "head_view_chart_spec": lambda: attention.head_view_chart_spec(
        np.full((2, 4), 0.25), list("abcd"), 2, ["H0", "H1"], title="T", weight_title="w", query_side="q",
        key_side="k", head_title="h"),
    "grouped_bars": lambda: attention.grouped_bars(["a", "b"], {"s": [0.5, None], "t": [0.1, 0.2]}, title="T",
                                                   x_title="x", y_title="y", legend_title="l"),
    "overlaid_histogram": lambda: attention.overlaid_histogram({"raw": np.arange(10.0), "scaled": np.arange(10.0) / 3},
                                                               title="T", x_title="x", y_title="y", legend_title="l"),
    "lines_over_dk": lambda: attention.lines_over_dk(np.array([1, 2, 4]), {"raw": np.array([0.5, 0.7, 0.9])}, 2,
                                                     title="T", x_title="x", y_title="y", legend_title="l"),
    "head_picker": lambda: attention.head_picker([0, 1], [0, 0], ["a", "b"], [0.5, float("nan")], title="T",
                                                 x_title="h", y_title="l", label_title="k", score_title="s"),
    "token_chips": lambda: tokens.token_chips(CHIPS, title="T", x_title="x", y_title="Word × how often it occurs",
                                              token_title="tok", detail_titles=("n",)),
    "token_count_curve": lambda: tokens.token_count_curve([0, 1, 2], [74, 67, 60], words=13, vocab_sizes=[11, 12, 13],
                                                          current=1, title="T", x_title="m", total_title="tok",
                                                          per_word_title="tpw", vocab_title="v"),
    "hconcat": lambda: vl.hconcat([attention.value_matrix_spec(np.eye(2), ["a", "b"], ["c", "d"], **HEAT),
                                   attention.value_matrix_spec(np.ones((2, 1)), ["a", "b"], ["e"], **HEAT)],
                                  title="T", spacing=24, independent=("color",)),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_every_builder_writes_valid_vega_lite(name: str) -> None:
    spec = BUILDERS[name]()
    assert isinstance(spec, dict) and spec["$schema"] == vl.SCHEMA_URL and spec["title"]
    _valid(spec)


def test_the_schema_url_is_the_version_altair_validates_against() -> None:
    assert vl.SCHEMA_URL == alt.SCHEMA_URL


def test_the_common_heatmap_greys_cells_without_a_value_and_writes_them() -> None:
    spec = BUILDERS["heatmap diverging, grey cells, values, steps"]()
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["condition"]["test"] == "isValid(datum.value)"
    assert rect["encoding"]["color"]["value"] == "#9e9e9e"
    assert rect["encoding"]["color"]["condition"]["scale"] == {"domain": [-3.0, 3.0], "reverse": True, "scheme": "redblue"}
    assert rect["encoding"]["x"]["sort"] == ["c1", "c2", "c3"] and rect["encoding"]["y"]["sort"] == ["r1", "r2"]
    assert [(t["field"], t["title"]) for t in rect["encoding"]["tooltip"]] == [("row", "Y"), ("col", "X"), ("shown", "V")]
    assert spec["width"] == spec["height"] == {"step": 22}  # steps: a layered chart in pixels collapses
    rows = _rows(spec)
    assert [r["shown"] for r in rows] == ["0.500", "-1.250", "3.000", "2.000", "—", "−∞"]
    assert [r["value"] for r in rows][4:] == [None, None] and text["encoding"]["text"]["field"] == "shown"
    plain = BUILDERS["heatmap"]()
    assert plain["layer"][0]["encoding"]["color"]["condition"]["scale"] == {"scheme": vl.SEQUENTIAL_BLUES}
    assert "width" not in plain and len(plain["layer"]) == 1
    other = BUILDERS["heatmap other scheme"]()
    assert other["layer"][0]["encoding"]["color"]["condition"]["scale"] == {"scheme": "viridis"}
    with pytest.raises(ValueError):
        common.heatmap(np.eye(2), ["a"], ["a", "b"], **HEAT)


def test_token_chips_and_the_count_curve_carry_their_values_as_data_and_parameters() -> None:
    chips = BUILDERS["token_chips"]()
    rects, text = chips["layer"]
    assert rects["encoding"]["fill"] == {"field": "fill", "scale": None, "type": "nominal"}
    assert [t["title"] for t in rects["encoding"]["tooltip"]] == ["tok", "n"]
    assert rects["encoding"]["y"]["title"] == tokens.y_title_lines("Word × how often it occurs")
    assert text["encoding"]["text"]["field"] == "label" and chips["height"] == {"step": tokens.ROW_HEIGHT_PX}
    rows = chips["datasets"]["chips"]
    assert [r["label"] for r in rows] == ["low", "est", tokens.shorten("n" * 30)]
    assert rows[1]["stroke"] == tokens.HIGHLIGHT_STROKE and rows[1]["detail_0"] == "3"
    assert chips["params"][0]["name"] == "line_width" and chips["params"][0]["value"] >= tokens.MIN_LINE_WIDTH
    curve = BUILDERS["token_count_curve"]()
    assert curve["params"] == [{"name": "current", "value": 1}, {"name": "top", "value": 74 * 1.05},
                               {"name": "top_per_word", "value": 74 * 1.05 / 13}]
    left, per_word = curve["layer"]
    assert [layer["mark"]["type"] for layer in left["layer"]] == ["line", "rule", "point"]
    assert per_word["encoding"]["y"]["axis"] == {"orient": "right"} and curve["resolve"] == {"scale": {"y": "independent"}}
    assert curve["datasets"]["curve"][1] == {"merges": 1, "total": 67, "per_word": 67 / 13, "vocab": 12}


def test_the_helpers() -> None:
    assert vl.field("v", "quantitative", title="p") == {"field": "v", "type": "quantitative", "title": "p"}
    assert vl.tooltip("s", "p") == {"field": "s", "title": "p", "type": "nominal"}
    assert vl.json_number(float("nan")) is None and vl.json_number(float("-inf")) is None and vl.json_number(2) == 2.0
    assert vl.dataset_name([{"a": 1}]) == vl.dataset_name([{"a": 1}]) != vl.dataset_name([{"a": 2}])
    assert vl.legend(columns=2) == {"orient": "bottom", "direction": "horizontal", "columns": 2}
    assert vl.legend_below()["orient"] == "bottom"
    assert vl.scale(("a",), ("#111111",)) == {"domain": ["a"], "range": ["#111111"]}
    assert vl.condition("datum.x", 1, 0) == {"condition": {"test": "datum.x", "value": 1}, "value": 0}
    assert vl.autosize(fixed_size=True) == {"contains": "padding", "type": "pad"}
    spec = vl.spec({"mark": {"type": "bar"}}, {"t": [{"x": math.pi}]}, title="T", height=80, data="t", width=90)
    assert list(spec) == ["config", "data", "mark", "autosize", "height", "title", "width", "$schema", "datasets"]
    assert spec["config"] == {"view": vl.VIEW, "font": vl.CJK_FONT}
    assert vl.SEQUENTIAL_BLUES["extent"][0] >= 0.1  # a zero cell stays visible on the dark theme


def test_chart_modules_do_not_use_altair() -> None:
    """One way to build a chart: ``ui.charts.vl`` dicts (Altair stays only as Streamlit's dependency)."""
    users = []
    for path in sorted((ROOT / "ui" / "charts").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
        names |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        if "altair" in names:
            users.append(path.name)
    assert not users, f"write these charts with ui.charts.vl: {users}"
