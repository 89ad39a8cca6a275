"""The output stations' charts (Logits, Generation), written as Vega-Lite dicts directly, are the
specs Altair wrote for them (tests/fixtures/output_chart_specs.json was written by the Altair
builders these replaced, for the inputs below) and valid Vega-Lite; the generation page's cache
heat map is ``ui.charts.common.heatmap``'s spec."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.output as charts
from ui.charts.common import heatmap, style_vega

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "output_chart_specs.json"


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
def test_the_dicts_are_the_specs_altair_wrote(index: int) -> None:
    golden = json.loads(GOLDEN.read_text())
    assert len(golden) == len(cases())
    name, args, kwargs = cases()[index]
    spec = getattr(charts, name)(*args, **kwargs)
    assert _json(spec) == _json(golden[index])
    validate_jsonschema(json.loads(json.dumps(spec)), load_schema())
    # the data rows keep the columns in the order the data frames had (the Arrow columns' order)
    assert list(spec["datasets"]["table"][0]) == list(golden[index]["datasets"]["table"][0])


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
    assert again["layer"][1]["mark"]["fontSize"] == 10


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
