"""Charts of the two block pages (transformer block, whole model), as finished Vega-Lite dicts.

Every builder takes plain arrays and already-translated strings and returns a spec dict with a
title, axis titles and tooltips that carry the exact values; token labels arrive made visible
and unique. Builders are memoised process-wide (``ui.resources.memo``: same inputs -> the same
read-only dict, nothing pickled), so a rerun that changes nothing in a chart costs a lookup.
Draw them with ``ui.charts.common.vega`` (it themes a copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from ui.charts.common import CJK_FONT, cell_text_limit
from ui.resources import memo

Spec = dict[str, Any]
KIND_COLORS = {"embed": "#7048e8", "head": "#2f6fdb", "attn_bias": "#74c0fc", "mlp": "#e8590c", "norm_bias": "#868e96"}
SERIES_COLORS = ["#2f6fdb", "#e8590c", "#2f9e44", "#c2255c", "#9c36b5", "#868e96", "#c9a227"]


def _finish(chart: alt.TopLevelMixin, height: int | None = None) -> Spec:
    chart = chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    if height is not None:
        chart = chart.properties(height=height)
    return chart.configure(font=CJK_FONT).to_dict(validate=False)


def _fmt(values: Sequence[float], spec: str) -> list[str]:
    return [format(float(v), spec) for v in values]


@memo(maxsize=256)
def bars(labels: Sequence[str], values: Sequence[float], *, title: str, value_title: str, label_title: str,
         colors: Sequence[str] | None = None, color_title: str | None = None, color_labels: Sequence[str] | None = None,
         value_format: str = ".4f", height: int | None = None) -> Spec:
    """Horizontal bars in the given order; optional colour groups (``color_labels``) with a legend."""
    frame = pd.DataFrame({"label": list(labels), "value": [float(v) for v in values]})
    frame["shown"] = _fmt(frame["value"], value_format)
    enc: dict[str, Any] = {
        "y": alt.Y("label:N", sort=list(labels), title=label_title, axis=alt.Axis(labelLimit=180)),
        "x": alt.X("value:Q", title=value_title),
        "tooltip": [alt.Tooltip("label:N", title=label_title), alt.Tooltip("shown:N", title=value_title)],
    }
    if color_labels is not None:
        frame["group"] = list(color_labels)
        domain = list(dict.fromkeys(color_labels))
        palette = list(colors) if colors is not None else SERIES_COLORS[: len(domain)]
        enc["color"] = alt.Color("group:N", title=color_title, scale=alt.Scale(domain=domain, range=palette),
                                 legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=260, columns=2))
        enc["tooltip"].append(alt.Tooltip("group:N", title=color_title))
    chart = alt.Chart(frame).mark_bar().encode(**enc).properties(title=title)
    return _finish(chart, height or max(120, 22 * len(frame)))


@memo(maxsize=256)
def grouped_bars(categories: Sequence[str], series: Sequence[str], values: np.ndarray, *, title: str, x_title: str,
                 y_title: str, series_title: str, value_format: str = ".3f", height: int = 260) -> Spec:
    """values [series, category]: one bar per (category, series), side by side."""
    values = np.asarray(values, dtype=float)
    rows = [{"cat": c, "series": s, "value": float(values[i, j]), "shown": format(float(values[i, j]), value_format)}
            for i, s in enumerate(series) for j, c in enumerate(categories)]
    frame = pd.DataFrame(rows)
    chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X("cat:N", sort=list(categories), title=x_title, axis=alt.Axis(labelAngle=-40, labelLimit=120)),
        xOffset=alt.XOffset("series:N", sort=list(series)),
        y=alt.Y("value:Q", title=y_title),
        color=alt.Color("series:N", sort=list(series), title=series_title,
                        scale=alt.Scale(domain=list(series), range=SERIES_COLORS[: len(series)]),
                        legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=260, columns=2)),
        tooltip=[alt.Tooltip("cat:N", title=x_title), alt.Tooltip("series:N", title=series_title),
                 alt.Tooltip("shown:N", title=y_title)],
    ).properties(title=title)
    return _finish(chart, height)


@memo(maxsize=128)
def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, x_title: str, y_title: str,
          series_title: str, log_y: bool = False, marker_x: float | None = None, value_format: str = ".4f",
          height: int = 280, x_format: str = ".2f") -> Spec:
    """One line per series over x; an optional vertical marker with each series' value at marker_x."""
    rows = []
    for name, ys in series.items():
        for xv, yv in zip(x, ys):
            rows.append({"x": float(xv), "y": float(yv), "series": name, "shown": format(float(yv), value_format),
                         "x_shown": format(float(xv), x_format)})
    frame = pd.DataFrame(rows)
    names = list(series)
    color = alt.Color("series:N", sort=names, title=series_title,
                      scale=alt.Scale(domain=names, range=SERIES_COLORS[: len(names)]),
                      legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=300, columns=2))
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(zero=False)
    tooltip = [alt.Tooltip("series:N", title=series_title), alt.Tooltip("x_shown:N", title=x_title),
               alt.Tooltip("shown:N", title=y_title)]
    base = alt.Chart(frame)
    layers: list[Any] = [base.mark_line(point=len(x) <= 60).encode(
        x=alt.X("x:Q", title=x_title), y=alt.Y("y:Q", title=y_title, scale=y_scale), color=color, tooltip=tooltip)]
    if marker_x is not None:
        layers.append(alt.Chart(pd.DataFrame({"x": [float(marker_x)]})).mark_rule(strokeDash=[4, 3], color="#868e96")
                      .encode(x="x:Q"))
    chart = alt.layer(*layers).properties(title=title)
    return _finish(chart, height)


