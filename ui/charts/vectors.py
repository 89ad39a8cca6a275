"""Charts of vectors: matrix heat maps, the similarity lab's lines, the map's words and colours.

Builders take plain arrays and already-translated text; they compute nothing beyond layout.
Vega-Lite draws the 2-D charts; the 3-D views (the map, the lab's arrows) are
``ui.components.space3d``, fed by ``ui.charts.space3d`` with the colours defined here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

OTHER_COLOUR = "#9e9e9e"  # grey: tokens that belong to no category
PROMPT_COLOUR = "#ff7f0e"  # orange ring: readable on the white and the dark theme
# The "Bold" then "Safe" qualitative palettes (CARTO; as Plotly ships them): they read on both
# themes. Bold's grey is reserved for "other" and its orange for the prompt's tokens, and Safe's
# grey dropped, so none of them is used for a category.
CATEGORY_COLOURS: tuple[str, ...] = (
    "#7f3c8d", "#11a579", "#3969ac", "#f2b701", "#e73f74", "#80ba5a", "#008695", "#cf1c90", "#f97b72",
    "#88ccee", "#cc6677", "#ddcc77", "#117733", "#332288", "#aa4499", "#44aa99", "#999933", "#882255", "#661100",
)
MAX_ANNOTATED_CELLS = 400  # beyond this, numbers in cells are unreadable: hover instead
PAIR_COLOURS: tuple[str, ...] = ("#7048e8", "#1098ad", "#f59f00", "#d6336c", "#37b24d", "#868e96")
ARROW_COLOURS: tuple[str, ...] = ("#2f6fdb", "#e8590c", "#2b9348", "#9c36b5", "#c92a2a", "#1098ad")


RECT_MAX_CELLS = 4096


def matrix_heatmap_vega(
    matrix: np.ndarray,
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    symmetric: bool = True,
    height: int = 420,
    bound: float | None = None,
    cell_px: int | None = None,
) -> dict:
    """``matrix_heatmap_spec``'s picture as a Vega-Lite spec, rows top to bottom.

    Up to ``RECT_MAX_CELLS`` cells: one rectangle per cell, the exact value on hover (and in the
    cells when at most ``MAX_ANNOTATED_CELLS``). Beyond: one image coloured on the server with
    Vega's own scheme, under the same axes and legend (``_heat_image_spec``), for any size (a
    foreign model's 1024 × 768 table). Either way the page loads no Plotly in the browser:
    4.7 MB of JavaScript, and its drawing, were most of the Positional-encoding page's first visit.
    ``height`` is the whole chart's, as for the Plotly figure; ``bound`` as there. ``cell_px``
    draws square cells of that size instead (a small matrix such as M_k, drawn at its own width).

    Example: matrix_heatmap_vega(np.eye(2), title="I", x_title="col", y_title="row", value_title="v")
    """
    values = np.asarray(matrix, dtype=np.float32)
    rows, cols = values.shape
    if (x_labels is not None and len(x_labels) != cols) or (y_labels is not None and len(y_labels) != rows):
        raise ValueError(f"labels do not fit the {rows}×{cols} matrix")
    if bound is None:
        finite = values[np.isfinite(values)]
        bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    bound = bound if bound > 0 else 1.0
    if rows * cols > RECT_MAX_CELLS:
        return _heat_image_spec(values, title=title, x_title=x_title, y_title=y_title, value_title=value_title,
                                x_labels=x_labels, y_labels=y_labels, symmetric=symmetric, height=height, bound=bound)
    ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    # Labels are plain text to Vega (drawn, never parsed as HTML); numbers stay numbers (smaller
    # to send, sorted as numbers). A label list goes in as strings, in its own order.
    row_field = np.asarray(list(y_labels), dtype=object)[ii.ravel()] if y_labels is not None else ii.ravel()
    col_field = np.asarray(list(x_labels), dtype=object)[jj.ravel()] if x_labels is not None else jj.ravel()
    frame = pd.DataFrame({"row": row_field, "col": col_field, "value": values.ravel()})
    dense_x, dense_y = cols > 32, rows > 32
    upright = x_labels is None or all(len(str(label)) <= 4 for label in x_labels)  # numbers stay level
    x = {"axis": {"labelAngle": 0 if upright else -45, "labelOverlap": dense_x}, "field": "col",
         "title": x_title, "type": "ordinal"}
    y = {"axis": {"labelLimit": 160, "labelOverlap": dense_y}, "field": "row", "title": y_title, "type": "ordinal"}
    if x_labels is not None:
        x["sort"] = list(x_labels)
    if y_labels is not None:
        y["sort"] = list(y_labels)
    colour = {"field": "value", "scale": _colour_scale(symmetric, bound), "title": value_title, "type": "quantitative"}
    # A hairline of the cell's own colour: cells of fractional size leave pale seams without it
    # (rounding them to whole pixels instead left a phone's 128 columns 1 px wide).
    cells = {"mark": {"type": "rect", "strokeWidth": 0.6}, "encoding": {
        "color": colour, "stroke": {**colour, "legend": None},
        "tooltip": [{"field": "row", "title": y_title, "type": y["type"]},
                    {"field": "col", "title": x_title, "type": x["type"]},
                    {"field": "value", "format": ".4f", "title": value_title, "type": "quantitative"}],
        "x": x, "y": y}}
    layers = [cells]
    if rows * cols <= MAX_ANNOTATED_CELLS:
        # Dark ink on pale cells, white on the saturated ends of the scale.
        layers.append({"mark": {"type": "text", "fontSize": 10}, "encoding": {
            "color": {"condition": {"test": f"abs(datum.value) > {0.6 * bound!r}", "value": "#ffffff"},
                      "value": "#111111"},
            "text": {"field": "value", "format": ".2f", "type": "quantitative"},
            "x": x, "y": y}})
    # The hairline's legend apart from the colour's (merged, Vega drew circles, not the gradient).
    spec: dict[str, Any] = {"data": {"name": "matrix"}, "layer": layers,
                            "resolve": {"legend": {"stroke": "independent"}}}
    if cell_px:
        spec.update({"width": {"step": int(cell_px)}, "height": {"step": int(cell_px)}})
    else:
        spec["height"] = int(height)  # the whole chart's: Streamlit fits a stretched chart to its size
    # Drawn on a canvas: as SVG, 128 × 128 cells were ~30,000 DOM changes for the browser to lay out.
    spec.update({"title": title, "usermeta": {"embedOptions": {"renderer": "canvas"}},
                 "$schema": alt.SCHEMA_URL, "datasets": {"matrix": frame}})
    return spec


SEQUENTIAL_EXTENT = (0.12, 1.0)  # the blues from 12 %: a zero stays visible on the dark theme


def _colour_scale(symmetric: bool, bound: float) -> dict:
    """Negative blue, zero pale, positive red over [−bound, bound]; or blues over the data's range."""
    if symmetric:
        return {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    return {"scheme": {"name": "blues", "extent": list(SEQUENTIAL_EXTENT)}}


def _heat_image_spec(values: np.ndarray, *, title: str, x_title: str, y_title: str, value_title: str,
                     x_labels: Sequence[str] | None, y_labels: Sequence[str] | None, symmetric: bool, height: int,
                     bound: float) -> dict:
    """``matrix_heatmap_vega`` for a big matrix: one image coloured here (``ui.charts.heat_image``)
    stretched over the plot, under two ordinal axes whose bands are exactly its rows and columns,
    and an invisible layer that draws the colour legend from the same scale as the cells'."""
    from ui.charts.heat_image import heat_png, png_data_url

    rows, cols = values.shape
    png = heat_png(values, symmetric=symmetric, bound=bound, scheme="redblue" if symmetric else "blues",
                   extent=(0.0, 1.0) if symmetric else SEQUENTIAL_EXTENT)
    band = {"paddingInner": 0, "paddingOuter": 0, "type": "band"}  # band i = pixel row/column i of the image
    row_names = list(y_labels) if y_labels is not None else list(range(rows))
    col_names = list(x_labels) if x_labels is not None else list(range(cols))
    upright = x_labels is None or all(len(str(label)) <= 4 for label in x_labels)
    x = {"axis": {"labelAngle": 0 if upright else -45, "labelOverlap": cols > 32}, "field": "col", "scale": band,
         "sort": col_names, "title": x_title, "type": "ordinal"}
    y = {"axis": {"labelLimit": 160, "labelOverlap": rows > 32}, "field": "row", "scale": band, "sort": row_names,
         "title": y_title, "type": "ordinal"}
    hidden = {"type": "point", "opacity": 0, "size": 0}
    finite = values[np.isfinite(values)]
    ends = [-bound, bound] if symmetric else ([float(finite.min()), float(finite.max())] if finite.size else [0.0, 1.0])
    layers = [
        {"data": {"values": [{"url": png_data_url(png)}]},
         "mark": {"type": "image", "align": "left", "baseline": "top", "aspect": False, "smooth": False,
                  "width": {"expr": "width"}, "height": {"expr": "height"}},  # sharp cells, the whole plot
         "encoding": {"url": {"field": "url", "type": "nominal"}, "x": {"value": 0}, "y": {"value": 0}}},
        {"data": {"values": [{"col": name} for name in col_names]}, "mark": hidden, "encoding": {"x": x}},
        {"data": {"values": [{"row": name} for name in row_names]}, "mark": hidden, "encoding": {"y": y}},
        {"data": {"values": [{"value": end} for end in ends]}, "mark": hidden, "encoding": {
            "color": {"field": "value", "scale": _colour_scale(symmetric, bound), "title": value_title,
                      "type": "quantitative"}}},
    ]
    return {"layer": layers, "height": int(height), "title": title,
            "usermeta": {"embedOptions": {"renderer": "canvas"}}, "$schema": alt.SCHEMA_URL}


def matrix_chart(matrix: np.ndarray, *, key: str, cell_px: int | None = None, **text: Any) -> None:
    """Draw ``matrix_heatmap_vega`` (built once per input, shared by every session) in a container
    keyed ``key`` (one selector for tests and benches); with ``cell_px`` the chart keeps its own
    width (square cells) instead of the column's.

    Example: matrix_chart(pe, key="pe_heatmap", title="PE", x_title="dim", y_title="pos", value_title="v")
    """
    import streamlit as st

    from ui.charts.common import vega_cached

    with st.container(key=key):
        vega_cached(matrix_heatmap_vega, (matrix,), {**text, "cell_px": cell_px},
                    width="content" if cell_px else "stretch", key=f"{key}_chart")


def distance_vs_cosine(
    pairs: Sequence[tuple[str, float, float]],
    curve: Sequence[tuple[float, float]] | None,
    *,
    title: str,
    x_title: str,
    y_title: str,
    pair_title: str,
    curve_label: str,
) -> alt.Chart:
    """Each pair as a point (cosine, distance); optionally the curve d = √(2 − 2 cos) of unit vectors.

    Example: distance_vs_cosine([("a–b", 0.9, 0.4)], None, title="t", x_title="cos", y_title="d", pair_title="pair", curve_label="unit")
    """
    points = pd.DataFrame({
        "pair": [p for p, _, _ in pairs],
        "cosine": [c for _, c, _ in pairs],
        "distance": [d for _, _, d in pairs],
    })
    x = alt.X("cosine:Q", title=x_title, scale=alt.Scale(domain=[-1, 1]))
    y = alt.Y("distance:Q", title=y_title, scale=alt.Scale(zero=True))
    layers: list[alt.Chart] = []
    if curve is not None:
        line = pd.DataFrame({"cosine": [c for c, _ in curve], "distance": [d for _, d in curve], "what": curve_label})
        layers.append(alt.Chart(line).mark_line(strokeDash=[5, 4], color=OTHER_COLOUR).encode(
            x=x, y=y, tooltip=[alt.Tooltip("cosine:Q", format=".3f", title=x_title),
                               alt.Tooltip("distance:Q", format=".3f", title=y_title)]))
    dots = alt.Chart(points).encode(
        x=x, y=y,
        # Pairs get their own palette (not the words' arrow colours) and keep the table's order.
        color=alt.Color("pair:N", title=pair_title, sort=list(points["pair"]),
                        scale=alt.Scale(domain=list(points["pair"]), range=list(PAIR_COLOURS))),
        tooltip=[alt.Tooltip("pair:N", title=pair_title), alt.Tooltip("cosine:Q", format=".3f", title=x_title),
                 alt.Tooltip("distance:Q", format=".3f", title=y_title)],
    )
    layers.append(dots.mark_point(size=140, filled=True, opacity=0.9))
    return alt.layer(*layers).properties(title=title, height=300)


@dataclass(frozen=True)
class MapText:
    """Every translated string the 3-D map shows."""

    title: str
    axis: str  # e.g. "PC{n} ({share} of variance)" — {n} and {share} filled in here
    token: str
    token_id: str
    category: str
    other: str
    prompt: str


def similarity_by_stage(
    stage_labels: Sequence[str],
    cosines: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
) -> alt.Chart:
    """Cosine of one word's vector in two prompts, at each point of the residual stream.

    Example: similarity_by_stage(["embed", "L0"], [1.0, 0.8], title="t", x_title="stage", y_title="cos")
    """
    frame = pd.DataFrame({"stage": list(stage_labels), "cosine": list(cosines)})
    frame["shown"] = [f"{c:.3f}" for c in frame["cosine"]]
    low = min(0.0, float(np.min(cosines))) if len(cosines) else 0.0
    base = alt.Chart(frame).encode(
        x=alt.X("stage:N", sort=list(stage_labels), title=x_title, axis=alt.Axis(labelAngle=-35, labelLimit=200)),
        y=alt.Y("cosine:Q", title=y_title, scale=alt.Scale(domain=[low, 1.0])),
        tooltip=[alt.Tooltip("stage:N", title=x_title), alt.Tooltip("shown:N", title=y_title)],
    )
    line = base.mark_line(point=alt.OverlayMarkDef(size=70, filled=True), color=ARROW_COLOURS[0])
    return line.properties(title=title, height=320)
