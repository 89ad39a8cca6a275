"""Charts of vectors: matrix heat maps, the similarity lab's lines, the map's words and colours.

Builders take plain arrays and already-translated text; they compute nothing beyond layout.
Vega-Lite draws the 2-D charts; the 3-D views (the map, the lab's arrows) are
``ui.components.space3d``, fed by ``ui.charts.space3d`` with the colours defined here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ui.charts import access, palettes, vl

OTHER_COLOUR = palettes.NEUTRAL_GREY  # grey: tokens that belong to no category
PROMPT_COLOUR = "#ff7f0e"  # orange ring: readable on the white and the dark theme
# Okabe–Ito and four colours searched to stay as far apart (ui.charts.palettes): each category
# stays distinct from every other and from "other" for colour-blind eyes too; the legend and
# the hover name each dot's group.
CATEGORY_COLOURS: tuple[str, ...] = tuple(c.lower() for c in palettes.CATEGORIES)
MAX_ANNOTATED_CELLS = 400  # beyond this, numbers in cells are unreadable: hover instead
PAIR_COLOURS: tuple[str, ...] = palettes.SERIES[:5] + (palettes.NEUTRAL_GREY,)
ARROW_COLOURS: tuple[str, ...] = palettes.SERIES[:6]


RECT_MAX_CELLS = 4096
MATRIX = "matrix"  # the cell-by-cell heat map's dataset


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
) -> vl.Spec:
    """A matrix as a Vega-Lite heat map, rows top to bottom: negative blue, positive red
    (``symmetric``), or light to dark blue.

    Up to ``RECT_MAX_CELLS`` cells: one rectangle per cell, the exact value on hover (and in the
    cells when at most ``MAX_ANNOTATED_CELLS``). Beyond: one image coloured on the server with
    Vega's own scheme, under the same axes and legend (``_heat_image_spec``), for any size (a
    foreign model's 1024 × 768 table). Either way the page loads no Plotly in the browser:
    4.7 MB of JavaScript, and its drawing, were most of the Positional-encoding page's first visit.
    ``height`` is the whole chart's; ``bound`` fixes the colour range at ±bound (several maps on
    one scale), else the largest finite |value|. ``cell_px`` draws square cells of that size
    instead (a small matrix such as M_k, drawn at its own width).

    Example: matrix_heatmap_vega(np.eye(2), title="I", x_title="col", y_title="row", value_title="v")
    """
    values = np.asarray(matrix, dtype=np.float32)  # the precision a heat map shows (its tooltip: 4 decimals)
    rows, cols = values.shape
    if (x_labels is not None and len(x_labels) != cols) or (y_labels is not None and len(y_labels) != rows):
        raise ValueError(f"labels do not fit the {rows}×{cols} matrix")
    bound = _colour_bound(values, bound)
    x, y = _matrix_axes(values.shape, x_labels, y_labels, x_title=x_title, y_title=y_title)
    if rows * cols > RECT_MAX_CELLS:
        return _heat_image_spec(values, x, y, title=title, value_title=value_title, symmetric=symmetric,
                                height=height, bound=bound)
    layers = _cell_layers(values, x, y, value_title=value_title, symmetric=symmetric, bound=bound)
    # The hairline's legend apart from the colour's (merged, Vega drew circles, not the gradient).
    spec: vl.Spec = {"data": {"name": MATRIX}, "layer": layers, "resolve": {"legend": {"stroke": "independent"}}}
    if cell_px:
        spec.update({"width": {"step": int(cell_px)}, "height": {"step": int(cell_px)}})
    else:
        spec["height"] = int(height)  # the whole chart's: Streamlit fits a stretched chart to its size
    spec.update({"title": title, "usermeta": _on_canvas(), "$schema": vl.SCHEMA_URL,
                 "datasets": {MATRIX: _cell_rows(values, x_labels, y_labels)}})
    return spec


def _on_canvas() -> vl.Spec:
    """Drawn on a canvas: as SVG, 128 × 128 cells were ~30,000 DOM changes for the browser to lay out."""
    return {"embedOptions": {"renderer": "canvas"}}


def _colour_bound(values: np.ndarray, bound: float | None) -> float:
    """The colour scale's end: the given bound, else the largest finite |value|; never 0."""
    if bound is None:
        finite = values[np.isfinite(values)]
        bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    return bound if bound > 0 else 1.0


