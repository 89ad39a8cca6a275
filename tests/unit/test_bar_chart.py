"""``ui.charts.common.bar_chart`` (the Embeddings page's neighbour and analogy bars): valid
Vega-Lite, the bars in the given order with their exact values, highlighted ones opaque."""

from __future__ import annotations

import json

import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.charts.common import bar_chart, style_vega


CASES = [
    ((["␣Paris  · #812", "巴黎  · #40", "<b>x</b>'\"{"], [0.91, 0.5, -0.125]), dict(title="T", x_title="cos", y_title="tok")),
    ((["a"], [1.0]), dict(title="离 北京 − 中国 + 西班牙 最近的词元", x_title="余弦", y_title="词元", value_format=".2f")),
    ((["a", "b", "c"], [0.3, 0.2, 0.1]), dict(title="T", x_title="x", y_title="y", highlight=[True, False, True])),
    ((["a", "b"], [0.3, 0.2]), dict(title="T", x_title="x", y_title="y", horizontal=False)),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_bars_show_each_value_in_the_given_order(index: int) -> None:
    (labels, values), kwargs = CASES[index]
    ours = bar_chart(labels, values, **kwargs)
    validate_jsonschema(json.loads(json.dumps(ours)), load_schema())
    validate_jsonschema(json.loads(json.dumps({**style_vega(ours, presenter=True), "datasets": {}})), load_schema())
    horizontal = kwargs.get("horizontal", True)
    enc = ours["encoding"]
    label_axis, value_axis = (enc["y"], enc["x"]) if horizontal else (enc["x"], enc["y"])
    assert ours["title"] == kwargs["title"] and ours["mark"] == {"type": "bar"}
    assert label_axis["sort"] == labels and label_axis["axis"] == {"labelLimit": 160}
    assert label_axis["title"] == (kwargs["y_title"] if horizontal else kwargs["x_title"])
    assert value_axis["title"] == (kwargs["x_title"] if horizontal else kwargs["y_title"])
    assert enc["tooltip"] == [{"field": "label", "type": "nominal"},
                              {"field": "shown", "title": value_axis["title"], "type": "nominal"}]
    assert enc["opacity"] == {"condition": {"test": "datum.highlight", "value": 1.0}, "value": 0.3}
    assert ("height" in ours) is horizontal and ours.get("height", {"step": 24}) == {"step": 24}
    highlight = kwargs.get("highlight") or [True] * len(labels)
    fmt = kwargs.get("value_format", ".3f")
    assert ours["datasets"]["table"] == [{"label": lab, "value": v, "shown": format(v, fmt), "highlight": h}
                                         for lab, v, h in zip(labels, values, highlight)]


def test_user_text_stays_data() -> None:
    label = "<img src=x onerror=alert(1)>"
    spec = bar_chart([label], [0.5], title="T", x_title="x", y_title="y")
    assert spec["datasets"]["table"][0]["label"] == label
    assert spec["encoding"]["y"]["sort"] == [label]
