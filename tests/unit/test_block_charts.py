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
