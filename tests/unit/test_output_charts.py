"""The output stations' charts (Logits, Generation): valid Vega-Lite, with the titles, axes,
orders, colours, tooltips and rows a student reads; the generation page's cache heat map is
``ui.charts.common.heatmap``'s spec."""

from __future__ import annotations

import json

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.output as charts
from ui.charts.common import heatmap, style_vega
from ui.charts.vl import CELL_TEXT_LIMIT

def cases() -> list[tuple[str, tuple, dict]]:
    lens_probs = np.array([[0.61, 0.2, 0.1], [0.3, 0.25, 0.05]])
    mask_titles = dict(title="T", x_title="key", y_title="query", state_title="S", visible_name="vis",
                       masked_name="mask", newest_name="new")
    return [
        ("top_tokens_chart", (["a", "b·x", "c"], [0.5, 0.25, 0.125], "rest 9", 0.125),
         dict(title="T", x_title="p", y_title="tok", kind_title="K", kind_top="top 3", kind_tail="tail",
              logits=[3.0, 2.5, -1.0], logit_title="L")),
        ("top_tokens_chart", (["a"], [1e-12], "rest", 0.0),
         dict(title="T2", x_title="p", y_title="tok", kind_title="K", kind_top="top", kind_tail="tail")),
        ("before_after_chart", (["a", "b", "c"], [0.5, 0.3, 0.2], [0.7, 0.3, 0.0], ["kept", "kept", "cut"]),
         dict(title="T", x_title="p", y_title="tok", series_title="S", original_name="orig", after_name="after",
              status_title="St")),
        ("sample_histogram_chart", (["a", "b", "other"], [0.5, 0.3, 0.2], [0.55, 0.25, 0.2], [5, 3, 2]),
         dict(title="T", x_title="tok", y_title="share", series_title="S", observed_name="obs",
              expected_name="exp", count_title="n")),
        ("logit_lens_chart", (["emb", "L0"], [["a", "b", "c"], ["b", "a", "d"]], lens_probs),
         dict(title="T", x_title="rank", y_title="stage", value_title="p", token_title="tok", highlight_token="a")),
        ("logit_lens_chart", (["emb", "L0"], [["a", "b", "c"], ["b", "a", "d"]], lens_probs),
         dict(title="T", x_title="rank", y_title="stage", value_title="p", token_title="tok")),
        ("final_token_by_stage_chart", (["emb", "L0", "L1"], [0.1, 0.5, 0.9], [3, 1, 1]),
         dict(title="T", x_title="stage", y_title="p", rank_title="r")),
        ("timeline_chart", ([1, 2], ["a", "b"], [0.5, 0.25], ["a 0.50, b 0.20", "b 0.25"]),
         dict(title="T", x_title="step", y_title="p", token_title="tok", alternatives_title="alt")),
        ("top5_chart", (["a", "b", "c"], [0.5, 0.3, 0.1], "b"),
         dict(title="T", x_title="p", y_title="tok", chosen_title="C", chosen_name="chosen", other_name="other")),
        ("two_series_line_chart", ([1, 2, 3], {"with": [1.0, 2.0, 3.0], "without": [1.0, 3.0, 6.0]},
                                   ["#111111", "#222222"]),
         dict(title="T", x_title="step", y_title="kv", series_title="mode")),
        ("two_series_line_chart", ([1, 2], {"with": [0.1, 0.2], "re": [0.3, 0.5]}, ["#111111", "#222222"]),
         dict(title="T", x_title="step", y_title="ms", series_title="mode", value_format=".3f", log_scale=True)),
        ("causal_mask_chart", (["0·a", "1·b", "2·c"], 1), mask_titles),
        ("causal_mask_chart", ([f"{i}·t" for i in range(25)], 25), mask_titles),
        ("kv_variants_chart", (["MHA (4)", "GQA (2)", "MQA (1)"], [4000, 2000, 1000], ["4 kB", "2 kB", "1 kB"],
                               ["1×", "2×", "4×"]),
         dict(title="T", x_title="GB", y_title="layout", detail_title="D")),
        ("kv_growth_chart", ([10, 100], {"MHA": [4000, 40000], "MQA": [1000, 10000]},
                             {"MHA": ["4 kB", "40 kB"], "MQA": ["1 kB", "10 kB"]}),
         dict(title="T", x_title="tokens", y_title="GB", series_title="S")),
    ]