@memo(maxsize=128)
def heat(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *, title: str, x_title: str,
         y_title: str, value_title: str, diverging: bool = False, value_format: str = ".3f",
         text: np.ndarray | None = None, text_title: str | None = None, height: int | None = None) -> Spec:
    """A labelled matrix [row, col]; ``text`` (same shape, strings) is written in the cells and the tooltip."""
    m = np.asarray(matrix, dtype=float)
    rows = []
    for i, r in enumerate(row_labels):
        for j, c in enumerate(col_labels):
            row = {"row": r, "col": c, "value": float(m[i, j]), "shown": format(float(m[i, j]), value_format)}
            if text is not None:
                row["text"] = str(text[i][j])
            rows.append(row)
    frame = pd.DataFrame(rows)
    if diverging:
        bound = float(np.max(np.abs(m))) or 1.0
        scale = alt.Scale(scheme="redblue", domain=[-bound, bound], reverse=True)
    else:
        scale = alt.Scale(scheme="blues")
    x = alt.X("col:N", sort=list(col_labels), title=x_title, axis=alt.Axis(labelAngle=-45, labelLimit=120))
    y = alt.Y("row:N", sort=list(row_labels), title=y_title, axis=alt.Axis(labelLimit=180))  # "layer 2 after attention"
    tooltip = [alt.Tooltip("row:N", title=y_title), alt.Tooltip("col:N", title=x_title),
               alt.Tooltip("shown:N", title=value_title)]
    if text is not None:
        tooltip.insert(2, alt.Tooltip("text:N", title=text_title or ""))
    base = alt.Chart(frame)
    legend = alt.Legend(orient="bottom", direction="horizontal", titleLimit=400, gradientLength=220)
    layers: list[Any] = [base.mark_rect().encode(x=x, y=y, tooltip=tooltip,
                                                 color=alt.Color("value:Q", scale=scale, title=value_title, legend=legend))]
    if text is not None:
        lo, hi = float(np.min(m)), float(np.max(m))
        dark_above = (lo + hi) / 2 if not diverging else float(np.max(np.abs(m))) / 2
        light = f"abs(datum.value) > {dark_above!r}" if diverging else f"datum.value > {dark_above!r}"
        layers.append(base.mark_text(fontSize=11, limit=cell_text_limit()).encode(
            x=x, y=y, text="text:N", tooltip=tooltip,
            color=alt.condition(light, alt.value("#ffffff"), alt.value("#111111"))))
    chart = alt.layer(*layers).properties(title=title)
    return _finish(chart, height or max(160, 26 * len(row_labels) + 20))


@memo(maxsize=128)
def stacked_share(labels: Sequence[str], values: Sequence[int], *, title: str, x_title: str, color_title: str,
                  bar_label: str, colors: Sequence[str] | None = None) -> Spec:
    """One horizontal bar split into components (parameters), each with its exact count and share."""
    total = float(sum(values)) or 1.0
    frame = pd.DataFrame({"part": list(labels), "value": [int(v) for v in values], "bar": bar_label})
    frame["shown"] = [f"{int(v):,}" for v in frame["value"]]
    frame["share"] = [f"{100 * v / total:.1f} %" for v in frame["value"]]
    frame["order"] = range(len(frame))
    chart = alt.Chart(frame).mark_bar().encode(
        x=alt.X("value:Q", title=x_title, stack="zero"),
        y=alt.Y("bar:N", title=None),
        color=alt.Color("part:N", sort=list(labels), title=color_title,
                        scale=alt.Scale(domain=list(labels), range=list(colors or SERIES_COLORS[: len(labels)])),
                        legend=alt.Legend(orient="bottom", direction="horizontal", labelLimit=260, columns=2)),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("part:N", title=color_title), alt.Tooltip("shown:N", title=x_title),
                 alt.Tooltip("share:N", title="%")],
    ).properties(title=title)
    return _finish(chart, 70)