def _matrix_axes(shape: tuple[int, int], x_labels: Sequence[str] | None, y_labels: Sequence[str] | None, *,
                 x_title: str, y_title: str) -> tuple[vl.Spec, vl.Spec]:
    """The column (x) and row (y) axes: ordinal, in the labels' order where there are labels;
    past 32 bands, labels that would overlap are left out."""
    rows, cols = shape
    upright = x_labels is None or all(len(str(label)) <= 4 for label in x_labels)  # numbers stay level
    x = vl.field("col", "ordinal", axis={"labelAngle": 0 if upright else -45, "labelOverlap": cols > 32},
                 title=x_title)
    y = vl.field("row", "ordinal", axis={"labelLimit": 160, "labelOverlap": rows > 32}, title=y_title)
    if x_labels is not None:
        x["sort"] = list(x_labels)
    if y_labels is not None:
        y["sort"] = list(y_labels)
    return x, y


def _cell_rows(values: np.ndarray, x_labels: Sequence[str] | None, y_labels: Sequence[str] | None) -> vl.Rows:
    """One row per cell, row by row. Labels are plain text to Vega (drawn, never parsed as HTML);
    without labels the indexes stay numbers (smaller to send, sorted as numbers)."""
    cells = values.tolist()
    if not np.isfinite(values).all():
        cells = [[vl.json_number(v) for v in line] for line in cells]
    row_names = list(y_labels) if y_labels is not None else range(values.shape[0])
    col_names = list(x_labels) if x_labels is not None else range(values.shape[1])
    return [{"row": r, "col": c, "value": v} for r, line in zip(row_names, cells) for c, v in zip(col_names, line)]


def _cell_layers(values: np.ndarray, x: vl.Spec, y: vl.Spec, *, value_title: str, symmetric: bool,
                 bound: float) -> list[vl.Spec]:
    """A rectangle per cell with its exact value on hover, and the value written in each cell
    of a small matrix."""
    colour = vl.field("value", "quantitative", scale=_colour_scale(symmetric, bound), title=value_title)
    # A hairline of the cell's own colour: cells of fractional size leave pale seams without it
    # (rounding them to whole pixels instead left a phone's 128 columns 1 px wide).
    cells = {"mark": {"type": "rect", "strokeWidth": 0.6}, "encoding": {
        "color": colour, "stroke": {**colour, "legend": None},
        "tooltip": [vl.tooltip("row", y["title"], y["type"]), vl.tooltip("col", x["title"], x["type"]),
                    vl.tooltip("value", value_title, "quantitative", format=".4f")],
        "x": x, "y": y}}
    if values.size > MAX_ANNOTATED_CELLS:
        return [cells]
    # Dark ink on pale cells, white on the saturated ends of the scale.
    numbers = {"mark": {"type": "text", "fontSize": 10}, "encoding": {
        "color": vl.condition(f"abs(datum.value) > {0.6 * bound!r}", "#ffffff", "#111111"),
        "text": vl.field("value", "quantitative", format=".2f"), "x": x, "y": y}}
    return [cells, numbers]


SEQUENTIAL_EXTENT = tuple(vl.SEQUENTIAL_BLUES["extent"])  # the blues from 12 %: a zero stays visible on the dark theme


