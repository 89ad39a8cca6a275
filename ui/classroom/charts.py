"""The reveal's charts: the class's answers beside the model's probabilities, and a multiple-choice
count. Plain rows and translated strings in, a Vega-Lite spec out (``ui.charts.vl``); drawn with
``ui.charts.common.vega`` (theme, presenter sizes, the chart's name, summary and table).

Answers are student text: Vega draws them as text (never HTML), and the table under the chart
escapes them (``ui.chart_table``).

Example: share_chart([("Paris", 0.75, 0.62)], title="t", x_title="share", y_title="answer",
    series_title="who", class_label="class", model_label="model")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ui.charts import palettes, vl
from ui.charts.output import LABEL_TEXT
from ui.charts.vl import TABLE

PROB_TICKS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
CLASS_COLOR = palettes.ORANGE
MODEL_COLOR = palettes.BLUE
BAR_STEP = 18  # px per bar: readable from the back in presenter mode (fonts scale there too)
TOKEN_STEP = 24  # px per token row: room for its label (a CJK glyph is taller than a Latin one)


def share_chart(rows: Sequence[tuple[str, float, float | None]], *, title: str, x_title: str, y_title: str,
                series_title: str, class_label: str, model_label: str, no_token: str) -> dict[str, Any]:
    """Per answer, two bars: the share of the class that gave it and the model's probability of it
    (a missing one, ``None``, is drawn as 0 and its label says ``no_token``)."""
    data = []
    for answer, share, model in rows:
        data.append({"answer": answer, "who": class_label, "value": vl.json_number(share), "shown": f"{share:.0%}"})
        data.append({"answer": answer, "who": model_label, "value": vl.json_number(model or 0.0),
                     "shown": no_token if model is None else f"{model:.1%}"})
    order = [answer for answer, _, _ in rows]
    y = vl.field("answer", "nominal", sort=order, title=y_title, axis={"labelLimit": 200})
    x = vl.field("value", "quantitative", title=x_title, scale={"domain": [0, 1.15]},
                 axis={"values": PROB_TICKS, "format": ".0%"})
    color = vl.field("who", "nominal", title=series_title,
                     scale=vl.scale([class_label, model_label], [CLASS_COLOR, MODEL_COLOR]), legend=vl.legend_below())
    tooltip = [vl.tooltip("answer", y_title), vl.tooltip("who", series_title), vl.tooltip("shown", x_title)]
    offset = vl.field("who", "nominal", sort=[class_label, model_label])  # the two bars of an answer, side by side
    body = {"layer": [
        {"mark": {"type": "bar"}, "encoding": {"y": y, "x": x, "yOffset": offset, "color": color, "tooltip": tooltip}},
        {"mark": {"type": "text", "align": "left", "dx": 3, "color": LABEL_TEXT},
         "encoding": {"y": y, "x": x, "yOffset": offset, "text": vl.field("shown", "nominal")}},
    ]}
    return vl.spec(body, {TABLE: data}, title=title, height={"step": BAR_STEP * 2}, data=TABLE)


def choice_chart(labels: Sequence[str], counts: Sequence[int], correct: int | None, *, title: str, x_title: str,
                 y_title: str, mark_title: str, right: str, other: str) -> dict[str, Any]:
    """One bar per option: how many chose it; the right option (if the teacher gave one) in its
    own colour and named in the legend (colour is never the only cue: its label says it too)."""
    data = [{"option": label, "count": int(n), "kind": right if i == correct else other, "shown": str(int(n))}
            for i, (label, n) in enumerate(zip(labels, counts))]
    y = vl.field("option", "nominal", sort=list(labels), title=y_title, axis={"labelLimit": 240})
    x = vl.field("count", "quantitative", title=x_title, axis={"tickMinStep": 1, "format": "d"})
    color = vl.field("kind", "nominal", title=mark_title, scale=vl.scale([right, other], [palettes.BLUISH_GREEN,
                                                                                          palettes.NEUTRAL_GREY]),
                     legend=vl.legend_below())
    tooltip = [vl.tooltip("option", y_title), vl.tooltip("shown", x_title)]
    body = {"layer": [
        {"mark": {"type": "bar"}, "encoding": {"y": y, "x": x, "color": color, "tooltip": tooltip}},
        {"mark": {"type": "text", "align": "left", "dx": 3, "color": LABEL_TEXT},
         "encoding": {"y": y, "x": x, "text": vl.field("shown", "nominal")}},
    ]}
    return vl.spec(body, {TABLE: data}, title=title, height={"step": BAR_STEP * 2}, data=TABLE)


def count_chart(labels: Sequence[str], counts: Sequence[int], *, title: str, x_title: str,
                y_title: str) -> dict[str, Any]:
    """One bar per label (a token of the prompt) with its count written beside it, in label order.

    Example: count_chart(["0 · The", "1 · cat"], [3, 1], title="t", x_title="students", y_title="token")
    """
    data = [{"label": label, "count": int(n), "shown": str(int(n))} for label, n in zip(labels, counts)]
    # Every token keeps its label (none hidden to avoid an overlap), and the longest bar its count.
    y = vl.field("label", "nominal", sort=list(labels), title=y_title, axis={"labelLimit": 200, "labelOverlap": False})
    x = vl.field("count", "quantitative", title=x_title, scale={"domain": [0, max([1, *counts]) * 1.15]},
                 axis={"tickMinStep": 1, "format": "d"})
    tooltip = [vl.tooltip("label", y_title), vl.tooltip("shown", x_title)]
    body = {"layer": [
        {"mark": {"type": "bar", "color": CLASS_COLOR}, "encoding": {"y": y, "x": x, "tooltip": tooltip}},
        {"mark": {"type": "text", "align": "left", "dx": 3, "color": LABEL_TEXT},
         "encoding": {"y": y, "x": x, "text": vl.field("shown", "nominal")}},
    ]}
    return vl.spec(body, {TABLE: data}, title=title, height={"step": TOKEN_STEP}, data=TABLE)
