"""Charts of the embeddings page: arrows from the origin, the 3-D semantic map, similarity lines.

Builders take plain arrays and already-translated text; they compute nothing beyond layout.
Plotly draws the 3-D views (Streamlit bundles it: no CDN), Altair the 2-D ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from _plotly_utils.utils import to_typed_array_spec
from plotly.colors import qualitative

from ui.charts.common import CJK_FONT, figure_dict, plotly_written
from ui.text import escape_plotly

OTHER_COLOUR = "#9e9e9e"  # grey: tokens that belong to no category
PROMPT_COLOUR = "#ff7f0e"  # orange ring: readable on the white and the dark theme
# Plotly's "Bold" palette reads on both themes; its grey is reserved for "other" and its
# orange for the prompt's tokens, so neither is used for a category.
CATEGORY_COLOURS: tuple[str, ...] = tuple(
    c for c in (*qualitative.Bold, *qualitative.Safe)
    if c not in ("rgb(165, 170, 153)", "rgb(230, 131, 16)", "rgb(136, 136, 136)")
)
DIVERGING = "RdBu_r"  # red positive, blue negative, white zero
MAX_ANNOTATED_CELLS = 400  # beyond this, numbers in cells are unreadable: hover instead
PAIR_COLOURS: tuple[str, ...] = ("#7048e8", "#1098ad", "#f59f00", "#d6336c", "#37b24d", "#868e96")
LABEL_POSITIONS = ("top left", "bottom right", "top center", "middle right", "bottom left", "middle left")
ARROW_COLOURS: tuple[str, ...] = ("#2f6fdb", "#e8590c", "#2b9348", "#9c36b5", "#c92a2a", "#1098ad")


def matrix_heatmap_spec(
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
) -> dict:
    """``matrix_heatmap(...).to_dict()`` written directly (a test compares them): the figure dict
    Plotly would write, without building and validating a ``go.Figure`` (~5 ms per heat map: a
    new prompt draws up to four). Draw it with ``ui.charts.common.plotly_cached``."""
    values = np.asarray(matrix, dtype=float)
    rows, cols = values.shape
    # Labels come from user text (the prompt's tokens): Plotly would read them as HTML.
    x = [escape_plotly(v) for v in x_labels] if x_labels is not None else [str(j) for j in range(cols)]
    y = [escape_plotly(v) for v in y_labels] if y_labels is not None else [str(i) for i in range(rows)]
    if bound is None:
        bound = float(np.nanmax(np.abs(values))) if values.size and np.isfinite(values).any() else 1.0
    bound = bound if bound > 0 else 1.0
    template, colorscale = plotly_written(DIVERGING if symmetric else "Blues")
    heat: dict = {
        "colorbar": {"title": {"text": value_title}},
        "colorscale": colorscale,
        "hovertemplate": f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_title}: %{{z:.4f}}<extra></extra>",
    }
    if rows * cols <= MAX_ANNOTATED_CELLS:
        heat.update({"textfont": {"size": 10}, "texttemplate": "%{z:.2f}"})
    heat.update({
        "x": x, "xgap": 1 if cols <= 64 else 0, "y": y, "ygap": 1 if rows <= 64 else 0,
        # half the bytes of float64 on the wire; hover shows 4 decimals anyway
        "z": to_typed_array_spec(values.astype(np.float32)),
    })
    if symmetric:
        heat.update({"zmax": float(bound), "zmin": -float(bound)})
    heat["type"] = "heatmap"
    layout = {
        "template": template,
        "title": {"text": title},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "hoverlabel": {"font": {"family": CJK_FONT}},
        "xaxis": {"title": {"text": x_title}, "type": "category"},
        "yaxis": {"title": {"text": y_title}, "type": "category", "autorange": "reversed"},
        "height": height,
    }
    return {"data": [heat], "layout": layout}


# Up to this many cells, one rectangle each (a value on hover, a number in each of the smallest);
# beyond, one image coloured on the server (ui.charts.heat_image): Vega runs every rectangle
# through its expression interpreter, 128 × 128 cells kept Chromium busy ~0.6 s.
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


def matrix_heatmap(
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
) -> go.Figure:
    """A Plotly heatmap, rows top to bottom, with exact values on hover (and in the cells when small).

    ``bound`` fixes the symmetric colour range to [−bound, bound]: pass the same one to
    heatmaps that are compared side by side, so one colour means one value in all of them.
    Pages draw ``matrix_heatmap_spec`` (the same figure as a dict, without Plotly's checks).

    Example: matrix_heatmap(np.eye(2), title="I", x_title="col", y_title="row", value_title="v")
    """
    return go.Figure(matrix_heatmap_spec(matrix, title=title, x_title=x_title, y_title=y_title,
                                         value_title=value_title, x_labels=x_labels, y_labels=y_labels,
                                         symmetric=symmetric, height=height, bound=bound))


def _hover_font() -> dict:
    return {"family": CJK_FONT}


@dataclass(frozen=True)
class AxisTitles:
    x: str
    y: str
    z: str


def arrows_from_origin(
    vectors: Mapping[str, Sequence[float]],
    *,
    title: str,
    axes: AxisTitles,
    hover_value: str,
) -> go.Figure:
    """3-D arrows from the origin to each vector's tip, labelled with its name.

    Example: arrows_from_origin({"a": [1, 0, 0]}, title="t", axes=AxisTitles("x", "y", "z"), hover_value="v")
    """
    fig = go.Figure()
    tips = np.array([list(v)[:3] for v in vectors.values()], dtype=float) if vectors else np.zeros((1, 3))
    reach = float(np.max(np.abs(tips))) if tips.size else 1.0
    reach = reach if reach > 0 else 1.0
    for index, (raw_name, values) in enumerate(vectors.items()):
        name = escape_plotly(raw_name)  # a word the student typed: literal text, never HTML or %{…}
        x, y, z = (float(c) for c in list(values)[:3])
        colour = ARROW_COLOURS[index % len(ARROW_COLOURS)]
        fig.add_trace(go.Scatter3d(
            x=[0.0, x], y=[0.0, y], z=[0.0, z],
            mode="lines+text",
            line={"color": colour, "width": 7},
            text=["", name],
            textposition=LABEL_POSITIONS[index % len(LABEL_POSITIONS)],  # neighbours' labels do not overlap
            textfont={"family": CJK_FONT, "size": 15, "color": colour},
            name=name,
            hovertemplate=f"<b>{name}</b><br>{hover_value}: [%{{x:.3f}}, %{{y:.3f}}, %{{z:.3f}}]<extra></extra>",
        ))
        length = float(np.linalg.norm([x, y, z]))
        if length > 0:
            # A cone at the tip makes the line an arrow; its size is relative to the scene.
            fig.add_trace(go.Cone(
                x=[x], y=[y], z=[z], u=[x / length], v=[y / length], w=[z / length],
                sizemode="absolute", sizeref=0.12 * reach, anchor="tip",
                colorscale=[[0, colour], [1, colour]], showscale=False, hoverinfo="skip", name=name,
            ))
    scene_range = [-0.05 * reach, 1.1 * reach] if float(tips.min()) >= 0 else [-1.1 * reach, 1.1 * reach]
    fig.update_layout(
        title={"text": title},
        height=460,
        margin={"l": 0, "r": 0, "t": 50, "b": 0},
        legend={"title": {"text": ""}},
        hoverlabel={"font": _hover_font()},
        scene={
            "xaxis": {"title": {"text": axes.x}, "range": scene_range},
            "yaxis": {"title": {"text": axes.y}, "range": scene_range},
            "zaxis": {"title": {"text": axes.z}, "range": scene_range},
            "aspectmode": "cube",
        },
    )
    return fig


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


def _embedding_map_raw(
    coords: np.ndarray,
    labels: Sequence[str],
    categories: Sequence[str | None],
    category_names: Mapping[str, str],
    explained: Sequence[float],
    *,
    text: MapText,
    visible_categories: Sequence[str],
    show_other: bool,
    highlight_ids: Sequence[int] = (),
    highlight_labels: Sequence[str] = (),
    shown_ids: Sequence[int] | None = None,
) -> dict:
    """``embedding_map_3d``'s figure as plain data (traces and layout)."""
    coords = np.asarray(coords, dtype=float)
    ids = np.arange(coords.shape[0])
    traces: list[dict] = []
    groups = [(key, name, index) for index, (key, name) in enumerate(category_names.items()) if key in visible_categories]
    if show_other or groups:  # the ring alone (a new prompt's part) reads no other token
        keep = np.ones(ids.size, dtype=bool) if shown_ids is None else np.isin(ids, np.asarray(shown_ids, dtype=int))
        cats = np.array([c if c is not None else "" for c in categories], dtype=object)

    def add_group(mask: np.ndarray, name: str, colour: str, size: float, opacity: float) -> None:
        chosen = ids[mask & keep]
        if chosen.size == 0:
            return
        traces.append({
            "type": "scatter3d", "x": coords[chosen, 0], "y": coords[chosen, 1], "z": coords[chosen, 2],
            "mode": "markers",
            "marker": {"size": size, "color": colour, "opacity": opacity},
            "name": name,
            # plain lists (label, id, group), not an object array: Plotly's JSON writer (orjson)
            # takes the figure as it is instead of cleaning every value on each rerun
            "customdata": [[escape_plotly(labels[i]), i, name] for i in chosen.tolist()],
            "hovertemplate": (f"{text.token}: <b>%{{customdata[0]}}</b><br>{text.token_id}: %{{customdata[1]}}"
                              f"<br>{text.category}: %{{customdata[2]}}<extra></extra>"),
        })

    if show_other:
        add_group(cats == "", text.other, OTHER_COLOUR, 2.2, 0.35)
    for key, name, index in groups:
        add_group(cats == key, name, CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)], 4.5, 0.95)

    if len(highlight_ids):
        chosen = np.asarray(highlight_ids, dtype=int)
        shown_labels = [escape_plotly(v) for v in highlight_labels]
        traces.append({
            "type": "scatter3d", "x": coords[chosen, 0], "y": coords[chosen, 1], "z": coords[chosen, 2],
            "mode": "markers+text",
            "marker": {"size": 9, "color": PROMPT_COLOUR, "symbol": "circle-open", "line": {"width": 4}},
            "text": shown_labels,
            "textposition": "top center",
            "textfont": {"family": CJK_FONT, "size": 14, "color": PROMPT_COLOUR},
            "name": text.prompt,
            "customdata": [[label, i] for label, i in zip(shown_labels, chosen.tolist())],
            "hovertemplate": (f"{text.prompt}<br>{text.token}: <b>%{{customdata[0]}}</b>"
                              f"<br>{text.token_id}: %{{customdata[1]}}<extra></extra>"),
        })

    def axis(n: int) -> dict:
        share = f"{100 * float(explained[n - 1]):.1f}%"
        return {"title": {"text": text.axis.format(n=n, share=share)}}

    layout = {
        "title": {"text": text.title},
        "height": 640,
        "margin": {"l": 0, "r": 0, "t": 50, "b": 0},
        "hoverlabel": {"font": _hover_font()},
        "legend": {"itemsizing": "constant", "font": {"family": CJK_FONT}},
        # Equal-length axes: PC2 and PC3 hold much less variance than PC1 but are worth seeing.
        "scene": {"xaxis": axis(1), "yaxis": axis(2), "zaxis": axis(3), "aspectmode": "cube"},
        "uirevision": "embedding-map",  # keep the student's rotation when a filter changes
    }
    return {"data": traces, "layout": layout}


def embedding_map_3d(*args, **kwargs) -> go.Figure:
    """Every token as a point in 3-D (PCA), one legend entry per category, the prompt's tokens ringed.

    ``shown_ids`` limits the points to those token ids (a sample of a 150k-token vocabulary).

    ``labels`` are display strings per token id; ``categories`` the category key of each
    id (None = other); ``category_names`` maps keys to translated names in legend order.
    Arguments as ``_embedding_map_raw``; the page draws ``embedding_map_spec`` (the same figure).

    Example: embedding_map_3d(np.zeros((2, 3)), ["a", "b"], [None, "x"], {"x": "X"}, [0.5, 0.3, 0.1], text=..., visible_categories=["x"], show_other=True)
    """
    return go.Figure(_embedding_map_raw(*args, **kwargs))


def embedding_map_spec(*args, **kwargs) -> dict:
    """``embedding_map_3d(...).to_dict()`` written directly (``ui.charts.common.figure_dict``; a test
    compares them): about 1,800 points without Plotly validating every value (~20 ms; a new
    prompt with a token the map did not show yet rebuilds the points)."""
    return figure_dict(_embedding_map_raw(*args, **kwargs))


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
