"""``ui.charts.common.bar_chart`` (the Embeddings page's neighbour and analogy bars) is written as
a Vega-Lite dict; it must be the spec the Altair chart it replaced wrote, key for key, with the
same rows, and valid Vega-Lite."""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import pandas as pd
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.charts.common import bar_chart, style_vega
from ui.charts.spec import chart_spec


def altair_bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str, x_title: str, y_title: str,
                     value_format: str = ".3f", highlight: Sequence[bool] | None = None,
                     horizontal: bool = True) -> alt.Chart:
    """The Altair builder ``bar_chart`` replaced (the reference)."""
    frame = pd.DataFrame({"label": list(labels), "value": list(values)})
    frame["shown"] = [format(v, value_format) for v in frame["value"]]
    frame["highlight"] = list(highlight) if highlight is not None else [True] * len(frame)
    label_enc = alt.Y if horizontal else alt.X
    value_enc = alt.X if horizontal else alt.Y
    chart = alt.Chart(frame).mark_bar().encode(
        label_enc("label:N", sort=list(labels), title=y_title if horizontal else x_title,
                  axis=alt.Axis(labelLimit=160)),
        value_enc("value:Q", title=x_title if horizontal else y_title),
        opacity=alt.condition("datum.highlight", alt.value(1.0), alt.value(0.3)),
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("shown:N", title=x_title if horizontal else y_title)],
    )
    if horizontal:
        return chart.properties(title=title, height=alt.Step(24))
    return chart.properties(title=title)


CASES = [
    ((["␣Paris  · #812", "巴黎  · #40", "<b>x</b>'\"{"], [0.91, 0.5, -0.125]), dict(title="T", x_title="cos", y_title="tok")),
    ((["a"], [1.0]), dict(title="离 北京 − 中国 + 西班牙 最近的词元", x_title="余弦", y_title="词元", value_format=".2f")),
    ((["a", "b", "c"], [0.3, 0.2, 0.1]), dict(title="T", x_title="x", y_title="y", highlight=[True, False, True])),
    ((["a", "b"], [0.3, 0.2]), dict(title="T", x_title="x", y_title="y", horizontal=False)),
]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_the_dict_is_the_spec_altair_wrote(index: int) -> None:
    args, kwargs = CASES[index]
    ours = bar_chart(*args, **kwargs)
    expected = chart_spec(altair_bar_chart(*args, **kwargs), validate=True)
    (name,) = expected["datasets"]
    rows = expected.pop("datasets")[name].to_dict(orient="records")
    expected["data"] = {"name": "table"}
    assert json.dumps({k: v for k, v in ours.items() if k != "datasets"}, sort_keys=True, ensure_ascii=False) == \
        json.dumps(expected, sort_keys=True, ensure_ascii=False)
    assert ours["datasets"]["table"] == rows
    assert list(ours["datasets"]["table"][0]) == list(rows[0])  # the columns in the data frame's order
    validate_jsonschema(json.loads(json.dumps(ours)), load_schema())
    validate_jsonschema(json.loads(json.dumps({**style_vega(ours, presenter=True), "datasets": {}})), load_schema())


def test_user_text_stays_data() -> None:
    label = "<img src=x onerror=alert(1)>"
    spec = bar_chart([label], [0.5], title="T", x_title="x", y_title="y")
    assert spec["datasets"]["table"][0]["label"] == label
    assert spec["encoding"]["y"]["sort"] == [label]
