"""Charts of the positional-encoding page: the table, its waves, M_k, and RoPE's rotations.

Large matrices (up to 256 positions × 512 dimensions) go to Plotly heatmaps
(``matrix_heatmap``), which draw one image instead of one SVG mark per cell; lines and small
charts use Altair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts.common import CJK_FONT, figure_dict, wrap_title
from ui.charts.vectors import matrix_heatmap, matrix_heatmap_spec

__all__ = ["matrix_heatmap", "matrix_heatmap_spec", "waves", "frequency_chart", "rotation_panels",
           "rotation_panels_spec", "score_by_offset", "PairPanel", "RotationText"]

Q_COLOUR = "#2f6fdb"  # blue: the query
K_COLOUR = "#e8590c"  # orange: the key
SERIES_COLOURS = ("#2f6fdb", "#e8590c", "#2b9348", "#9c36b5")
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
) -> alt.Chart:
    """PE value against position for the chosen pairs (sin dimension 2k solid, cos 2k+1 dashed).

    ``series_label`` is a format string with {dim}, {fn} and {k}, e.g. "dim {dim} ({fn}, pair {k})".

    Example: waves(table, [0, 3], periods, title="t", x_title="pos", y_title="PE", series_title="s", series_label="dim {dim} ({fn}, pair {k})", period_title="period")
    """
    n_pos = table.shape[0]
    frames = []
    for k in pairs:
        for offset, fn in ((0, "sin"), (1, "cos")):
            dim = 2 * k + offset
            frames.append(pd.DataFrame({
                "position": np.arange(n_pos),
                "value": table[:, dim],
                "series": series_label.format(dim=dim, fn=fn, k=k),
                "fn": fn,
                "period": f"{periods[k]:.1f}",
            }))
    frame = pd.concat(frames, ignore_index=True)
    order = list(dict.fromkeys(frame["series"]))
    return alt.Chart(frame).mark_line(point=n_pos <= 64).encode(
        x=alt.X("position:Q", title=x_title),
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(domain=[-1.05, 1.05])),
        color=alt.Color("series:N", title=series_title, sort=order, legend=alt.Legend(labelLimit=260)),
        strokeDash=alt.StrokeDash("fn:N", legend=None,
                                  scale=alt.Scale(domain=["sin", "cos"], range=[[1, 0], [6, 4]])),
        tooltip=[alt.Tooltip("series:N", title=series_title), alt.Tooltip("position:Q", title=x_title),
                 alt.Tooltip("value:Q", format=".4f", title=y_title), alt.Tooltip("period:N", title=period_title)],
    ).properties(title=title, height=320)


def frequency_chart(
    values: Sequence[float],
    periods: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    period_title: str,
) -> alt.Chart:
    """Radians per position of each rotation pair on a log axis (RoPE's θ_i): a straight line,
    because θ_i = base^(−2i/d) falls by the same factor from one pair to the next.

    Example: frequency_chart([1.0, 0.01], [6.28, 628.3], title="t", x_title="pair", y_title="θ", period_title="period")
    """
    frame = pd.DataFrame({"pair": np.arange(len(values)), "theta": list(values), "period": list(periods)})
    return alt.Chart(frame).mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=alt.X("pair:Q", title=x_title, axis=alt.Axis(tickMinStep=1),
                scale=alt.Scale(domain=[0, max(1, len(values) - 1)], nice=False)),
        y=alt.Y("theta:Q", title=y_title, scale=alt.Scale(type="log")),
        tooltip=[alt.Tooltip("pair:Q", title=x_title), alt.Tooltip("theta:Q", format=".6f", title=y_title),
                 alt.Tooltip("period:Q", format=",.1f", title=period_title)],
    ).properties(title=title, height=260)


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


ROTATION_SPACING = 0.06  # between the panels, as a share of the figure's width


def _rotation_raw(panels: Sequence[PairPanel], *, text: RotationText) -> dict:
    """Side-by-side 2-D pictures: q and k before (faint, dashed) and after rotation (solid arrows).

    The subplot layout is written out as one dict (what ``make_subplots`` + ``add_trace(row, col)``
    + per-axis updates produce, at a fraction of the cost: a slider here rebuilds the figure).

    Example: rotation_panels([PairPanel("pair 0", q, k, qr, kr)], text=RotationText(...))
    """
    count = max(1, len(panels))
    width = (1.0 - ROTATION_SPACING * (count - 1)) / count
    styles = (
        ("q", text.q_before, Q_COLOUR, "dash", 0.45),
        ("k", text.k_before, K_COLOUR, "dash", 0.45),
        ("q_rotated", text.q_after, Q_COLOUR, "solid", 1.0),
        ("k_rotated", text.k_after, K_COLOUR, "solid", 1.0),
    )
    layout: dict = {
        # The title pinned to the very top, and room under it for subplot titles of up to three
        # lines: in the middle of the margin a two-line title (phone, presenter) sat on them.
        "title": {"text": text.title, "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": 8}},
        "height": 460,
        "margin": {"l": 10, "r": 10, "t": 150, "b": 10},
        "hoverlabel": {"font": {"family": CJK_FONT}},
        "legend": {"orientation": "h", "y": -0.3},  # below the "dim 2i" axis titles, not on them
        "annotations": [],
    }
    traces = []
    for col, panel in enumerate(panels, start=1):
        suffix = "" if col == 1 else str(col)
        x0 = (col - 1) * (width + ROTATION_SPACING)
        x1 = min(1.0, x0 + width)
        reach = max(float(np.linalg.norm(panel.q)), float(np.linalg.norm(panel.k)), 1e-9) * 1.15
        for attr, name, colour, dash, opacity in styles:
            vx, vy = (float(c) for c in getattr(panel, attr))
            traces.append({
                "type": "scatter", "x": [0.0, vx], "y": [0.0, vy], "mode": "lines+markers",
                "line": {"color": colour, "dash": dash, "width": 3},
                "marker": {"symbol": ["circle", "arrow"], "size": [4, 14], "angleref": "previous", "color": colour},
                "opacity": opacity, "name": name, "legendgroup": name, "showlegend": col == 1,
                "hovertemplate": f"{name}<br>(%{{x:.3f}}, %{{y:.3f}})<extra></extra>",
                "xaxis": f"x{suffix}", "yaxis": f"y{suffix}",
            })
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": [x0, x1], "range": [-reach, reach],
                                    "zeroline": True, "title": {"text": text.axis_even}}
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": [0.0, 1.0], "range": [-reach, reach],
                                    "zeroline": True, "title": {"text": text.axis_odd},
                                    "scaleanchor": f"x{suffix}", "scaleratio": 1}
        # Each subplot title on two short lines: in one line, four of them ran into each other.
        layout["annotations"].append({
            "font": {"size": 12}, "showarrow": False, "text": wrap_title(panel.subtitle, 24).replace("\n", "<br>"),
            "x": (x0 + x1) / 2, "xanchor": "center", "xref": "paper", "y": 1.0, "yanchor": "bottom", "yref": "paper",
        })
    return {"data": traces, "layout": layout}


def rotation_panels(panels: Sequence[PairPanel], *, text: RotationText) -> go.Figure:
    """``_rotation_raw``'s pictures as a ``go.Figure`` (the page draws ``rotation_panels_spec``)."""
    return go.Figure(_rotation_raw(panels, text=text))


def rotation_panels_spec(panels: Sequence[PairPanel], *, text: RotationText) -> dict:
    """``rotation_panels(...).to_dict()`` written directly (``ui.charts.common.figure_dict``; a test
    compares them): moving m or n redraws the pictures without building and validating a Figure."""
    return figure_dict(_rotation_raw(panels, text=text))


def score_by_offset(
    scores: np.ndarray,
    query_positions: Sequence[int],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    series_label: str,
) -> alt.Chart:
    """q·k against the offset m − n, one line per query position m; RoPE makes the lines coincide.

    ``series_label`` has a {m} placeholder. Offsets that do not exist (key before 0) are skipped.

    Example: score_by_offset(np.ones((2, 3)), [5, 9], title="t", x_title="Δ", y_title="q·k", series_title="m", series_label="m = {m}")
    """
    rows = []
    for row, m in enumerate(query_positions):
        for delta, value in enumerate(scores[row]):
            if math.isfinite(float(value)):
                rows.append({"offset": delta, "score": float(value), "series": series_label.format(m=m)})
    frame = pd.DataFrame(rows, columns=["offset", "score", "series"])
    order = [series_label.format(m=m) for m in query_positions]
    colour = alt.Color("series:N", title=series_title, sort=order,
                       scale=alt.Scale(domain=order, range=list(SERIES_COLOURS[: len(order)])))
    tooltip = [alt.Tooltip("series:N", title=series_title), alt.Tooltip("offset:Q", title=x_title),
               alt.Tooltip("score:Q", format=".4f", title=y_title)]
    # One layer per curve, thick and solid first, then thinner and dashed: when the curves
    # coincide exactly (RoPE), every one of them still shows.
    layers = []
    for index, label in enumerate(order):
        style = LINE_STYLES[index % len(LINE_STYLES)]
        layers.append(
            alt.Chart(frame[frame["series"] == label]).mark_line(
                strokeWidth=style[0], strokeDash=style[1], point=alt.OverlayMarkDef(size=style[2])
            ).encode(x=alt.X("offset:Q", title=x_title), y=alt.Y("score:Q", title=y_title), color=colour,
                     tooltip=tooltip)
        )
    return alt.layer(*layers).properties(title=title, height=320)
