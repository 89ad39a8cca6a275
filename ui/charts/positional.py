"""Charts of the positional-encoding page: the table, its waves, M_k, and RoPE's rotations.

Every chart is Vega-Lite, so the page never loads Plotly in the browser: heat maps one rectangle
per cell up to ``RECT_MAX_CELLS`` cells and one server-coloured image beyond (up to 256
positions × 512 dimensions, a foreign model's table: ``matrix_heatmap_vega``), the waves and
the 2-D rotation pictures as lines and arrows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ui.charts import palettes, vl
from ui.charts.common import wrap_title
from ui.charts.vectors import matrix_chart, matrix_heatmap_vega

__all__ = ["matrix_heatmap_vega", "matrix_chart", "waves", "frequency_chart",
           "rotation_panels_vega", "score_by_offset", "PairPanel", "RotationText"]

Q_COLOUR = palettes.BLUE  # the query
K_COLOUR = palettes.VERMILLION  # the key
SERIES_COLOURS = palettes.SERIES[:4]  # Okabe–Ito: apart for colour-blind eyes (and dashed: LINE_STYLES)
LINE_STYLES = ((7.0, [1, 0], 60), (3.5, [8, 5], 30), (1.5, [2, 3], 10))  # width, dash, point size


def waves(
    table: np.ndarray,
    pairs: Sequence[int],
    periods: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    series_label: str,
    period_title: str,
) -> vl.Spec:
    """PE value against position for the chosen pairs (sin dimension 2k solid, cos 2k+1 dashed).

    ``series_label`` is a format string with {dim}, {fn} and {k}, e.g. "dim {dim} ({fn}, pair {k})".

    Example: waves(table, [0, 3], periods, title="t", x_title="pos", y_title="PE", series_title="s", series_label="dim {dim} ({fn}, pair {k})", period_title="period")
    """
    n_pos = table.shape[0]
    rows = []
    for k in pairs:
        for offset, fn in ((0, "sin"), (1, "cos")):
            dim = 2 * k + offset
            series, period = series_label.format(dim=dim, fn=fn, k=k), f"{periods[k]:.1f}"
            rows += [{"position": position, "value": vl.json_number(value), "series": series, "fn": fn,
                      "period": period} for position, value in enumerate(table[:, dim].tolist())]
    order = list(dict.fromkeys(row["series"] for row in rows))
    body = {"mark": {"type": "line", "point": n_pos <= 64}, "encoding": {
        "color": vl.field("series", "nominal", legend={"labelLimit": 260}, sort=order, title=series_title),
        "strokeDash": vl.field("fn", "nominal", legend=None, scale=vl.scale(["sin", "cos"], [[1, 0], [6, 4]])),
        "tooltip": [vl.tooltip("series", series_title), vl.tooltip("position", x_title, "quantitative"),
                    vl.tooltip("value", y_title, "quantitative", format=".4f"), vl.tooltip("period", period_title)],
        "x": vl.field("position", "quantitative", title=x_title),
        "y": vl.field("value", "quantitative", scale={"domain": [-1.05, 1.05]}, title=y_title)}}
    return vl.spec(body, {vl.TABLE: rows}, title=title, height=320, data=vl.TABLE, autosized=False)


def frequency_chart(
    values: Sequence[float],
    periods: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    period_title: str,
) -> vl.Spec:
    """Radians per position of each rotation pair on a log axis (RoPE's θ_i): a straight line,
    because θ_i = base^(−2i/d) falls by the same factor from one pair to the next.

    Example: frequency_chart([1.0, 0.01], [6.28, 628.3], title="t", x_title="pair", y_title="θ", period_title="period")
    """
    rows = [{"pair": pair, "theta": vl.json_number(theta), "period": vl.json_number(period)}
            for pair, (theta, period) in enumerate(zip(values, periods))]
    body = {"mark": {"type": "line", "point": {"filled": True, "size": 60}}, "encoding": {
        "tooltip": [vl.tooltip("pair", x_title, "quantitative"),
                    vl.tooltip("theta", y_title, "quantitative", format=".6f"),
                    vl.tooltip("period", period_title, "quantitative", format=",.1f")],
        "x": vl.field("pair", "quantitative", axis={"tickMinStep": 1},
                      scale={"domain": [0, max(1, len(values) - 1)], "nice": False}, title=x_title),
        "y": vl.field("theta", "quantitative", scale={"type": "log"}, title=y_title)}}
    return vl.spec(body, {vl.TABLE: rows}, title=title, height=260, data=vl.TABLE, autosized=False)


@dataclass(frozen=True)
class PairPanel:
    """One frequency's 2-D picture, with its subplot title already written."""

    subtitle: str
    q: np.ndarray
    k: np.ndarray
    q_rotated: np.ndarray
    k_rotated: np.ndarray


@dataclass(frozen=True)
class RotationText:
    title: str
    q_before: str
    k_before: str
    q_after: str
    k_after: str
    axis_even: str  # e.g. "dim 2i"
    axis_odd: str


ROTATION_PANEL_PX = 210  # each 2-D picture is square: one unit is as long across as up
ROTATION_COLUMNS = 2  # four pictures as a 2 × 2 grid: ~600 px wide, readable from a phone to a projector


def rotation_panels_vega(panels: Sequence[PairPanel], *, text: RotationText) -> vl.Spec:
    """Side-by-side 2-D pictures: q and k before (faint, dashed) and after rotation (solid arrows).

    One square picture per pair, each with its own range (the pair's longer vector, plus 15 %)
    on both axes, so a rotation keeps its true angle; the arrow heads point along their arrows.
    Vega-Lite, written as a dict: a slider here rebuilds it, and the page then needs no Plotly.

    Example: rotation_panels_vega([PairPanel("pair 0", q, k, qr, kr)], text=RotationText(...))
    """
    styles = (("q", text.q_before), ("k", text.k_before), ("q_rotated", text.q_after), ("k_rotated", text.k_after))
    names = [name for _, name in styles]
    rows = []
    for index, panel in enumerate(panels):
        for attr, name in styles:
            vx, vy = (float(c) for c in getattr(panel, attr))
            # Vega turns a symbol clockwise from pointing up, on a screen whose y runs down.
            rows.append({"panel": index, "series": name, "x": vx, "y": vy, "zero": 0.0,
                         "angle": math.degrees(math.atan2(vx, vy)) % 360.0, "rotated": attr.endswith("_rotated")})
    # Colour and dash follow the series: Vega-Lite merges them into one legend whose four symbols
    # look like the four arrows. The vectors before rotation are also fainter.
    series = vl.field("series", "nominal", legend={"orient": "bottom", "title": None, "columns": 2, "labelLimit": 260},
                      sort=names)
    colour = {**series, "scale": vl.scale(names, [Q_COLOUR, K_COLOUR] * 2)}
    dash = {**series, "scale": vl.scale(names, [[6, 4], [6, 4], [1, 0], [1, 0]])}
    opacity = vl.condition("datum.rotated", 1.0, 0.5)
    tooltip = [vl.tooltip("series", " "), vl.tooltip("x", text.axis_even, "quantitative", format=".3f"),
               vl.tooltip("y", text.axis_odd, "quantitative", format=".3f")]
    pictures = []
    for index, panel in enumerate(panels):
        reach = max(float(np.linalg.norm(panel.q)), float(np.linalg.norm(panel.k)), 1e-9) * 1.15
        axis_scale = {"domain": [-reach, reach], "nice": False, "zero": False}
        x = vl.field("x", "quantitative", scale=axis_scale, title=text.axis_even)
        y = vl.field("y", "quantitative", scale=axis_scale, title=text.axis_odd)
        arrows = {"mark": {"type": "rule", "strokeWidth": 3}, "encoding": {
            "color": colour, "opacity": opacity, "strokeDash": dash, "tooltip": tooltip,
            "x": {**x, "field": "zero"}, "x2": {"field": "x"}, "y": {**y, "field": "zero"}, "y2": {"field": "y"}}}
        heads = {"mark": {"type": "point", "filled": True, "shape": "triangle-up", "size": 110}, "encoding": {
            "angle": vl.field("angle", "quantitative", scale=None),
            "color": colour, "opacity": opacity, "tooltip": tooltip, "x": x, "y": y}}
        pictures.append({
            "transform": [{"filter": f"datum.panel == {index}"}],
            "layer": [arrows, heads], "width": ROTATION_PANEL_PX, "height": ROTATION_PANEL_PX,
            # Each picture's title on short lines: in one line, two of them ran into each other.
            "title": {"text": wrap_title(panel.subtitle, 24), "fontSize": 12},
        })
    return {"data": {"name": "rotation"}, "concat": pictures, "columns": min(ROTATION_COLUMNS, max(1, len(panels))),
            "spacing": 28, "title": text.title, "$schema": vl.SCHEMA_URL, "datasets": {"rotation": rows}}


def score_by_offset(
    scores: np.ndarray,
    query_positions: Sequence[int],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    series_label: str,
) -> vl.Spec:
    """q·k against the offset m − n, one line per query position m; RoPE makes the lines coincide.

    ``series_label`` has a {m} placeholder. Offsets that do not exist (key before 0) are skipped.

    Example: score_by_offset(np.ones((2, 3)), [5, 9], title="t", x_title="Δ", y_title="q·k", series_title="m", series_label="m = {m}")
    """
    order = [series_label.format(m=m) for m in query_positions]
    colour = vl.field("series", "nominal", scale=vl.scale(order, SERIES_COLOURS[: len(order)]), sort=order,
                      title=series_title)
    tooltip = [vl.tooltip("series", series_title), vl.tooltip("offset", x_title, "quantitative"),
               vl.tooltip("score", y_title, "quantitative", format=".4f")]
    encoding = {"color": colour, "tooltip": tooltip, "x": vl.field("offset", "quantitative", title=x_title),
                "y": vl.field("score", "quantitative", title=y_title)}
    # One layer per curve, thick and solid first, then thinner and dashed: when the curves
    # coincide exactly (RoPE), every one of them still shows.
    layers, datasets = [], {}
    for index, (label, line) in enumerate(zip(order, np.asarray(scores, dtype=float).tolist())):
        name = f"series-{index}"
        datasets[name] = [{"offset": delta, "score": value, "series": label}
                          for delta, value in enumerate(line) if math.isfinite(value)]
        width, dash, point = LINE_STYLES[index % len(LINE_STYLES)]
        layers.append({"data": {"name": name}, "encoding": encoding,
                       "mark": {"type": "line", "point": {"size": point}, "strokeDash": dash, "strokeWidth": width}})
    return vl.spec({"layer": layers}, datasets, title=title, height=320, autosized=False)
