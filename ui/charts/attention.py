"""Charts of the two attention pages: numbered matrices, attention heatmaps, the all-heads
grid, the head view (BertViz's idea, drawn in Vega-Lite: no CDN), softmax and √d_k charts.

Every builder takes plain arrays and labels (the caller runs the core) and returns a Vega-Lite
dict (``ui.charts.vl``) with a title, axis titles, a legend where colour means something and a
tooltip with exact values. Datasets that are large or typed (the heat maps' cells) are data
frames: Streamlit sends them as Arrow columns.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ui.charts import access, palettes, vl
from ui.charts.vl import CELL_TEXT_LIMIT, SEQUENTIAL_BLUES

MASKED_GREY = "#9e9e9e"
# Up to this many positions a heatmap sends every cell with its labels and text (what the tests
# and tooltips read); beyond it the compact form (numbers only, lower triangle) keeps it small.
DENSE_HEATMAP_MAX = 160
LIGHT_INK, DARK_INK = "#ffffff", "#111111"  # cell text on dark / light cells
TOKEN_INK, QUERY_INK = "#7b8794", "#e4572e"  # readable on both the light and the dark page
# One colour per head, the same in every panel (each panel also names its head): the 3-D map's
# categories, apart for colour-blind eyes too (ui.charts.palettes).
HEAD_COLOURS = palettes.CATEGORIES


def _head_colours(n: int) -> list[str]:
    return [HEAD_COLOURS[i % len(HEAD_COLOURS)] for i in range(n)]


def _shown(value: float, fmt: str) -> str:
    """A cell's text: the number, or −∞ / ∞ / — for the values a colour scale cannot hold."""
    if np.isfinite(value):
        return format(value, fmt)
    if np.isnan(value):
        return "—"
    return "−∞" if value < 0 else "∞"


