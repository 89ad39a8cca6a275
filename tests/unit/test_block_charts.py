"""The block pages' bars, grouped bars, lines and heat maps, written as Vega-Lite dicts directly,
are the specs Altair wrote for them (tests/fixtures/block_chart_specs.json was written by the
Altair builders these replaced, for the inputs below) and valid Vega-Lite."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.block as charts

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "block_chart_specs.json"


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


def _names_in_order(spec: dict) -> str:
    """The spec as JSON with its dataset names replaced by their order of appearance."""
    text = json.dumps(spec, sort_keys=True, ensure_ascii=False)
    names: dict[str, str] = {}
    return re.sub(r"data-[0-9a-f]{32}", lambda m: names.setdefault(m.group(0), f"data-{len(names)}"), text)


@pytest.mark.parametrize("index", range(len(cases())))
def test_the_dicts_are_the_specs_altair_wrote(index: int) -> None:
    golden = json.loads(GOLDEN.read_text())
    assert len(golden) == len(cases())
    name, args, kwargs = cases()[index]
    spec = getattr(charts, name).__wrapped__(*args, **kwargs)
    assert _names_in_order(spec) == _names_in_order(golden[index])
    validate_jsonschema(json.loads(json.dumps(spec)), load_schema())


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