def _json(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("index", range(len(cases())))
def test_every_chart_is_valid_vega_lite_with_its_title_and_one_table(index: int) -> None:
    name, args, kwargs = cases()[index]
    spec = getattr(charts, name)(*args, **kwargs)
    validate_jsonschema(json.loads(json.dumps(spec)), load_schema())
    validate_jsonschema(json.loads(json.dumps({**style_vega(spec, presenter=True), "datasets": {}})), load_schema())
    assert spec["title"] == kwargs["title"] and list(spec["datasets"]) == ["table"]
    assert spec["config"]["view"] == {"continuousWidth": 300, "continuousHeight": 300}


def _case(name: str, which: int = 0) -> dict:
    args, kwargs = [(a, k) for n, a, k in cases() if n == name][which]
    return getattr(charts, name)(*args, **kwargs)


def _tips(encoding: dict) -> list[tuple[str, str]]:
    return [(t["field"], t["title"]) for t in encoding["tooltip"]]


def _rows(spec: dict, *columns: str) -> list[tuple]:
    return [tuple(row[c] for c in columns) for row in spec["datasets"]["table"]]


def test_top_tokens_bars_with_the_rest_of_the_vocabulary() -> None:
    spec = _case("top_tokens_chart")
    bars, symbols, values = spec["layer"]  # "top" and "the rest" also differ by the bar's end symbol
    enc = bars["encoding"]
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["top 3", "tail"] and symbols["encoding"]["y"] == enc["y"]
    assert values["mark"]["dx"] > symbols["mark"]["size"] ** 0.5 / 2  # the value starts past the symbol
    assert enc["y"]["sort"] == ["a", "b·x", "c", "rest 9"] and enc["y"]["title"] == "tok"
    assert enc["x"]["title"] == "p" and enc["x"]["scale"] == {"domain": [0, 0.5 * 1.15]}
    assert enc["color"]["scale"] == {"domain": ["top 3", "tail"], "range": [charts.AFTER_COLOR, charts.TAIL_COLOR]}
    assert enc["color"]["title"] == "K" and enc["color"]["legend"]["orient"] == "bottom"
    assert _tips(enc) == [("token", "tok"), ("shown", "p"), ("logit", "L")]
    assert values["mark"]["color"] == charts.LABEL_TEXT and values["encoding"]["text"]["field"] == "shown"
    assert list(spec["datasets"]["table"][0]) == ["token", "prob", "kind", "logit", "shown"]
    assert _rows(spec, "token", "prob", "kind", "logit", "shown") == [
        ("a", 0.5, "top 3", "3.000", "0.5000"), ("b·x", 0.25, "top 3", "2.500", "0.2500"),
        ("c", 0.125, "top 3", "-1.000", "0.1250"), ("rest 9", 0.125, "tail", "—", "0.1250")]
    assert spec["height"] == 24 * 4
    tiny = _case("top_tokens_chart", 1)
    assert tiny["layer"][0]["encoding"]["x"]["scale"]["domain"][1] == pytest.approx(1.15e-9)


def test_the_knobs_chart_shows_each_token_before_and_after() -> None:
    spec = _case("before_after_chart")
    bars, symbols, values, notes = spec["layer"]  # before and after also differ by the bar's end symbol
    enc = bars["encoding"]
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["orig", "after"]
    assert symbols["encoding"]["yOffset"] == enc["yOffset"] and symbols["encoding"]["x"] == enc["x"]
    assert enc["y"]["sort"] == ["a", "b", "c"] and enc["yOffset"]["sort"] == ["orig", "after"]
    assert enc["color"]["scale"] == {"domain": ["orig", "after"], "range": [charts.ORIGINAL_COLOR, charts.AFTER_COLOR]}
    assert enc["x"]["scale"] == {"domain": [0, 1]} and (enc["x"]["title"], enc["y"]["title"]) == ("p", "tok")
    assert _tips(enc) == [("token", "tok"), ("series", "S"), ("shown", "p"), ("status", "St")]
    assert values["transform"] == [{"filter": "datum.prob > 0"}] and notes["encoding"]["text"]["field"] == "note"
    assert _rows(spec, "token", "series", "shown", "note")[3:] == [
        ("a", "after", "0.7000", ""), ("b", "after", "0.3000", ""), ("c", "after", "0.0000", "✂ cut")]
    assert spec["height"] == 44 * 3


def test_the_draws_histogram_puts_each_share_beside_its_probability() -> None:
    spec = _case("sample_histogram_chart")
    bars, ticks = spec["layer"]
    assert bars["transform"] == [{"filter": "(datum.series === 'obs')"}]
    assert ticks["transform"] == [{"filter": "(datum.series === 'exp')"}] and ticks["mark"]["type"] == "tick"
    enc = bars["encoding"]
    assert enc["x"]["sort"] == {"field": "order", "op": "min"} and enc["y"]["title"] == "share"
    assert enc["color"]["scale"] == {"domain": ["obs", "exp"], "range": [charts.AFTER_COLOR, charts.RECOMPUTE_COLOR]}
    assert _tips(enc) == [("token", "tok"), ("series", "S"), ("shown", "share"), ("count", "n")]
    assert _rows(spec, "token", "series", "shown", "count", "order")[:3] == [
        ("a", "obs", "0.5000", 5, 0), ("b", "obs", "0.3000", 3, 1), ("other", "obs", "0.2000", 2, 2)]


@pytest.mark.parametrize("which", [0, 1])
def test_the_logit_lens_names_the_token_at_each_rank_and_outlines_the_answer(which: int) -> None:
    spec = _case("logit_lens_chart", which)
    cells, text = spec["layer"]
    enc = cells["encoding"]
    assert enc["y"]["sort"] == ["emb", "L0"] and (enc["x"]["title"], enc["y"]["title"]) == ("rank", "stage")
    assert enc["color"]["scale"] == {"domain": [0, 1], "scheme": {"name": "blues", "extent": [0.12, 1.0]}}
    assert enc["strokeWidth"] == {"condition": {"test": "datum.is_final", "value": 3}, "value": 0}
    assert _tips(enc) == [("stage", "stage"), ("rank", "rank"), ("token", "tok"), ("shown", "p")]
    assert text["encoding"]["text"]["field"] == "token" and text["mark"]["limit"] == {"expr": CELL_TEXT_LIMIT}
    assert _rows(spec, "stage", "rank", "token", "shown", "is_final") == [
        ("emb", 1, "a", "0.610", which == 0), ("emb", 2, "b", "0.200", False), ("emb", 3, "c", "0.100", False),
        ("L0", 1, "b", "0.300", False), ("L0", 2, "a", "0.250", which == 0), ("L0", 3, "d", "0.050", False)]
    assert spec["height"] == 80


def test_the_final_token_line_over_stages() -> None:
    spec = _case("final_token_by_stage_chart")
    enc = spec["encoding"]
    assert spec["mark"]["type"] == "line" and spec["mark"]["color"] == charts.AFTER_COLOR
    assert enc["x"]["sort"] == ["emb", "L0", "L1"] and enc["y"]["scale"] == {"domain": [0, 1]}
    assert _tips(enc) == [("stage", "stage"), ("shown", "p"), ("rank", "r")]
    assert _rows(spec, "stage", "shown", "rank") == [("emb", "0.1000", 3), ("L0", "0.5000", 1), ("L1", "0.9000", 1)]


def test_the_timeline_writes_each_steps_token_under_its_bar() -> None:
    spec = _case("timeline_chart")
    enc = spec["encoding"]
    assert enc["x"]["sort"] == ["1 a", "2 b"] and enc["y"]["axis"]["values"] == charts.PROB_TICKS
    assert _tips(enc) == [("step", "step"), ("token", "tok"), ("shown", "p"), ("alternatives", "alt")]
    assert _rows(spec, "tick", "shown", "alternatives") == [("1 a", "0.5000", "a 0.50, b 0.20"), ("2 b", "0.2500", "b 0.25")]


def test_the_step_top5_colours_the_drawn_token() -> None:
    spec = _case("top5_chart")
    enc = spec["layer"][0]["encoding"]
    assert enc["color"]["scale"] == {"domain": ["chosen", "other"], "range": [charts.CACHED_COLOR, charts.ORIGINAL_COLOR]}
    assert enc["y"]["sort"] == ["a", "b", "c"] and _tips(enc) == [("token", "tok"), ("shown", "p")]
    assert _rows(spec, "token", "kind", "shown") == [("a", "other", "0.5000"), ("b", "chosen", "0.3000"),
                                                    ("c", "other", "0.1000")]


@pytest.mark.parametrize("which", [0, 1])
def test_the_two_series_lines(which: int) -> None:
    spec = _case("two_series_line_chart", which)
    enc = spec["encoding"]
    names = ["with", "without"] if which == 0 else ["with", "re"]
    assert enc["color"]["scale"] == {"domain": names, "range": ["#111111", "#222222"]} and enc["color"]["sort"] == names
    assert enc["y"]["scale"] == ({"zero": True} if which == 0 else {"type": "log"})
    assert enc["x"]["axis"] == {"format": "d", "tickMinStep": 1}
    assert _tips(enc)[0] == ("step", "step")
    shown = [r["shown"] for r in spec["datasets"]["table"]]
    assert shown[:2] == (["1", "2"] if which == 0 else ["0.100", "0.200"])


@pytest.mark.parametrize("which", [0, 1])
def test_the_causal_mask_marks_what_each_query_may_not_see(which: int) -> None:
    spec = _case("causal_mask_chart", which)
    n = 3 if which == 0 else 25
    cells = spec["layer"][0]
    enc = cells["encoding"]
    assert enc["color"]["scale"] == {"domain": ["vis", "new", "mask"],
                                     "range": [charts.VISIBLE_COLOR, charts.NEW_ROW_COLOR, charts.MASKED_COLOR]}
    assert _tips(enc) == [("query", "query"), ("key", "key"), ("state", "S")]
    assert spec["width"] == spec["height"] == max(220, min(640, 30 * n)) and spec["autosize"]["type"] == "pad"
    # each state's mark in its cells (never colour alone), smaller in small cells, and in the legend
    cells_text = spec["layer"][1]
    assert cells_text["encoding"]["text"]["field"] == "mark" and cells_text["mark"]["fontSize"] == (10 if n <= 24 else 8)
    label = enc["color"]["legend"]["labelExpr"]
    assert "datum.label + ' ●'" in label and "datum.label + ' −∞'" in label and "'new'" in label and "'mask'" in label
    rows = spec["datasets"]["table"]
    assert len(rows) == n * n and rows[1]["state"] == "mask" and rows[1]["mark"] == "−∞"
    assert {row["state"]: row["mark"] for row in rows} == ({"vis": "", "new": "●", "mask": "−∞"} if which == 0
                                                            else {"new": "●", "mask": "−∞"})
    assert rows[-1]["state"] == "new" and rows[0]["state"] == ("vis" if which == 0 else "new")


def test_the_kv_variants_bars_and_growth_lines() -> None:
    bars = _case("kv_variants_chart")
    enc = bars["layer"][0]["encoding"]
    assert enc["y"]["sort"] == ["MHA (4)", "GQA (2)", "MQA (1)"] and enc["y"]["axis"]["labelLimit"] == 400
    assert enc["x"]["scale"] == {"domain": [0, 4e-6 * 1.3]} and enc["color"]["legend"] is None
    assert _tips(enc) == [("kind", "layout"), ("shown", "GB"), ("detail", "D")]
    assert _rows(bars, "kind", "shown", "detail")[0] == ("MHA (4)", "4 kB", "1×")
    growth = _case("kv_growth_chart")
    enc = growth["encoding"]
    assert enc["x"]["scale"] == {"type": "log"} == enc["y"]["scale"] and enc["color"]["sort"] == ["MHA", "MQA"]
    assert growth["encoding"]["tooltip"][1] == {"field": "tokens", "title": "tokens", "type": "quantitative", "format": ","}
    assert _rows(growth, "tokens", "series", "shown") == [(10, "MHA", "4 kB"), (100, "MHA", "40 kB"),
                                                         (10, "MQA", "1 kB"), (100, "MQA", "10 kB")]


@pytest.mark.parametrize("show_values", [True, False])
def test_the_cache_heat_map_is_the_common_heatmap(show_values: bool) -> None:
    matrix = np.array([[3, 4, 5], [3, 4, 5]])
    args = (matrix, ["layer 0", "layer 1"], ["1", "2", "3"])
    kwargs = dict(title="T", x_title="step", y_title="layer", value_title="len", value_format=".0f",
                  show_values=show_values)
    ours = charts.cache_length_chart(*args, **kwargs)
    assert _json(ours) == _json(heatmap(*args, **kwargs))
    validate_jsonschema(json.loads(json.dumps(ours)), load_schema())
    assert [(r["row"], r["col"], r["value"], r["shown"]) for r in ours["datasets"]["table"][:4]] == [
        ("layer 0", "1", 3.0, "3"), ("layer 0", "2", 4.0, "4"), ("layer 0", "3", 5.0, "5"), ("layer 1", "1", 3.0, "3")]
    rect = ours["layer"][0]["encoding"]
    assert rect["x"]["sort"] == ["1", "2", "3"] and rect["y"]["sort"] == ["layer 0", "layer 1"]
    assert rect["color"]["condition"]["title"] == "len" and rect["color"]["value"] == "#9e9e9e"
    assert len(ours["layer"]) == (2 if show_values else 1)
    with pytest.raises(ValueError):
        charts.cache_length_chart(np.array([[1.0, np.nan]]), ["a"], ["1", "2"], **kwargs)


def test_user_text_stays_data_and_the_cached_layouts_are_not_changed() -> None:
    label = "<b>x</b>'\"{"  # token labels are user text: they stay strings in the data and the sort list
    titles = dict(x_title="p", y_title="tok", series_title="S", original_name="o", after_name="a", status_title="s")
    spec = charts.before_after_chart([label, "b"], [0.5, 0.5], [1.0, 0.0], ["kept", "cut"], title="T", **titles)
    assert spec["layer"][0]["encoding"]["y"]["sort"] == [label, "b"]
    assert [r["token"] for r in spec["datasets"]["table"]] == [label, "b", label, "b"]
    again = charts.before_after_chart([label, "b"], [0.2, 0.8], [0.0, 1.0], ["cut", "kept"], title="T2", **titles)
    assert again["layer"] is spec["layer"] and again["title"] == "T2" and spec["title"] == "T"
    style_vega(again, presenter=True)  # theming copies: the shared layout stays as built
    assert again["layer"][2]["mark"]["fontSize"] == 10


def test_a_probability_json_cannot_carry_becomes_null() -> None:
    spec = charts.top5_chart(["a", "b"], [float("nan"), 0.5], "b", title="T", x_title="p", y_title="t",
                             chosen_title="c", chosen_name="c", other_name="o")
    assert [r["prob"] for r in spec["datasets"]["table"]] == [None, 0.5]
    assert spec["datasets"]["table"][0]["shown"] == "nan"


def test_row_datasets_reach_the_browser_as_the_data_frame_path_sent_them() -> None:
    """Rows go to Arrow directly (a tenth of the data frame path's time); the browser gets the same
    columns, types and values, also for the live charts' carrier row and values JSON cannot hold."""
    import pandas as pd
    from streamlit.dataframe_util import convert_anything_to_arrow_bytes, convert_arrow_bytes_to_pandas_df

    import ui.charts.block as block
    from ui.charts.common import _rows_table, arrow_bytes
    from ui.charts.live import live_spec

    datasets = [getattr(charts, name)(*args, **kwargs)["datasets"]["table"] for name, args, kwargs in cases()]
    bars = block.bars.__wrapped__(("a", "b"), (float("nan"), 1.0), title="T", value_title="V", label_title="L")
    datasets.extend(bars["datasets"].values())  # a value JSON cannot hold is None in the rows
    knobs = charts.before_after_chart(["a", "b"], [0.5, 0.5], [1.0, 0.0], ["kept", "cut"], title="T = 0.50",
                                      x_title="p", y_title="tok", series_title="S", original_name="o", after_name="a",
                                      status_title="s")
    datasets.append(live_spec(knobs)["datasets"]["table"])  # the title rides on the first row only
    for rows in datasets:
        assert _rows_table(rows) is not None
        ours = convert_arrow_bytes_to_pandas_df(arrow_bytes(rows))
        pd.testing.assert_frame_equal(ours, convert_arrow_bytes_to_pandas_df(convert_anything_to_arrow_bytes(rows)))
    assert _rows_table([{"a": 1}, {"a": 2, "b": 3}]) is None  # a column the first row lacks: the old way
    assert _rows_table([{"a": 1}, {"a": "x"}]) is None  # mixed types: the old way
    assert _rows_table(pd.DataFrame({"a": [1]})) is None and _rows_table([]) is None