def _matrix_frame(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *, value_format: str,
                  diverging: bool, domain: tuple[float, float] | None) -> tuple[pd.DataFrame, dict]:
    """``value_matrix``'s cells and its colour scale (as Vega-Lite writes it)."""
    matrix = np.asarray(matrix, dtype=float)
    rows, cols = matrix.shape
    if len(row_labels) != rows or len(col_labels) != cols:
        raise ValueError(f"labels {len(row_labels)}×{len(col_labels)} do not fit matrix {rows}×{cols}")
    values = matrix.ravel()
    finite = np.isfinite(values)
    bound = float(np.abs(values[finite]).max()) if finite.any() else 1.0
    bound = bound or 1.0
    low = float(values[finite].min()) if finite.any() else 0.0
    high = float(values[finite].max()) if finite.any() else 1.0
    if diverging:
        strength = np.where(finite, np.abs(values) / bound, 0.0)
        scale = {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    else:
        lo, hi = domain if domain is not None else (min(low, 0.0), max(high, 1e-9))
        span = (hi - lo) or 1.0
        strength = np.where(finite, (np.clip(values, lo, hi) - lo) / span, 0.0)
        scale = {"domain": [lo, hi], "scheme": dict(SEQUENTIAL_BLUES)}
    ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    frame = pd.DataFrame({
        "row": [row_labels[i] for i in ii.ravel()],
        "col": [col_labels[j] for j in jj.ravel()],
        "value": np.where(finite, values, np.nan),
        "shown": [_shown(v, value_format) for v in values],
        "exact": [_shown(v, ".6g") for v in values],
        "ink": np.where(strength > 0.55, LIGHT_INK, DARK_INK),
        "finite": finite,  # explicit flag: NaN travels through Arrow as NaN, not null
    })
    return frame, scale


def value_matrix_spec(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    value_format: str = ".3g",
    diverging: bool = True,
    cell: int = 40,
    cell_width: int | None = None,
    domain: tuple[float, float] | None = None,
) -> dict:
    """A small matrix with its numbers written in the cells, as on a blackboard.

    −∞ cells (masked scores) are grey and read "−∞". The text is white on dark cells and black on
    light ones, so it stays readable in both themes. ``domain`` fixes the range of a sequential
    scale (e.g. (0, 1) for attention weights, so 0.06 looks small). A label is as wide as its
    column, never wider (a wider one would be hidden as overlapping); sizes are steps, not
    pixels (Streamlit collapses a layered chart of a fixed pixel size).

    Example: st.vega_lite_chart(value_matrix_spec(np.eye(2), ["我", "爱"], ["d0", "d1"], title="X", x_title="dim", y_title="token", value_title="x"))
    """
    frame, scale = _matrix_frame(matrix, row_labels, col_labels, value_format=value_format, diverging=diverging,
                                 domain=domain)
    x_axis = {"labelAngle": 0, **({"labelLimit": cell_width - 6} if cell_width else {}), "orient": "top"}

    def position() -> dict:  # a fresh copy per layer
        return {"x": {"axis": dict(x_axis), "field": "col", "sort": list(col_labels), "title": x_title, "type": "nominal"},
                "y": {"field": "row", "sort": list(row_labels), "title": y_title, "type": "nominal"}}

    rects = {"mark": {"type": "rect", "stroke": "#ffffff", "strokeWidth": 1}, "encoding": {
        "color": {"condition": {"test": "datum.finite", "field": "value", "legend": None, "scale": scale,
                                "title": value_title, "type": "quantitative"}, "value": MASKED_GREY},
        "tooltip": [{"field": "row", "title": y_title, "type": "nominal"},
                    {"field": "col", "title": x_title, "type": "nominal"},
                    {"field": "exact", "title": value_title, "type": "nominal"}],
        **position()}}
    # An identity colour scale written out: Streamlit's frontend fails on scale=None inside a layer.
    text = {"mark": {"type": "text", "fontSize": 13}, "encoding": {
        "color": {"field": "ink", "legend": None, "scale": {"domain": [LIGHT_INK, DARK_INK], "range": [LIGHT_INK, DARK_INK]},
                  "type": "nominal"},
        "text": {"field": "shown", "type": "nominal"}, **position()}}
    return {"config": {"view": dict(vl.VIEW)}, "layer": [rects, text], "data": {"name": _LAYOUT_DATA},
            "height": {"step": cell}, "title": title, "width": {"step": cell_width or cell}, "$schema": vl.SCHEMA_URL,
            "datasets": {_LAYOUT_DATA: frame}}


def attention_heatmap(
    values: np.ndarray,
    labels: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    masked_text: str,
    value_format: str = ".4f",
    scores: bool = False,
    cell: int | None = None,
) -> dict:
    """Query × key heatmap of one head. Cells a causal query may not see (key after query)
    are grey: the triangle the mask removes. The data keeps every exact value.

    Weights (0–1, a fixed colour scale) reuse one layout per (labels, titles): another head,
    layer or prompt of the same tokens costs a table. Scores get a red-blue scale over ± the
    largest visible |score|. Past ``DENSE_HEATMAP_MAX`` positions the compact form is drawn.

    Example: attention_heatmap(pattern[0], run.labels(), title="L0 H0", x_title="key", y_title="query", value_title="weight", masked_text="masked")
    """
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    if values.shape != (n, n) or len(labels) != n:
        raise ValueError(f"expected a square {len(labels)}×{len(labels)} matrix, got {values.shape}")
    reading = _last_query_reading(values, labels, x_title=x_title, y_title=y_title, value_title=value_title,
                                  value_format=value_format)
    if n > DENSE_HEATMAP_MAX:
        compact = _compact_heatmap(values, labels, title=title, x_title=x_title, y_title=y_title,
                                   value_title=value_title, value_format=value_format, scores=scores, cell=cell)
        return {**compact, "usermeta": {**(compact.get("usermeta") or {}), access.HINT_KEY: reading}}
    layout = _attention_layout(tuple(labels), x_title, y_title, value_title, masked_text, value_format, cell)
    frame = _attention_frame(values, labels, masked_text, value_format, scores)
    if scores:
        visible = values[np.isfinite(values) & np.tril(np.ones((n, n), dtype=bool))]
        color = {**layout["encoding"]["color"], "scale": _redblue(visible)}
        layout = {**layout, "encoding": {**layout["encoding"], "color": color}}
    return {**layout, "title": title, "datasets": {_LAYOUT_DATA: frame},
            "usermeta": {access.HINT_KEY: reading}}


def _last_query_reading(values: np.ndarray, labels: Sequence[str], *, x_title: str, y_title: str,
                        value_title: str, value_format: str) -> dict:
    """The summary of an attention map (``ui.charts.access``): where the last token, the one
    that predicts the next, looks most ("query 它, key 苹果 (0.62)"). The table keeps every cell."""
    last = len(labels) - 1
    rows = [{"query": labels[last], "key": labels[k], "value": float(values[last, k]),
             "shown": _shown(float(values[last, k]), value_format)}
            for k in range(last + 1) if np.isfinite(values[last, k])]
    return access.hint(rows, value="value", value_title=value_title, shown="shown", summary_only=True,
                       labels=[("query", y_title), ("key", x_title)])


def _redblue(values: np.ndarray) -> dict:
    """The diverging scale over ± the largest |value| (1 when there is none), red for positive."""
    bound = float(np.abs(values).max()) if values.size else 1.0
    return {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}


_LAYOUT_DATA = "tj-data-0"  # the one dataset of a cached layout


def _datum_is(field: str, value: str) -> str:
    """A filter expression: the row's ``field`` equals ``value``."""
    return f"(datum.{field} === {value!r})"


def _attention_frame(values: np.ndarray, labels: Sequence[str], masked_text: str, value_format: str,
                     scores: bool) -> pd.DataFrame:
    """``attention_heatmap``'s cells: the only part of its spec that depends on the values."""
    n = values.shape[0]
    qq, kk = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    q, k = qq.ravel(), kk.ravel()
    flat = values.ravel()
    masked = k > q
    return pd.DataFrame({
        "q": q, "k": k,
        "query": [labels[i] for i in q],
        "key": [labels[j] for j in k],
        # Masked cells get a finite placeholder (their colour is the grey of the condition below):
        # Vega-Lite drops rows whose colour field is null, so −∞ scores were drawn blank.
        "value": np.where(np.isfinite(flat) & ~masked, flat, 0.0),
        "masked": masked | ~np.isfinite(flat),  # the causal triangle (and any non-finite score)
        "shown": [masked_text if m and not scores else _shown(v, value_format)
                  for v, m in zip(flat, masked)],
    })


@lru_cache(maxsize=256)
def _attention_layout(labels: tuple[str, ...], x_title: str, y_title: str, value_title: str, masked_text: str,
                      value_format: str, cell: int | None) -> dict:
    """``attention_heatmap``'s weights spec without its data and title (its layout depends only on
    these)."""
    n = len(labels)
    # Every token label must show on short prompts (Vega drops "overlapping" rotated labels).
    label_axis = {"labelFontSize": 12 if n <= 24 else 9, "labelLimit": 140, "labelOverlap": n > 32}
    step = cell or int(min(36, max(9, 600 // n)))
    return {
        "config": {"view": dict(vl.VIEW)}, "data": {"name": _LAYOUT_DATA}, "mark": {"type": "rect"},
        "encoding": {
            "color": {"condition": {"test": "datum.masked", "value": MASKED_GREY}, "field": "value",
                      "legend": {"direction": "horizontal", "gradientLength": 220, "orient": "top"},
                      "scale": {"domain": [0, 1], "scheme": dict(SEQUENTIAL_BLUES)}, "title": value_title,
                      "type": "quantitative"},
            "tooltip": [{"field": "query", "title": y_title, "type": "nominal"},
                        {"field": "key", "title": x_title, "type": "nominal"},
                        {"field": "shown", "title": value_title, "type": "nominal"}],
            "x": {"axis": {"labelAngle": -60, **label_axis}, "field": "key", "sort": list(labels), "title": x_title,
                  "type": "nominal"},
            "y": {"axis": dict(label_axis), "field": "query", "sort": list(labels), "title": y_title,
                  "type": "nominal"},
        },
        "height": {"step": step}, "title": "", "width": {"step": step}, "$schema": vl.SCHEMA_URL,
    }


def _compact_heatmap(values: np.ndarray, labels: Sequence[str], *, title: str, x_title: str, y_title: str,
                     value_title: str, value_format: str, scores: bool, cell: int | None) -> dict:
    """A long sequence's heatmap, sized for the wire: only the cells a causal query can see
    (k ≤ q: n(n+1)/2 rows of int16, int16, float32 — 4 MB at 1,024 positions instead of ~70 MB
    with every cell's labels and text), the masked triangle is the grey plot background, axes
    count positions and the tooltip looks the token labels up in a table of n rows."""
    n = values.shape[0]
    q, k = np.tril_indices(n)
    cells = values[q, k]
    index = np.int16 if n < 32_000 else np.int32
    frame = pd.DataFrame({"q": q.astype(index), "k": k.astype(index),
                          "value": np.where(np.isfinite(cells), cells, np.nan).astype(np.float32)})
    names = pd.DataFrame({"pos": np.arange(n), "label": [str(x) for x in labels]})
    scale = _redblue(cells[np.isfinite(cells)]) if scores else {"domain": [0, 1], "scheme": dict(SEQUENTIAL_BLUES)}
    axis = {"grid": False, "labelFontSize": 9, "labelOverlap": True}
    encoding = {
        "color": vl.field("value", "quantitative", legend={"direction": "horizontal", "gradientLength": 220,
                                                           "orient": "top"}, scale=scale, title=value_title),
        "tooltip": [vl.tooltip("query", y_title), vl.tooltip("key", x_title),
                    vl.tooltip("value", value_title, "quantitative", format=value_format)],
        "x": vl.field("k", "ordinal", axis={**axis, "labelAngle": -60}, title=x_title),
        "y": vl.field("q", "ordinal", axis=dict(axis), title=y_title),
    }
    lookups = [{"lookup": side, "from": {"data": {"name": "labels"}, "key": "pos", "fields": ["label"]}, "as": [name]}
               for side, name in (("q", "query"), ("k", "key"))]
    step = {"step": cell or int(min(36, max(1, 900 // n)))}
    return {"config": {"view": {**vl.VIEW, "fill": MASKED_GREY}}, "data": {"name": "cells"}, "mark": {"type": "rect"},
            "encoding": encoding, "height": step, "title": title, "transform": lookups, "width": dict(step),
            "$schema": vl.SCHEMA_URL, "datasets": {"cells": frame, "labels": names}}


GRID_RECT_MAX_CELLS = 4096  # beyond this many visible cells the grid is one image (see head_grid_spec)
# The image's size: a foreign model's 144 heads over a 500-token prompt would be 47 M pixels
# (186 MB to colour, seconds to encode, megabytes to send for a picture no screen shows).
GRID_IMAGE_MAX_PIXELS = 4_000_000


@dataclass(frozen=True)
class GridLayout:
    """Where each head's panel sits in the grid's own units (one unit = one cell): panels of
    ``n`` × ``n`` cells with ``gap`` units between them. Whole units, so the image form maps
    one pixel to one unit."""

    n: int
    n_layer: int
    n_head: int
    gap: int

    @classmethod
    def of(cls, n: int, n_layer: int, n_head: int) -> "GridLayout":
        return cls(n, n_layer, n_head, gap=max(1, round(0.15 * n)))

    @property
    def width(self) -> int:
        return self.n_head * self.n + (self.n_head - 1) * self.gap

    @property
    def height(self) -> int:
        return self.n_layer * self.n + (self.n_layer - 1) * self.gap

    def x0(self, head: int) -> int:
        return head * (self.n + self.gap)

    def y0(self, layer: int) -> int:
        return layer * (self.n + self.gap)


def _names_axis(centres: Sequence[float], names: Sequence[str], step: int, **axis: object) -> dict:
    """An axis whose only labels are ``names`` at the panels' centres (a panel every ``step``
    units): Streamlit themes and sizes axis labels, which plain text marks would not get."""
    listed = ",".join(json.dumps(str(name), ensure_ascii=False) for name in names)
    return {"values": [float(c) for c in centres], "labelExpr": f"[{listed}][floor(datum.value / {step})]",
            "domain": False, "grid": False, "ticks": False, "title": None, "labelPadding": 4, **axis}


def grid_is_image(n_layer: int, n_head: int, n: int) -> bool:
    """Is the grid of this many heads and positions drawn as one image (no values on hover)?"""
    return n_layer * n_head * n * (n + 1) // 2 > GRID_RECT_MAX_CELLS


def grid_pool_factor(n_layer: int, n_head: int, n: int) -> int:
    """1, or the k for which each pixel of the grid's image is one k × k block of cells: the
    smallest k that keeps the image within ``GRID_IMAGE_MAX_PIXELS``."""
    k = 1
    while True:
        grid = GridLayout.of(-(-n // k), n_layer, n_head)
        if grid.width * grid.height <= GRID_IMAGE_MAX_PIXELS or grid.n == 1:
            return k
        k += 1


def _pooled(values: np.ndarray, k: int, *, scores: bool) -> np.ndarray:
    """Each head's pattern in k × k blocks (the last ones padded): the block's strongest visible
    value (weights: the largest; scores: the one farthest from 0), NaN where no cell is visible."""
    n_layer, n_head, n, _ = values.shape
    m = -(-n // k)
    padded = np.full((n_layer, n_head, m * k, m * k), np.nan, dtype=np.float32)
    padded[:, :, :n, :n] = np.where(np.tril(np.ones((n, n), dtype=bool)) & np.isfinite(values), values, np.nan)
    blocks = padded.reshape(n_layer, n_head, m, k, m, k).transpose(0, 1, 2, 4, 3, 5).reshape(n_layer, n_head, m, m, k * k)
    empty = np.isnan(blocks).all(axis=-1)
    strength = np.where(np.isnan(blocks), -np.inf, np.abs(blocks) if scores else blocks)
    pick = np.take_along_axis(blocks, strength.argmax(axis=-1)[..., None], axis=-1)[..., 0]
    return np.where(empty, np.nan, pick).astype(np.float32)


def _grid_image(values: np.ndarray, grid: GridLayout, *, scores: bool, bound: float) -> bytes:
    """The whole grid as one RGBA PNG, one pixel per unit: each panel's visible triangle
    coloured as Vega colours the cells (``ui.charts.heat_image``), everything else transparent."""
    from PIL import Image

    from ui.charts.heat_image import scheme_colours
    from ui.charts.vectors import SEQUENTIAL_EXTENT

    n = grid.n
    if scores:
        position = 1.0 - (values + bound) / (2.0 * bound)  # the reversed "redblue" over [−bound, bound]
        rgb = scheme_colours(position, "redblue")
    else:
        low, high = SEQUENTIAL_EXTENT
        rgb = scheme_colours(low + np.clip(values, 0.0, 1.0) * (high - low), "blues")
    visible = np.tril(np.ones((n, n), dtype=bool)) & np.isfinite(values)
    pixels = np.zeros((grid.height, grid.width, 4), dtype=np.uint8)
    for layer in range(grid.n_layer):
        for head in range(grid.n_head):
            y0, x0 = grid.y0(layer), grid.x0(head)
            panel = pixels[y0:y0 + n, x0:x0 + n]
            panel[..., :3] = rgb[layer, head]
            panel[..., 3] = np.where(visible[layer, head], 255, 0)
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="RGBA").save(buffer, format="PNG")
    return buffer.getvalue()


def head_grid_spec(
    patterns: np.ndarray,
    labels: Sequence[str],
    subplot_titles: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    layer_names: Sequence[str],
    head_names: Sequence[str],
    head_title: str,
    scores: bool = False,
    height: int | None = None,
) -> dict:
    """All heads at once as one Vega-Lite chart: rows = layers, columns = heads, each head's
    attention (query down, key across) with the causal triangle left empty.

    One plot in the grid's own units (``GridLayout``), not a facet, so it stretches to the
    column on any screen. Up to ``GRID_RECT_MAX_CELLS`` visible cells: one rectangle per cell,
    the head, query, key and value on hover. Beyond (a long prompt, a foreign model's 144 heads):
    the whole grid as one PNG coloured on the server with Vega's own scheme, drawn over the plot,
    under the same colour legend. Either way the browser loads no Plotly (4.7 MB of JavaScript,
    which made this page's first visit ~0.6 s longer) and draws one chart.
    Weights use the blues over [0, 1] (0 still visible on the dark theme); scores the red-blue
    scale over ± the largest visible |score|.

    Example: head_grid_spec(np.tril(np.ones((1, 2, 3, 3))) / 3, list("abc"), ["L0 H0", "L0 H1"], title="t",
             x_title="key", y_title="query", value_title="weight", layer_names=["Layer 0"])
    """
    values = np.asarray(patterns, dtype=np.float32)
    n_layer, n_head, n, n_keys = values.shape
    if n != n_keys or len(labels) != n:
        raise ValueError("one label per position and square patterns are needed")
    if len(subplot_titles) != n_layer * n_head or len(layer_names) != n_layer or len(head_names) != n_head:
        raise ValueError("one title per panel, one name per layer and one per head are needed")
    scale, bound = _grid_scale(values, scores)
    reading = _grid_reading(values, labels, subplot_titles, head_title=head_title, query_title=y_title,
                            key_title=x_title, value_title=value_title, scores=scores)
    image = grid_is_image(n_layer, n_head, n)
    pool = grid_pool_factor(n_layer, n_head, n) if image else 1
    if pool > 1:  # the page says so under the grid (grid_pool_factor)
        values = _pooled(values, pool, scores=scores)
    grid = GridLayout.of(values.shape[-1], n_layer, n_head)
    # The legend on top: at the side it took a phone's panels a third of their width.
    colour = {"field": "value", "scale": scale, "title": value_title, "type": "quantitative",
              "legend": {"orient": "top", "direction": "horizontal", "gradientLength": 220}}
    x, y = _grid_axes(grid, layer_names, head_names)
    if image:
        layers, datasets = _grid_image_layers(values, grid, x, y, colour, scores=scores, bound=bound), {}
    else:
        tips = [vl.tooltip("head", head_title), vl.tooltip("query", y_title), vl.tooltip("key", x_title),
                vl.tooltip("value", value_title, "quantitative", format=".4f")]
        layers, datasets = _grid_cell_layers(values, grid, labels, subplot_titles, x, y, colour, tips)
    spec: dict = {"layer": layers, "height": int(height or max(320, 190 * n_layer + 60)), "title": title,
                  "view": {"stroke": None}, "resolve": {"legend": {"stroke": "independent"}},
                  "usermeta": {"embedOptions": {"renderer": "canvas"}, access.HINT_KEY: reading},
                  "$schema": vl.SCHEMA_URL}
    if datasets:
        spec["datasets"] = datasets
    return spec


def _grid_reading(values: np.ndarray, labels: Sequence[str], subplot_titles: Sequence[str], *, head_title: str,
                  query_title: str, key_title: str, value_title: str, scores: bool) -> dict:
    """What a screen reader gets of the grid (``ui.charts.access``): one row per head, its
    strongest (query, key) pair; the summary names the strongest of all. The first query is
    left out of the weights (it can only see itself: always 1). One row per head keeps the
    reading small for a foreign model's 144 heads."""
    n_layer, n_head, n, _ = values.shape
    visible = np.where(np.tril(np.ones((n, n), dtype=bool)), values, -np.inf)
    visible = np.where(np.isfinite(visible), visible, -np.inf)
    first = 0 if scores or n == 1 else 1
    rows = []
    for layer in range(n_layer):
        for head in range(n_head):
            panel = visible[layer, head, first:]
            query, key = np.unravel_index(int(np.argmax(panel)), panel.shape)
            value = float(panel[query, key])
            if np.isfinite(value):
                rows.append({"head": subplot_titles[layer * n_head + head], "query": labels[int(query) + first],
                             "key": labels[int(key)], "value": value, "shown": f"{value:.3f}"})
    return access.hint(rows, value="value", value_title=value_title, shown="shown",
                       labels=[("head", head_title), ("query", query_title), ("key", key_title)])


def _grid_scale(values: np.ndarray, scores: bool) -> tuple[dict, float]:
    """The grid's colour scale and its bound: weights the blues over [0, 1]; scores the red-blue
    scale over ± the largest |score| a query can see (the −∞ of the mask left out)."""
    n = values.shape[-1]
    shown = values[:, :, np.tril(np.ones((n, n), dtype=bool))]
    finite = shown[np.isfinite(shown)]
    if not scores:
        return {"domain": [0.0, 1.0], "scheme": dict(SEQUENTIAL_BLUES)}, 1.0
    bound = (float(np.abs(finite).max()) if finite.size else 1.0) or 1.0
    return {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}, bound


def _grid_axes(grid: GridLayout, layer_names: Sequence[str], head_names: Sequence[str]) -> tuple[dict, dict]:
    """The grid's units as the plot's coordinates, row 0 at the top; the axes name the columns
    (heads, on top) and the rows (layers, written upwards on the left), once each."""
    n, step = grid.n, grid.n + grid.gap
    x = {"axis": _names_axis([grid.x0(h) + n / 2 for h in range(grid.n_head)], head_names, step, orient="top"),
         "scale": {"domain": [0, grid.width], "nice": False, "zero": False}, "type": "quantitative"}
    y = {"axis": _names_axis([grid.y0(lay) + n / 2 for lay in range(grid.n_layer)], layer_names, step, labelAngle=270,
                             labelAlign="center", labelBaseline="bottom"),
         "scale": {"domain": [0, grid.height], "nice": False, "reverse": True, "zero": False}, "type": "quantitative"}
    return x, y


def _grid_cell_layers(values: np.ndarray, grid: GridLayout, labels: Sequence[str], subplot_titles: Sequence[str],
                      x: dict, y: dict, colour: dict, tooltip: list[dict]) -> tuple[list[dict], dict]:
    """One rectangle per visible cell (head, query, key and value on hover) and its table."""
    n, step = grid.n, grid.n + grid.gap
    ll, hh, qq, kk = np.nonzero(np.broadcast_to(np.tril(np.ones((n, n), dtype=bool)), values.shape))
    x0, y0 = hh * step + kk, ll * step + qq
    label_array = np.asarray(list(labels), dtype=object)
    frame = pd.DataFrame({
        "x": x0, "x2": x0 + 1, "y": y0, "y2": y0 + 1,
        "head": np.asarray(list(subplot_titles), dtype=object)[ll * grid.n_head + hh],
        "query": label_array[qq], "key": label_array[kk],
        "value": values[ll, hh, qq, kk],
    })
    frame = frame[np.isfinite(frame["value"].to_numpy())]
    cells = {"data": {"name": "cells"}, "mark": {"type": "rect", "strokeWidth": 0.4}, "encoding": {
        "x": {**x, "field": "x"}, "x2": {"field": "x2"}, "y": {**y, "field": "y"}, "y2": {"field": "y2"},
        "color": colour, "stroke": {**colour, "legend": None},  # a hairline: no seams between cells
        "tooltip": tooltip}}
    return [cells], {"cells": frame.reset_index(drop=True)}


def _grid_image_layers(values: np.ndarray, grid: GridLayout, x: dict, y: dict, colour: dict, *, scores: bool,
                       bound: float) -> list[dict]:
    """The whole grid as one image over the plot, and a hidden layer that holds the axes' scales
    and the colour legend."""
    from ui.charts.heat_image import png_data_url

    url = png_data_url(_grid_image(values, grid, scores=scores, bound=bound))
    ends = [-bound, bound] if scores else [0.0, 1.0]
    picture = {"data": {"values": [{"url": url}]},
               "mark": {"type": "image", "align": "left", "baseline": "top", "aspect": False, "smooth": False,
                        "width": {"expr": "width"}, "height": {"expr": "height"}},
               "encoding": {"url": {"field": "url", "type": "nominal"}, "x": {"value": 0}, "y": {"value": 0}}}
    scales = {"data": {"values": [{"x": 0, "y": 0, "value": ends[0]}, {"x": grid.width, "y": grid.height,
                                                                         "value": ends[1]}]},
              "mark": {"type": "point", "opacity": 0, "size": 0},
              "encoding": {"x": {**x, "field": "x"}, "y": {**y, "field": "y"}, "color": colour}}
    return [picture, scales]


def _head_view_table(weights: np.ndarray, tokens: Sequence[str], query_pos: int,
                     head_names: Sequence[str]) -> pd.DataFrame:
    """The one table every panel of ``head_view_chart_spec`` reads (lines and tokens, told apart by
    "kind"): the only part of the chart that depends on the weights and the tokens."""
    weights = np.asarray(weights, dtype=float)
    n_head, n = weights.shape
    if len(tokens) != n or len(head_names) != n_head:
        raise ValueError("one token per key position and one name per head are needed")
    # One table for every panel, faceted by head: one layered chart instead of a dozen keeps
    # building and validating the spec fast.
    keys = np.arange(query_pos + 1)
    line_rows = pd.DataFrame({
        "kind": "line", "head": np.repeat(list(head_names), len(keys)), "k": np.tile(keys, n_head),
        "q": query_pos, "weight": weights[:, keys].ravel(),
        "shown": [f"{w:.4f}" for w in weights[:, keys].ravel()],
        "key": [tokens[k] for k in np.tile(keys, n_head)], "query": tokens[query_pos], "x0": 0.0, "x1": 1.0,
    })
    positions = np.tile(np.arange(n), n_head)
    token_rows = pd.DataFrame({
        "kind": "token", "head": np.repeat(list(head_names), n), "pos": positions,
        "token": list(tokens) * n_head,
        # The query's own row and the rows it can see, as data: the chart's layout then does not
        # depend on which token is the query (one cached layout per prompt length).
        "is_query": positions == query_pos, "visible": positions <= query_pos,
    })
    return pd.concat([line_rows, token_rows], ignore_index=True)


@lru_cache(maxsize=256)
def _head_view_layout(n: int, head_names: tuple[str, ...], weight_title: str, query_side: str, key_side: str,
                      head_title: str) -> dict:
    """``head_view_chart_spec``'s spec without data and title: its layout depends only on these.
    Token text reads on a white and on a near-black page (the theme is not known here): a mid
    grey for tokens, a strong orange for the query, faded (not hidden) where it cannot see."""
    n_head = len(head_names)
    no_axis = {"domain": False, "grid": False, "labels": False, "ticks": False, "title": None}
    x_scale = {"domain": [-0.55, 1.55]}
    y_scale = {"domain": [-0.5, n - 0.5], "reverse": True}
    lines = {"mark": {"type": "rule"}, "encoding": {
        "color": {"field": "head", "scale": {"domain": list(head_names), "range": _head_colours(n_head)},
                  "title": head_title, "type": "nominal"},
        "opacity": {"field": "weight", "legend": None, "scale": {"domain": [0, 1], "range": [0.18, 1]},
                    "type": "quantitative"},
        "strokeWidth": {"field": "weight", "legend": None, "scale": {"domain": [0, 1], "range": [0.3, 7]},
                        "type": "quantitative"},
        "tooltip": [{"field": "head", "title": head_title, "type": "nominal"},
                    {"field": "query", "title": query_side, "type": "nominal"},
                    {"field": "key", "title": key_side, "type": "nominal"},
                    {"field": "shown", "title": weight_title, "type": "nominal"}],
        "x": {"axis": dict(no_axis), "field": "x0", "scale": dict(x_scale), "type": "quantitative"},
        "x2": {"field": "x1"},
        "y": {"axis": dict(no_axis), "field": "q", "scale": dict(y_scale), "type": "quantitative"},
        "y2": {"field": "k"}},
        "transform": [{"filter": _datum_is("kind", "line")}]}

    def side(align: str, at: str, color: dict, opacity_test: str) -> dict:
        return {"mark": {"type": "text", "align": align, "fontSize": 12, "fontWeight": "bold"}, "encoding": {
            "color": color,
            "opacity": {"condition": {"test": opacity_test, "value": 1.0}, "value": 0.6},
            "text": {"field": "token", "type": "nominal"},
            "x": {"axis": dict(no_axis), "field": "x", "scale": dict(x_scale), "type": "quantitative"},
            "y": {"axis": dict(no_axis), "field": "pos", "scale": dict(y_scale), "type": "quantitative"}},
            "transform": [{"filter": _datum_is("kind", "token")}, {"calculate": at, "as": "x"}]}

    left = side("right", "-0.05", {"condition": {"test": "datum.is_query", "value": QUERY_INK}, "value": TOKEN_INK},
                "datum.is_query")
    right = side("left", "1.05", {"value": TOKEN_INK}, "datum.visible")
    return {
        "config": {"view": dict(vl.VIEW)}, "data": {"name": _LAYOUT_DATA},
        "facet": {"field": "head", "header": {"labelFontSize": 13, "labelFontWeight": "bold"},
                  "sort": list(head_names), "title": None, "type": "nominal"},
        "spec": {"layer": [lines, left, right], "height": max(160, 18 * n), "width": 190},
        "columns": min(4, n_head), "title": "", "$schema": vl.SCHEMA_URL,
    }


def head_view_chart_spec(
    weights: np.ndarray,
    tokens: Sequence[str],
    query_pos: int,
    head_names: Sequence[str],
    *,
    title: str,
    weight_title: str,
    query_side: str,
    key_side: str,
    head_title: str,
) -> dict:
    """BertViz's head view: the query token on the left, every token on the right, one line per
    (head, key) whose thickness and opacity are the attention weight. One panel per head.

    ``weights`` is [head, k_pos] for the chosen query. The layout is built once per prompt length,
    heads and axis titles; a call adds this query's table and title.

    Example: st.vega_lite_chart(head_view_chart_spec(w, toks, 5, ["H0", "H1"], title="t", ...))
    """
    layout = _head_view_layout(len(tokens), tuple(head_names), weight_title, query_side, key_side, head_title)
    return {**layout, "title": title,
            "datasets": {_LAYOUT_DATA: _head_view_table(weights, tokens, query_pos, head_names)}}


def grouped_bars(
    categories: Sequence[str],
    series: dict[str, Sequence[float | None]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    legend_title: str,
    value_format: str = ".3f",
) -> dict:
    """Bars side by side per category, one colour per series (e.g. softmax vs plain division).

    A None value (undefined: division by zero) draws no bar. Example: grouped_bars(["a"], {"s": [1.0]}, ...)
    """
    rows = []
    for name, values in series.items():
        if len(values) != len(categories):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(categories)} categories")
        for cat, v in zip(categories, values):
            if v is not None and np.isfinite(v):
                rows.append({"category": cat, "series": name, "value": float(v), "shown": format(v, value_format)})
    encoding = {
        "color": vl.field("series", "nominal", scale={"domain": list(series)}, sort=list(series), title=legend_title),
        "tooltip": [vl.tooltip("category", x_title), vl.tooltip("series", legend_title), vl.tooltip("shown", y_title)],
        "x": vl.field("category", "nominal", axis={"labelAngle": 0}, sort=list(categories), title=x_title),
        "xOffset": vl.field("series", "nominal", sort=list(series)),
        "y": vl.field("value", "quantitative", title=y_title),
    }
    # Each bar ends in its series' symbol: never colour alone.
    layers = [{"mark": {"type": "bar"}, "encoding": encoding}, vl.bar_symbols(encoding, "series", list(series))]
    return _plain({"layer": layers}, {vl.TABLE: rows}, title=title, data=vl.TABLE)


def _plain(body: dict, datasets: dict, *, title: str, data: str | None = None) -> dict:
    """A 260 px tall chart with Vega-Lite's own autosize and the theme's font (added when drawn)."""
    spec = vl.spec(body, datasets, title=title, height=260, data=data, autosized=False)
    spec["config"] = vl.base_config(font=False)
    return spec


def overlaid_histogram(
    samples: dict[str, np.ndarray],
    *,
    title: str,
    x_title: str,
    y_title: str,
    legend_title: str,
    bins: int = 120,
) -> dict:
    """Histograms of several samples on one shared axis, drawn as translucent step areas so a
    narrow distribution stays visible next to a wide one (binned here: the spec stays small)."""
    finite = np.concatenate([np.asarray(s, dtype=float).ravel() for s in samples.values()])
    edges = np.histogram_bin_edges(finite, bins=bins)
    rows = []
    for name, sample in samples.items():
        counts, _ = np.histogram(np.asarray(sample, dtype=float).ravel(), bins=edges)
        for lo, hi, c in zip(edges[:-1].tolist(), edges[1:].tolist(), counts.tolist()):
            rows.append({"series": name, "lo": lo, "hi": hi, "count": c, "range": f"{lo:.2f} … {hi:.2f}",
                         "mid": (lo + hi) / 2})
    encoding = {
        "color": vl.field("series", "nominal", scale={"domain": list(samples)}, sort=list(samples), title=legend_title),
        "strokeDash": vl.dashes(list(samples), legend_title),  # each outline its dash: not colour alone
        "tooltip": [vl.tooltip("series", legend_title), vl.tooltip("range", x_title),
                    vl.tooltip("count", y_title, "quantitative")],
        "x": vl.field("mid", "quantitative", title=x_title),
        "y": vl.field("count", "quantitative", stack=None, title=y_title),
    }
    mark = {"type": "area", "interpolate": "step", "line": True, "opacity": 0.55}
    return _plain({"mark": mark, "encoding": encoding}, {vl.TABLE: rows}, title=title, data=vl.TABLE)


def lines_over_dk(
    d_ks: np.ndarray,
    series: dict[str, np.ndarray],
    chosen: int,
    *,
    title: str,
    x_title: str,
    y_title: str,
    legend_title: str,
    value_format: str = ".3f",
) -> dict:
    """Curves over d_k (log axis) with a vertical rule at the slider's value."""
    rows = [{"d_k": int(d), "series": name, "value": float(v), "shown": format(float(v), value_format)}
            for name, values in series.items() for d, v in zip(d_ks, values)]
    d_k_tip = vl.tooltip("d_k", x_title, "quantitative")
    lines = {"data": {"name": vl.TABLE}, "mark": {"type": "line", "point": True}, "encoding": {
        "color": vl.field("series", "nominal", scale={"domain": list(series)}, sort=list(series), title=legend_title),
        "strokeDash": vl.dashes(list(series), legend_title),  # each line its dash: not colour alone
        "tooltip": [d_k_tip, vl.tooltip("series", legend_title), vl.tooltip("shown", y_title)],
        "x": vl.field("d_k", "quantitative", scale={"base": 2, "type": "log"}, title=x_title),
        "y": vl.field("value", "quantitative", title=y_title)}}
    rule = {"data": {"name": "chosen"}, "mark": {"type": "rule", "color": "#e4572e", "strokeDash": [4, 4]},
            "encoding": {"tooltip": [dict(d_k_tip)], "x": vl.field("d_k", "quantitative")}}
    return _plain({"layer": [lines, rule]}, {vl.TABLE: rows, "chosen": [{"d_k": int(chosen)}]}, title=title)


HEAD_PICK = "head_pick"  # the selection parameter of ``head_picker``


PICK_VIEW = "view_head_pick"  # the picker's cell layer: the view its selection listens to


def head_picker(
    layers: Sequence[int],
    heads: Sequence[int],
    labels: Sequence[str],
    scores: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    label_title: str,
    score_title: str,
    selected: tuple[int, int] | None = None,
) -> dict:
    """Layers × heads grid, one cell per head with its behaviour label; click a cell to pick it.

    Drawn with ``on_select="rerun"``: the selection ``HEAD_PICK`` carries the cell's ``layer``
    and ``head``. The head shown enlarged (``selected``) is outlined.

    Its cell layer is the view named ``PICK_VIEW`` (a fixed name: the same spec text for every
    prompt); its one dataset is a data frame (``current`` is the outline, set again per pick).

    Example: head_picker([0, 0], [0, 1], ["broad", "self"], [0.7, 0.9], title="t", x_title="head",
             y_title="layer", label_title="label", score_title="score")
    """
    frame = pd.DataFrame({
        "layer": list(map(int, layers)), "head": list(map(int, heads)), "label": list(labels),
        "score": [float(s) for s in scores],
    })
    frame["shown"] = [f"{s:.2f}" if np.isfinite(s) else "—" for s in frame["score"]]
    # The label is written in the cell with its score (colour is never the only cue), on two
    # lines cut to the cell's width; hover shows it whole.
    frame["cell_text"] = [f"{label}\n{shown}" for label, shown in zip(frame["label"], frame["shown"])]
    frame["current"] = [selected == (lay, h) for lay, h in zip(frame["layer"], frame["head"])]
    x = {"axis": {"labelAngle": 0, "orient": "top"}, "field": "head", "title": x_title, "type": "ordinal"}
    y = {"field": "layer", "title": y_title, "type": "ordinal"}
    tooltip = [{"field": "layer", "title": y_title, "type": "ordinal"},
               {"field": "head", "title": x_title, "type": "ordinal"},
               {"field": "label", "title": label_title, "type": "nominal"},
               {"field": "shown", "title": score_title, "type": "nominal"}]
    domain = list(dict.fromkeys(frame["label"]))
    fills = [palettes.SERIES[i % len(palettes.SERIES)] for i in range(len(domain))]  # Okabe–Ito
    # The chosen head: a black frame (vermillion, the old frame's colour, is now a fill).
    cells = {"mark": {"type": "rect", "cornerRadius": 4, "cursor": "pointer", "stroke": "#000000"}, "encoding": {
        "color": {"field": "label", "legend": {"direction": "vertical", "labelLimit": 320, "orient": "bottom",
                                               "symbolOpacity": 1, "symbolStrokeWidth": 0, "symbolType": "square"},
                  "scale": {"domain": domain, "range": fills}, "title": label_title, "type": "nominal"},
        "strokeWidth": {"condition": {"test": "datum.current", "value": 3}, "value": 0},
        "tooltip": tooltip, "x": x, "y": y}, "name": PICK_VIEW}
    inks = [{"test": f"datum.label === {vl.quoted(label)}", "value": palettes.ink_on(fill)}
            for label, fill in zip(domain, fills)]
    text = {"mark": {"type": "text", "fontSize": 12, "lineBreak": "\n", "limit": {"expr": CELL_TEXT_LIMIT}},
            "encoding": {"color": {"condition": inks, "value": "#000000"} if inks else {"value": "#000000"},
                         "text": {"field": "cell_text", "type": "nominal"}, "tooltip": tooltip, "x": x, "y": y}}
    return {
        "config": {"view": dict(vl.VIEW)}, "layer": [cells, text], "data": {"name": _LAYOUT_DATA},
        "height": {"step": 44},  # two lines: the label and the score
        "params": [{"name": HEAD_PICK, "select": {"type": "point", "clear": False, "fields": ["layer", "head"],
                                                  "on": "click"}, "views": [PICK_VIEW]}],
        "title": title, "width": "container", "$schema": vl.SCHEMA_URL, "datasets": {_LAYOUT_DATA: frame},
        "usermeta": {access.HINT_KEY: access.hint(  # colour names the label: the reading takes the score
            frame[["layer", "head", "label", "score", "shown"]].to_dict("records"), value="score",
            value_title=score_title, shown="shown", labels=[("layer", y_title), ("head", x_title),
                                                            ("label", label_title)])},
    }


def picked_head(selection: object) -> tuple[int, int] | None:
    """(layer, head) from ``head_picker``'s selection state, or None when nothing is picked."""
    try:
        points = selection["selection"][HEAD_PICK]  # type: ignore[index]
    except (KeyError, TypeError, AttributeError):
        return None
    if not points:
        return None
    point = points[0]
    try:
        return int(point["layer"]), int(point["head"])
    except (KeyError, TypeError, ValueError):
        return None
