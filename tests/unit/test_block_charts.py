"""The block pages' bars, grouped bars, lines, heat maps and parameter shares: valid Vega-Lite,
with the titles, axes, orders, colours, tooltips and rows a student reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.block as charts

def cases() -> list[tuple[str, tuple, dict]]:
    m = np.array([[0.5, -1.25, 3.0], [2.0, 0.0, -0.75]])
    return [
        ("bars", (("a", "b·x", "c"), (0.5, 0.25, -0.125)), dict(title="T", value_title="V", label_title="L")),
        ("bars", (("a", "b"), (0.5, 0.25)), dict(title="T", value_title="V", label_title="L", color_labels=("x", "y"),
                                                colors=("#111111", "#222222"), color_title="C", value_format=".2f", height=90)),
        ("bars", (("a", "b", "c"), (1.0, 2.0, 3.0)), dict(title="T", value_title="V", label_title="L", color_labels=("k", "k", "m"),
                                                        color_title="C")),
        ("grouped_bars", (("c1", "c2", "c3"), ("s1", "s2"), m), dict(title="T", x_title="X", y_title="Y", series_title="S")),
        ("grouped_bars", (("c1", "c2", "c3"), ("s1", "s2"), m), dict(title="T", x_title="X", y_title="Y", series_title="S",
                                                                    value_format=".4f", height=200)),
        ("lines", ((0.0, 1.0, 2.0), {"a": (1.0, 2.0, 3.0), "b": (3.0, 4.0, 0.5)}),
         dict(title="T", x_title="X", y_title="Y", series_title="S")),
        ("lines", (tuple(float(i) for i in range(70)), {"a": tuple(float(i) ** 2 + 1 for i in range(70))}),
         dict(title="T", x_title="X", y_title="Y", series_title="S", log_y=True, marker_x=3.5, value_format=".2f",
              height=220, x_format=".0f")),
        ("heat", (m, ("r1", "r2"), ("c1", "c2", "c3")), dict(title="T", x_title="X", y_title="Y", value_title="V")),
        ("heat", (m, ("r1", "r2"), ("c1", "c2", "c3")), dict(title="T", x_title="X", y_title="Y", value_title="V",
                                                            diverging=True, value_format=".2f", height=300)),
        ("heat", (m, ("r1", "r2"), ("c1", "c2", "c3")), dict(title="T", x_title="X", y_title="Y", value_title="V",
                                                            text=np.array([["a", "b", "c"], ["d", "e", "f"]]), text_title="TT")),
        ("heat", (m, ("r1", "r2"), ("c1", "c2", "c3")), dict(title="T", x_title="X", y_title="Y", value_title="V",
                                                            diverging=True, text=np.array([["a", "b", "c"], ["d", "e", "f"]]))),
        ("heat", (np.zeros((2, 2)), ("r1", "r2"), ("c1", "c2")), dict(title="T", x_title="X", y_title="Y", value_title="V",
                                                                     diverging=True)),
    ]


def _valid(spec: dict) -> None:
    validate_jsonschema(json.loads(json.dumps(spec)), load_schema())


def _tips(encoding: dict) -> list[tuple[str, str | None]]:
    return [(t["field"], t["title"]) for t in encoding["tooltip"]]


def _rows(spec: dict, *columns: str, name: str | None = None) -> list[tuple]:
    rows = spec["datasets"][name or spec["data"]["name"]]
    return [tuple(row.get(c) for c in columns) for row in rows]


@pytest.mark.parametrize("index", range(len(cases())))
def test_every_chart_is_valid_vega_lite_with_its_title_and_fit_width(index: int) -> None:
    name, args, kwargs = cases()[index]
    spec = getattr(charts, name).__wrapped__(*args, **kwargs)
    _valid(spec)
    assert spec["title"] == kwargs["title"] and spec["autosize"] == {"contains": "padding", "type": "fit-x"}
    assert spec["config"]["font"].startswith("Noto Sans CJK SC")
    assert all(name.startswith("data-") for name in spec["datasets"])


def test_bars_in_the_given_order_with_optional_colour_groups() -> None:
    plain, coloured, grouped = (getattr(charts, n).__wrapped__(*a, **k) for n, a, k in cases()[:3])
    enc = plain["encoding"]
    assert enc["y"]["sort"] == ["a", "b·x", "c"] and (enc["x"]["title"], enc["y"]["title"]) == ("V", "L")
    assert _tips(enc) == [("label", "L"), ("shown", "V")] and "color" not in enc
    assert _rows(plain, "label", "value", "shown") == [("a", 0.5, "0.5000"), ("b·x", 0.25, "0.2500"),
                                                       ("c", -0.125, "-0.1250")]
    assert plain["height"] == 120 and coloured["height"] == 90
    bar, symbols = coloured["layer"]  # colour groups: each bar ends in its group's symbol (not colour alone)
    enc = bar["encoding"]
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["x", "y"] and symbols["encoding"]["x"] == enc["x"]
    assert enc["color"]["scale"] == {"domain": ["x", "y"], "range": ["#111111", "#222222"]}
    assert enc["color"]["title"] == "C" and enc["color"]["legend"]["orient"] == "bottom"
    assert _tips(enc)[-1] == ("group", "C") and _rows(coloured, "shown", "group") == [("0.50", "x"), ("0.25", "y")]
    assert grouped["layer"][0]["encoding"]["color"]["scale"] == {"domain": ["k", "m"], "range": charts.SERIES_COLORS[:2]}


def test_grouped_bars_one_per_category_and_series() -> None:
    spec = charts.grouped_bars.__wrapped__(*cases()[3][1], **cases()[3][2])
    bars, symbols = spec["layer"]  # each bar ends in its series' symbol (not colour alone)
    enc = bars["encoding"]
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["s1", "s2"] and symbols["encoding"]["xOffset"] == enc["xOffset"]
    assert enc["x"]["sort"] == ["c1", "c2", "c3"] and enc["xOffset"]["sort"] == ["s1", "s2"]
    assert enc["color"]["scale"] == {"domain": ["s1", "s2"], "range": charts.SERIES_COLORS[:2]}
    assert _tips(enc) == [("cat", "X"), ("series", "S"), ("shown", "Y")] and spec["height"] == 260
    assert _rows(spec, "cat", "series", "value", "shown")[:4] == [
        ("c1", "s1", 0.5, "0.500"), ("c2", "s1", -1.25, "-1.250"), ("c3", "s1", 3.0, "3.000"), ("c1", "s2", 2.0, "2.000")]


def test_lines_with_a_marker_at_the_chosen_x() -> None:
    short = charts.lines.__wrapped__(*cases()[5][1], **cases()[5][2])
    (line,) = short["layer"]
    assert line["mark"] == {"type": "line", "point": True} and line["encoding"]["y"]["scale"] == {"zero": False}
    assert _tips(line["encoding"]) == [("series", "S"), ("x_shown", "X"), ("shown", "Y")]
    assert line["encoding"]["color"]["scale"] == {"domain": ["a", "b"], "range": charts.SERIES_COLORS[:2]}
    assert _rows(short, "series", "x_shown", "shown")[:2] == [("a", "0.00", "1.0000"), ("a", "1.00", "2.0000")]
    long = charts.lines.__wrapped__(*cases()[6][1], **cases()[6][2])
    line, marker = long["layer"]
    assert line["mark"]["point"] is False and line["encoding"]["y"]["scale"] == {"type": "log"}
    assert marker["mark"]["type"] == "rule" and _rows(long, "x", name=marker["data"]["name"]) == [(3.5,)]
    assert _rows(long, "x_shown", "shown", name=line["data"]["name"])[2] == ("2", "5.00")


@pytest.mark.parametrize("index", range(7, 12))
def test_heat_maps_label_both_axes_and_write_their_cells(index: int) -> None:
    _, args, kwargs = cases()[index]
    spec = charts.heat.__wrapped__(*args, **kwargs)
    m = np.asarray(args[0])
    rect = spec["layer"][0]["encoding"]
    assert rect["x"]["sort"] == list(args[2]) and rect["y"]["sort"] == list(args[1])
    assert (rect["x"]["title"], rect["y"]["title"], rect["color"]["title"]) == ("X", "Y", "V")
    if kwargs.get("diverging"):
        bound = float(np.abs(m).max()) or 1.0
        assert rect["color"]["scale"] == {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    else:
        assert rect["color"]["scale"] == {"scheme": "blues"}
    has_text = kwargs.get("text") is not None
    expected_tips = [("row", "Y"), ("col", "X"), ("shown", "V")]
    if has_text:
        expected_tips.insert(2, ("text", kwargs.get("text_title") or ""))
    assert _tips(rect) == expected_tips and len(spec["layer"]) == (2 if has_text else 1)
    fmt = kwargs.get("value_format", ".3f")
    assert [r[0] for r in _rows(spec, "shown")] == [format(v, fmt) for v in m.ravel()]
    assert spec["height"] == kwargs.get("height", max(160, 26 * len(args[1]) + 20))
    if has_text:
        ink = spec["layer"][1]["encoding"]["color"]["condition"]
        assert ink["value"] == "#ffffff" and ink["test"].startswith("abs(datum.value) >" if kwargs.get("diverging")
                                                                    else "datum.value >")


def test_the_parameter_share_bar() -> None:
    spec = charts.stacked_share.__wrapped__(["emb", "attn"], [100, 300], title="T", x_title="params", color_title="part",
                                            bar_label="all", colors=["#111111", "#222222"])
    _valid(spec)
    bar, symbols = spec["layer"]  # each part's symbol in its middle (not colour alone)
    enc = bar["encoding"]
    assert symbols["encoding"]["x"]["field"] == "middle" and _rows(spec, "middle") == [(50.0,), (250.0,)]
    assert enc["x"]["stack"] == "zero" and enc["order"] == {"field": "order", "type": "quantitative"}
    assert enc["color"]["scale"] == {"domain": ["emb", "attn"], "range": ["#111111", "#222222"]}
    assert _tips(enc) == [("part", "part"), ("shown", "params"), ("share", "%")] and spec["height"] == 70
    assert _rows(spec, "part", "value", "shown", "share", "bar") == [("emb", 100, "100", "25.0 %", "all"),
                                                                      ("attn", 300, "300", "75.0 %", "all")]


def test_equal_data_gets_one_name_and_other_data_another() -> None:
    first = charts.bars.__wrapped__(("a",), (1.0,), title="T", value_title="V", label_title="L")
    again = charts.bars.__wrapped__(("a",), (1.0,), title="other title", value_title="V", label_title="L")
    other = charts.bars.__wrapped__(("a",), (2.0,), title="T", value_title="V", label_title="L")
    assert first["data"] == again["data"] != other["data"]
    assert set(first["datasets"]) == {first["data"]["name"]}


def test_a_value_json_cannot_carry_becomes_null() -> None:
    spec = charts.bars.__wrapped__(("a", "b"), (float("nan"), float("inf")), title="T", value_title="V", label_title="L")
    rows = spec["datasets"][spec["data"]["name"]]
    assert [r["value"] for r in rows] == [None, None] and [r["shown"] for r in rows] == ["nan", "inf"]
    json.dumps(spec, allow_nan=False)


def _text(spec: dict) -> str:
    """What the browser compares to keep a chart's view: the spec without its data."""
    return json.dumps({k: v for k, v in spec.items() if k != "datasets"}, sort_keys=True)