def _colour_scale(symmetric: bool, bound: float) -> vl.Spec:
    """Negative blue, zero pale, positive red over [−bound, bound]; or blues over the data's range."""
    if symmetric:
        return {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    return {"scheme": {"name": "blues", "extent": list(SEQUENTIAL_EXTENT)}}


def _heat_image_spec(values: np.ndarray, x: vl.Spec, y: vl.Spec, *, title: str, value_title: str, symmetric: bool,
                     height: int, bound: float) -> vl.Spec:
    """``matrix_heatmap_vega`` for a big matrix: one image coloured here (``ui.charts.heat_image``)
    stretched over the plot, under two ordinal axes whose bands are exactly its rows and columns,
    and an invisible layer that draws the colour legend from the same scale as the cells'."""
    from ui.charts.heat_image import heat_png, png_data_url

    rows, cols = values.shape
    png = heat_png(values, symmetric=symmetric, bound=bound, scheme="redblue" if symmetric else "blues",
                   extent=(0.0, 1.0) if symmetric else SEQUENTIAL_EXTENT)
    band = {"paddingInner": 0, "paddingOuter": 0, "type": "band"}  # band i = pixel row/column i of the image
    x = {**x, "scale": band, "sort": x.get("sort", list(range(cols)))}
    y = {**y, "scale": band, "sort": y.get("sort", list(range(rows)))}
    hidden = {"type": "point", "opacity": 0, "size": 0}
    finite = values[np.isfinite(values)]
    ends = [-bound, bound] if symmetric else ([float(finite.min()), float(finite.max())] if finite.size else [0.0, 1.0])
    layers = [
        {"data": {"values": [{"url": png_data_url(png)}]},
         "mark": {"type": "image", "align": "left", "baseline": "top", "aspect": False, "smooth": False,
                  "width": {"expr": "width"}, "height": {"expr": "height"}},  # sharp cells, the whole plot
         "encoding": {"url": vl.field("url", "nominal"), "x": {"value": 0}, "y": {"value": 0}}},
        {"data": {"values": [{"col": name} for name in x["sort"]]}, "mark": hidden, "encoding": {"x": x}},
        {"data": {"values": [{"row": name} for name in y["sort"]]}, "mark": hidden, "encoding": {"y": y}},
        {"data": {"values": [{"value": end} for end in ends]}, "mark": hidden, "encoding": {
            "color": vl.field("value", "quantitative", scale=_colour_scale(symmetric, bound), title=value_title)}},
    ]
    return {"layer": layers, "height": int(height), "title": title,
            "usermeta": {**_on_canvas(), access.HINT_KEY: _image_reading(values, x, y, value_title)},
            "$schema": vl.SCHEMA_URL}


def _image_reading(values: np.ndarray, x: vl.Spec, y: vl.Spec, value_title: str) -> vl.Spec:
    """What a screen reader gets of a matrix drawn as one image (``ui.charts.access``): each
    row's largest value and its column; the summary names the largest of all."""
    safe = np.where(np.isfinite(values), values, -np.inf)
    best = safe.argmax(axis=1)
    rows = [{"row": row_name, "col": x["sort"][int(col)], "value": float(safe[i, col]), "shown": f"{safe[i, col]:.4f}"}
            for i, (row_name, col) in enumerate(zip(y["sort"], best)) if np.isfinite(safe[i, col])]
    return access.hint(rows, value="value", value_title=value_title, shown="shown",
                       labels=[("row", y["title"]), ("col", x["title"])])


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
) -> vl.Spec:
    """Each pair as a point (cosine, distance); optionally the curve d = √(2 − 2 cos) of unit vectors.

    Example: distance_vs_cosine([("a–b", 0.9, 0.4)], None, title="t", x_title="cos", y_title="d", pair_title="pair", curve_label="unit")
    """
    points = [{"pair": pair, "cosine": vl.json_number(c), "distance": vl.json_number(d)} for pair, c, d in pairs]
    names = [row["pair"] for row in points]
    x = vl.field("cosine", "quantitative", scale={"domain": [-1, 1]}, title=x_title)
    y = vl.field("distance", "quantitative", scale={"zero": True}, title=y_title)
    exact = [vl.tooltip("cosine", x_title, "quantitative", format=".3f"),
             vl.tooltip("distance", y_title, "quantitative", format=".3f")]
    layers, datasets = [], {}
    if curve is not None:
        datasets["curve"] = [{"cosine": vl.json_number(c), "distance": vl.json_number(d), "what": curve_label}
                             for c, d in curve]
        layers.append({"data": {"name": "curve"}, "mark": {"type": "line", "color": OTHER_COLOUR, "strokeDash": [5, 4]},
                       "encoding": {"tooltip": exact, "x": x, "y": y}})
    datasets["pairs"] = points
    layers.append({"data": {"name": "pairs"}, "mark": {"type": "point", "filled": True, "opacity": 0.9, "size": 140},
                   "encoding": {
                       # Pairs get their own palette (not the words' arrow colours) and keep the table's order.
                       "color": vl.field("pair", "nominal", scale=vl.scale(names, PAIR_COLOURS), sort=names,
                                         title=pair_title),
                       "shape": vl.shapes("pair", names, pair_title),  # each pair its symbol: not colour alone
                       "tooltip": [vl.tooltip("pair", pair_title), *exact], "x": x, "y": y}})
    return vl.spec({"layer": layers}, datasets, title=title, height=300, autosized=False)


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
) -> vl.Spec:
    """Cosine of one word's vector in two prompts, at each point of the residual stream.

    Example: similarity_by_stage(["embed", "L0"], [1.0, 0.8], title="t", x_title="stage", y_title="cos")
    """
    rows = [{"stage": stage, "cosine": vl.json_number(c), "shown": f"{float(c):.3f}"}
            for stage, c in zip(stage_labels, cosines)]
    low = min(0.0, float(np.min(cosines))) if len(cosines) else 0.0
    body = {"mark": {"type": "line", "color": ARROW_COLOURS[0], "point": {"filled": True, "size": 70}}, "encoding": {
        "tooltip": [vl.tooltip("stage", x_title), vl.tooltip("shown", y_title)],
        "x": vl.field("stage", "nominal", axis={"labelAngle": -35, "labelLimit": 200}, sort=list(stage_labels),
                      title=x_title),
        "y": vl.field("cosine", "quantitative", scale={"domain": [low, 1.0]}, title=y_title)}}
    return vl.spec(body, {vl.TABLE: rows}, title=title, height=320, data=vl.TABLE, autosized=False)
