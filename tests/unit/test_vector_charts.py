"""The Embeddings page's 2-D charts (ui.charts.vectors): valid Vega-Lite that draws the data."""

from __future__ import annotations

import json
import math

import numpy as np
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.charts import vl
from ui.charts.vectors import ARROW_COLOURS, OTHER_COLOUR, PAIR_COLOURS, distance_vs_cosine, similarity_by_stage

LAB_TEXT = dict(title="t", x_title="cos", y_title="d", pair_title="pair", curve_label="unit")


def validated(spec: dict) -> dict:
    """The spec checked against the Vega-Lite schema it names (the one Altair ships), and as JSON."""
    assert spec["$schema"] == vl.SCHEMA_URL
    validate_jsonschema(spec, load_schema())
    json.dumps(spec, allow_nan=False)
    return spec


def test_each_pair_is_a_point_in_the_tables_order_over_the_unit_curve() -> None:
    pairs = [("苹果–香蕉", np.float64(0.9), 0.4), ("a–b", -0.2, 1.5)]
    curve = [(c, math.sqrt(2 - 2 * c)) for c in np.linspace(-1, 1, 5)]
    spec = validated(distance_vs_cosine(pairs, curve, **LAB_TEXT))
    line, dots = spec["layer"]
    assert spec["datasets"][line["data"]["name"]] == [{"cosine": c, "distance": d, "what": "unit"} for c, d in curve]
    assert line["mark"] == {"type": "line", "color": OTHER_COLOUR, "strokeDash": [5, 4]}
    assert spec["datasets"][dots["data"]["name"]] == [{"pair": "苹果–香蕉", "cosine": 0.9, "distance": 0.4},
                                                      {"pair": "a–b", "cosine": -0.2, "distance": 1.5}]
    colour = dots["encoding"]["color"]
    assert colour["sort"] == ["苹果–香蕉", "a–b"] and colour["scale"] == {"domain": ["苹果–香蕉", "a–b"],
                                                                        "range": list(PAIR_COLOURS)}
    for layer in (line, dots):
        assert layer["encoding"]["x"]["scale"] == {"domain": [-1, 1]} and layer["encoding"]["y"]["scale"] == {"zero": True}
        assert [t.get("format") for t in layer["encoding"]["tooltip"]][-2:] == [".3f", ".3f"]
    assert spec["title"] == "t" and spec["height"] == 300
    alone = validated(distance_vs_cosine(pairs[:1], None, **LAB_TEXT))
    assert [layer["mark"]["type"] for layer in alone["layer"]] == ["point"]  # no curve asked for: none drawn


def test_similarity_by_stage_keeps_the_stages_order_and_shows_negative_cosines() -> None:
    stages = ["embed", "L0", "L1 out"]
    spec = validated(similarity_by_stage(stages, [1.0, 0.8, -0.3], title="t", x_title="stage", y_title="cos"))
    assert spec["datasets"][spec["data"]["name"]] == [{"stage": "embed", "cosine": 1.0, "shown": "1.000"},
                                                      {"stage": "L0", "cosine": 0.8, "shown": "0.800"},
                                                      {"stage": "L1 out", "cosine": -0.3, "shown": "-0.300"}]
    encoding = spec["encoding"]
    assert encoding["x"]["sort"] == stages and encoding["y"]["scale"] == {"domain": [-0.3, 1.0]}
    assert spec["mark"]["color"] == ARROW_COLOURS[0] and spec["height"] == 320
    positive = similarity_by_stage(stages, [1.0, 0.8, 0.3], title="t", x_title="stage", y_title="cos")
    assert positive["encoding"]["y"]["scale"] == {"domain": [0.0, 1.0]}  # the axis always shows 0
    validated(similarity_by_stage([], [], title="t", x_title="stage", y_title="cos"))