def test_stable_specs_differ_only_in_their_data() -> None:
    """Transformer block's layer pick: other neurons, other values, the same spec text once
    ``stable`` and ``live`` moved names, orders, the bound and the title into the data."""
    from ui.charts.live import live_spec, resolve_live

    pairs = [
        (charts.heat.__wrapped__(np.array([[0.5, -1.0], [2.0, 0.25]]), ("n3", "n9"), ("a", "b"), title="L0",
                                 x_title="X", y_title="Y", value_title="V", diverging=True),
         charts.heat.__wrapped__(np.array([[4.0, -1.0], [0.5, 0.25]]), ("n7", "n1"), ("a", "b"), title="L1",
                                 x_title="X", y_title="Y", value_title="V", diverging=True)),
        (charts.bars.__wrapped__(("n3", "n9", "n4"), (3.0, 2.0, 1.0), title="L0", value_title="V", label_title="L"),
         charts.bars.__wrapped__(("n8", "n2", "n5"), (5.0, 1.0, 0.5), title="L1", value_title="V", label_title="L")),
        (charts.bars.__wrapped__(("e0", "e1"), (0.7, 0.3), title="t0", value_title="V", label_title="L",
                                 color_labels=("chosen", "idle"), color_domain=("chosen", "idle"), colors=("#1", "#2")),
         charts.bars.__wrapped__(("e0", "e1"), (0.2, 0.8), title="t1", value_title="V", label_title="L",
                                 color_labels=("idle", "chosen"), color_domain=("chosen", "idle"), colors=("#1", "#2"))),
        (charts.lines.__wrapped__((0.0, 1.0), {"γ": (1.0, 2.0)}, title="L0", x_title="X", y_title="Y", series_title="S"),
         charts.lines.__wrapped__((0.0, 1.0), {"γ": (0.5, 3.0)}, title="L1", x_title="X", y_title="Y", series_title="S")),
    ]
    for first, second in pairs:
        assert _text(first) != _text(second)  # as built: names, orders, bound and title differ
        a, b = live_spec(charts.stable(first)), live_spec(charts.stable(second))
        assert _text(a) == _text(b)
        validate_jsonschema(json.loads(_text(a)), load_schema())
        # what the student sees is unchanged: the title comes back from the data
        assert resolve_live(a)["title"] == first["title"] and resolve_live(b)["title"] == second["title"]
    heat, bars = (charts.stable(pairs[0][1]), charts.stable(pairs[1][1]))
    assert heat["params"] == [{"name": charts.BOUND_PARAM, "value": 4.0}]
    rows = heat["datasets"]["rows0"]
    assert [(r["row"], r["row__order"]) for r in rows[::2]] == [("n7", 0), ("n1", 1)]  # the given order, as data
    assert [(r["label"], r["label__order"]) for r in bars["datasets"]["rows0"]] == [("n8", 0), ("n2", 1), ("n5", 2)]
    assert bars["encoding"]["y"]["sort"] == {"field": "label__order", "op": "min"}
    assert "label__order" not in pairs[1][1]["datasets"][pairs[1][1]["data"]["name"]][0]  # the input is not changed
