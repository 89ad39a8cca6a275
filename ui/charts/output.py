"""Charts for the output stations: next-token odds, sampling, the logit lens, generation, KV cache.

Every builder takes plain arrays and already-translated strings and returns a finished
Vega-Lite spec (a plain dict, data attached) with a title, axis titles, a legend where
colour carries meaning and exact-value tooltips; ``show(spec)`` renders it and
``cached(builder, ...)`` memoises a builder call. Token labels arrive already made visible
(``ui.tokens.display_token``) and unique.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from serving.registry import memo
from ui.charts import palettes, vl
from ui.charts.common import heatmap
from ui.charts.vl import CELL_TEXT_LIMIT, SEQUENTIAL_BLUES, TABLE
from ui.charts.vl import field as _field, legend_below as _legend_below, scale as _scale, tooltip as _tip
from ui.tokens import display_token, token_labels  # noqa: F401  (token_labels: re-exported, pages import it from here)

VEGA_LITE_SCHEMA = vl.SCHEMA_URL

# Colours that read on Streamlit's light and dark backgrounds alike.
# Okabe–Ito where colours tell series apart (ui.charts.palettes: apart for colour-blind eyes).
ORIGINAL_COLOR = "#9aa5b1"  # grey-blue: "before"
AFTER_COLOR = palettes.BLUE  # "after the knobs"
TAIL_COLOR = palettes.ORANGE  # the long tail of the vocabulary
CACHED_COLOR = palettes.BLUISH_GREEN  # with the KV cache
RECOMPUTE_COLOR = palettes.VERMILLION  # recompute everything
MASKED_COLOR = palettes.NEUTRAL_GREY
VISIBLE_COLOR = palettes.SKY_BLUE
NEW_ROW_COLOR = palettes.BLUE
DARK_TEXT = "#1b1b1b"  # text drawn on light cells
PROB_TICKS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # room is left above 1 for labels; no tick claims p > 1
LABEL_TEXT = "#76808f"  # value labels beside bars: readable on the light and the dark background


ChartSpec = dict[str, Any]  # a finished Vega-Lite spec with its data

_TABLE_REF = {"name": TABLE}


def _spec(body: dict[str, Any], rows: list[dict[str, Any]], *, title: Any, height: int, top_data: bool = True,
          fixed_size: bool = False, width: int | None = None) -> ChartSpec:
    """The top level with the one dataset, ``table``."""
    return vl.spec(body, {TABLE: rows}, title=title, height=height, data=TABLE if top_data else None,
                   width=width, fixed_size=fixed_size)


def show(chart: ChartSpec | Any, width: str = "stretch", live: bool = False) -> None:
    """Render a spec from this module with Streamlit's theme.

    ``live=True`` for a chart a control redraws: its title and parameters travel as data, so the
    browser updates the chart it has instead of building a new one (``ui.charts.live``)."""
    from ui.charts.common import vega

    vega(chart, width=width, live=live)


@memo(maxsize=160)  # shared, never copied: an unchanged chart costs a lookup and no Arrow conversion
def _cached_build(builder_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> ChartSpec:
    return _BUILDERS[builder_name](*args, **kwargs)


def cached(builder: Any, *args: Any, **kwargs: Any) -> ChartSpec:
    """Call a builder of this module, memoised on its inputs (shared by every session).

    Charts that a slider does not change (e.g. the logit lens while the temperature moves)
    then cost a hash lookup on the rerun instead of a rebuild.

    Example: show(cached(top5_chart, labels, probs, chosen, title=..., ...))
    """
    if _BUILDERS.get(builder.__name__) is not builder:
        raise ValueError(f"{builder!r} is not a chart builder of ui.charts.output")
    return _cached_build(builder.__name__, args, kwargs)


# --- logits and sampling ----------------------------------------------------------------------


SYMBOL_ROOM = 7  # px: a value written after a bar's end symbol starts past it


def _bars_with_values(y: dict[str, Any], x: dict[str, Any], color: dict[str, Any], tooltip: list[dict[str, Any]],
                      value_field: str, text_dx: int = 3) -> list[dict[str, Any]]:
    """A bar layer and a layer writing each bar's value beside it (left-aligned, grey).

    When the colour tells a category that the bars' axis does not (e.g. "top 10" vs "the
    rest"), each bar also ends in that category's symbol (never colour alone), and the value
    moves right of it."""
    bars = {"mark": {"type": "bar"}, "encoding": {"color": color, "tooltip": tooltip, "x": x, "y": y}}
    layers = [bars]
    if color.get("field") != y.get("field"):
        layers.append(vl.bar_symbols(bars["encoding"], color["field"], color["scale"]["domain"]))
        text_dx += SYMBOL_ROOM
    layers.append({"mark": {"type": "text", "align": "left", "color": LABEL_TEXT, "dx": text_dx},
                   "encoding": {"text": _field("shown", "nominal"), "x": _field(value_field, "quantitative"), "y": y}})
    return layers


def top_tokens_chart(
    labels: Sequence[str],
    probs: Sequence[float],
    tail_label: str,
    tail_mass: float,
    *,
    title: str,
    x_title: str,
    y_title: str,
    kind_title: str,
    kind_top: str,
    kind_tail: str,
    logits: Sequence[float] | None = None,
    logit_title: str = "logit",
) -> ChartSpec:
    """The N most probable next tokens plus one bar for the whole rest of the vocabulary.

    Example: top_tokens_chart(["巴黎", "伦敦"], [0.86, 0.04], "rest", 0.10, title="t", x_title="p", y_title="token", kind_title="k", kind_top="top", kind_tail="rest")
    """
    tokens = [*labels, tail_label]
    values = [*map(float, probs), float(tail_mass)]
    kinds = [kind_top] * len(labels) + [kind_tail]
    logit_text = [*(f"{v:.3f}" for v in logits), "—"] if logits is not None else ["—"] * (len(labels) + 1)
    rows = [{"token": tok, "prob": vl.json_number(p), "kind": kind, "logit": logit, "shown": f"{p:.4f}"}
            for tok, p, kind, logit in zip(tokens, values, kinds, logit_text)]
    y = _field("token", "nominal", axis={"labelLimit": 180}, sort=tokens, title=y_title)
    # A probability axis never goes past 1; the value labels may run past the plot's end.
    x = _field("prob", "quantitative", scale={"domain": [0, min(1.0, max(1e-9, max(values)) * 1.15)]}, title=x_title)
    # The legend goes below: on the right it would sit on the value labels.
    color = _field("kind", "nominal", legend=_legend_below(),
                   scale=_scale([kind_top, kind_tail], [AFTER_COLOR, TAIL_COLOR]), title=kind_title)
    tooltip = [_tip("token", y_title), _tip("shown", x_title), _tip("logit", logit_title)]
    return _spec({"layer": _bars_with_values(y, x, color, tooltip, "prob")}, rows, title=title, height=24 * len(rows))


def before_after_chart(
    labels: Sequence[str],
    original: Sequence[float],
    after: Sequence[float],
    status: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    original_name: str,
    after_name: str,
    status_title: str,
) -> ChartSpec:
    """Two bars per token (before and after the knobs); cut tokens carry a ✂ note.

    ``status`` is a translated word per token ("kept", "cut by top-k", ...); it appears in the
    tooltip, and next to the "after" bar of every token whose final probability is zero.
    """
    n = len(labels)
    if not (len(original) == len(after) == len(status) == n):
        raise ValueError("labels, original, after and status must have the same length")
    rows = []
    for series, values in ((original_name, original), (after_name, after)):
        for token, p, s in zip(labels, values, status):
            p = float(p)
            rows.append({"token": token, "series": series, "prob": vl.json_number(p), "status": s, "shown": f"{p:.4f}",
                         "note": f"✂ {s}" if series == after_name and p == 0 else ""})
    # The knobs change the bars, the notes and the title, never the layout: built once per
    # (tokens, titles), the layout costs a lookup per move (and stays the same text: ``live``).
    layout = _before_after_layout(tuple(labels), x_title, y_title, series_title, original_name, after_name,
                                  status_title)
    return {**layout, "title": title, "datasets": {TABLE: rows}}


@lru_cache(maxsize=64)
def _before_after_layout(labels: tuple[str, ...], x_title: str, y_title: str, series_title: str,
                         original_name: str, after_name: str, status_title: str) -> ChartSpec:
    n = len(labels)
    series_order = [original_name, after_name]
    y = _field("token", "nominal", axis={"labelLimit": 180}, sort=list(labels), title=y_title)
    offset = _field("series", "nominal", sort=series_order)
    at_prob = _field("prob", "quantitative")
    bars = {"data": dict(_TABLE_REF), "mark": {"type": "bar"}, "encoding": {
        "color": _field("series", "nominal", legend=_legend_below(),
                        scale=_scale(series_order, [ORIGINAL_COLOR, AFTER_COLOR]), sort=series_order,
                        title=series_title),
        "tooltip": [_tip("token", y_title), _tip("series", series_title), _tip("shown", x_title),
                    _tip("status", status_title)],
        "x": _field("prob", "quantitative", scale={"domain": [0, 1]}, title=x_title), "y": y, "yOffset": offset}}
    symbols = {"data": dict(_TABLE_REF), **vl.bar_symbols(bars["encoding"], "series", series_order)}
    values = {"data": dict(_TABLE_REF),
              "mark": {"type": "text", "align": "left", "color": LABEL_TEXT, "dx": 3 + SYMBOL_ROOM, "fontSize": 10},
              "encoding": {"text": _field("shown", "nominal"), "x": at_prob, "y": y, "yOffset": offset},
              "transform": [{"filter": "datum.prob > 0"}]}
    notes = {"data": dict(_TABLE_REF),
             "mark": {"type": "text", "align": "left", "color": RECOMPUTE_COLOR, "dx": 4 + SYMBOL_ROOM, "fontSize": 11},
             "encoding": {"text": _field("note", "nominal"), "x": at_prob, "y": y, "yOffset": offset}}
    # 22 px a bar: the two values written beside a token's bars ran into each other at the
    # presenter's 16 px text (17 px a bar before).
    spec = _spec({"layer": [bars, symbols, values, notes]}, [], title="", height=44 * n, top_data=False)
    del spec["datasets"]
    return spec


def sample_histogram_chart(
    labels: Sequence[str],
    observed: Sequence[float],
    expected: Sequence[float],
    counts: Sequence[int],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    observed_name: str,
    expected_name: str,
    count_title: str,
) -> ChartSpec:
    """Share of the N draws that hit each token (bars) next to the probability it had (ticks)."""
    # The bars' order is data (a rank per token), not a list in the spec: which tokens are shown
    # changes with every knob and draw, the spec does not (the browser swaps the data in).
    rows = []
    for series, values in ((observed_name, observed), (expected_name, expected)):
        for order, (token, v, c) in enumerate(zip(labels, values, counts)):
            v = float(v)
            rows.append({"token": token, "series": series, "value": vl.json_number(v), "count": int(c), "shown": f"{v:.4f}",
                         "order": order})
    layout = _histogram_layout(x_title, y_title, series_title, observed_name, expected_name, count_title)
    return {**layout, "title": title, "datasets": {TABLE: rows}}


@lru_cache(maxsize=64)
def _histogram_layout(x_title: str, y_title: str, series_title: str, observed_name: str, expected_name: str,
                      count_title: str) -> ChartSpec:
    """``sample_histogram_chart``'s layout: the same for every knob, draw and N."""
    names = [observed_name, expected_name]
    color = _field("series", "nominal", legend=_legend_below(), scale=_scale(names, [AFTER_COLOR, RECOMPUTE_COLOR]),
                   sort=names, title=series_title)
    x = _field("token", "nominal", axis={"labelAngle": -40, "labelLimit": 120, "labelOverlap": False},
               sort={"field": "order", "op": "min"}, title=x_title)
    tooltip = [_tip("token", x_title), _tip("series", series_title), _tip("shown", y_title),
               _tip("count", count_title, "quantitative")]
    bars = {"mark": {"type": "bar", "opacity": 0.85},
            "encoding": {"color": color, "tooltip": tooltip, "x": x,
                         "y": _field("value", "quantitative", title=y_title)},
            "transform": [{"filter": f"(datum.series === {vl.quoted(observed_name)})"}]}
    ticks = {"mark": {"type": "tick", "size": 26, "thickness": 3},
             "encoding": {"color": color, "tooltip": tooltip, "x": x, "y": _field("value", "quantitative")},
             "transform": [{"filter": f"(datum.series === {vl.quoted(expected_name)})"}]}
    spec = _spec({"layer": [bars, ticks]}, [], title="", height=320)
    del spec["datasets"]
    return spec


def logit_lens_chart(
    stage_labels: Sequence[str],
    tokens: Sequence[Sequence[str]],
    probs: np.ndarray,
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    token_title: str,
    highlight_token: str | None = None,
) -> ChartSpec:
    """Stages × rank grid: each cell names the token at that rank, shaded by its probability.

    The model's own final answer is outlined wherever it appears, so its rise is easy to follow.
    """
    probs = np.asarray(probs, dtype=float)
    n_stage, k = probs.shape
    values = probs.tolist()
    rows = []
    for s in range(n_stage):
        for r in range(k):
            token, p = tokens[s][r], values[s][r]
            rows.append({
                "stage": stage_labels[s], "rank": r + 1, "token": token, "prob": vl.json_number(p),
                "shown": f"{p:.3f}", "cell": f"{token}\n{p:.2f}",
                "is_final": highlight_token is not None and token == highlight_token,
            })
    x = _field("rank", "ordinal", axis={"labelAngle": 0}, title=x_title)
    # "embedding (before block 0)" whole
    y = _field("stage", "nominal", axis={"labelLimit": 280}, sort=list(stage_labels), title=y_title)
    cells = {"mark": {"type": "rect", "stroke": RECOMPUTE_COLOR}, "encoding": {
        "color": _field("prob", "quantitative", scale={"domain": [0, 1], "scheme": dict(SEQUENTIAL_BLUES)},
                        title=value_title),
        "strokeWidth": {"condition": {"test": "datum.is_final", "value": 3}, "value": 0},
        "tooltip": [_tip("stage", y_title), _tip("rank", x_title, "ordinal"), _tip("token", token_title),
                    _tip("shown", value_title)],
        "x": x, "y": y}}
    text = {"mark": {"type": "text", "fontSize": 11, "limit": {"expr": CELL_TEXT_LIMIT}}, "encoding": {
        "color": {"condition": {"test": "datum.prob > 0.55", "value": "#ffffff"}, "value": DARK_TEXT},
        "text": _field("token", "nominal"), "x": x, "y": y}}
    return _spec({"layer": [cells, text]}, rows, title=title, height=40 * n_stage)


def final_token_by_stage_chart(
    stage_labels: Sequence[str],
    probs: Sequence[float],
    ranks: Sequence[int],
    *,
    title: str,
    x_title: str,
    y_title: str,
    rank_title: str,
) -> ChartSpec:
    """How probable the model's final answer already is after each stage."""
    rows = [{"stage": stage, "prob": vl.json_number(p), "rank": int(r), "shown": f"{float(p):.4f}"}
            for stage, p, r in zip(stage_labels, probs, ranks)]
    encoding = {
        "tooltip": [_tip("stage", x_title), _tip("shown", y_title), _tip("rank", rank_title, "quantitative")],
        # slanted: on a phone five level labels side by side ran into each other
        "x": _field("stage", "nominal", axis={"labelAngle": -35, "labelLimit": 180, "labelOverlap": False},
                    sort=list(stage_labels), title=x_title),
        "y": _field("prob", "quantitative", scale={"domain": [0, 1]}, title=y_title),
    }
    return _spec({"mark": {"type": "line", "color": AFTER_COLOR, "point": {"size": 70}}, "encoding": encoding}, rows,
                 title=title, height=200)


# --- generation and the KV cache --------------------------------------------------------------


def timeline_chart(
    steps: Sequence[int],
    tokens: Sequence[str],
    probs: Sequence[float],
    alternatives: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    token_title: str,
    alternatives_title: str,
) -> ChartSpec:
    """One bar per generation step: the chosen token and the probability it had when drawn."""
    # Each step's token is written under its bar as the axis label ("3 ␣Paris"): rotated axis
    # labels never overlap (Vega drops some on a narrow screen), text above the bars did.
    rows = [{"step": int(s), "token": tok, "prob": vl.json_number(p), "alternatives": alt_text, "shown": f"{float(p):.4f}",
             "tick": f"{int(s)} {tok}"} for s, tok, p, alt_text in zip(steps, tokens, probs, alternatives)]
    encoding = {
        "tooltip": [_tip("step", x_title, "ordinal"), _tip("token", token_title), _tip("shown", y_title),
                    _tip("alternatives", alternatives_title)],
        "x": _field("tick", "nominal", axis={"labelAngle": -60, "labelLimit": 110, "labelOverlap": "greedy"},
                    sort=[row["tick"] for row in rows], title=x_title),
        "y": _field("prob", "quantitative", axis={"values": list(PROB_TICKS)}, scale={"domain": [0, 1]}, title=y_title),
    }
    return _spec({"mark": {"type": "bar", "color": AFTER_COLOR}, "encoding": encoding}, rows, title=title, height=260)


def top5_chart(labels: Sequence[str], probs: Sequence[float], chosen: str, *, title: str, x_title: str,
               y_title: str, chosen_title: str, chosen_name: str, other_name: str) -> ChartSpec:
    """The five most probable tokens of one step; the one drawn is coloured differently."""
    rows = [{"token": tok, "prob": vl.json_number(p), "kind": chosen_name if tok == chosen else other_name,
             "shown": f"{float(p):.4f}"} for tok, p in zip(labels, probs)]
    y = _field("token", "nominal", axis={"labelLimit": 160}, sort=list(labels), title=y_title)
    x = _field("prob", "quantitative", axis={"values": list(PROB_TICKS)}, scale={"domain": [0, 1]}, title=x_title)
    color = _field("kind", "nominal", legend=_legend_below(),
                   scale=_scale([chosen_name, other_name], [CACHED_COLOR, ORIGINAL_COLOR]), title=chosen_title)
    tooltip = [_tip("token", y_title), _tip("shown", x_title)]
    return _spec({"layer": _bars_with_values(y, x, color, tooltip, "prob")}, rows, title=title, height=34 * len(rows))


def two_series_line_chart(
    steps: Sequence[int],
    series: Mapping[str, Sequence[float]],
    colors: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
    value_format: str = ",.0f",
    log_scale: bool = False,
) -> ChartSpec:
    """Lines over generation steps (e.g. K/V projections or milliseconds, with vs without cache)."""
    rows = [{"step": int(s), "series": name, "value": vl.json_number(v), "shown": format(float(v), value_format)}
            for name, values in series.items() for s, v in zip(steps, values)]
    names = list(series)
    encoding = {
        "color": _field("series", "nominal", legend=_legend_below(), scale=_scale(names, colors), sort=names,
                        title=series_title),
        "strokeDash": vl.dashes(names, series_title, _legend_below()),  # each line its dash: not colour alone
        "tooltip": [_tip("step", x_title, "quantitative"), _tip("series", series_title), _tip("shown", y_title)],
        "x": _field("step", "quantitative", axis={"format": "d", "tickMinStep": 1}, title=x_title),
        "y": _field("value", "quantitative", scale={"type": "log"} if log_scale else {"zero": True}, title=y_title),
    }
    return _spec({"mark": {"type": "line", "point": True}, "encoding": encoding}, rows, title=title, height=280)


def cache_length_chart(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    value_format: str = ".0f",
    show_values: bool = False,
) -> ChartSpec:
    """The cache length of every layer after each step: ``ui.charts.common.heatmap`` of finite numbers."""
    values = np.asarray(matrix, dtype=float)
    if values.ndim == 2 and not np.isfinite(values).all():
        raise ValueError("cache lengths are finite numbers")
    return heatmap(values, row_labels, col_labels, title=title, x_title=x_title, y_title=y_title,
                   value_title=value_title, value_format=value_format, show_values=show_values)


# The causal mask's cell marks, in the order visible, newest, masked: a masked score is −∞.
_MASK_MARKS = ("", "●", "−∞")


def _mask_legend_labels(names: Sequence[str]) -> str:
    """A legend ``labelExpr`` writing each state's cell mark after its name ("masked −∞")."""
    expr = "datum.label"
    for name, mark in zip(names, _MASK_MARKS):
        if mark:
            expr = f"datum.label === {vl.quoted(name)} ? datum.label + {vl.quoted(' ' + mark)} : ({expr})"
    return expr


def causal_mask_chart(
    labels: Sequence[str],
    new_rows: int,
    *,
    title: str,
    x_title: str,
    y_title: str,
    state_title: str,
    visible_name: str,
    masked_name: str,
    newest_name: str,
) -> ChartSpec:
    """The causal mask of the sequence a step reads: row i (a query) may look at columns 0..i only.

    The last ``new_rows`` rows are drawn darker: the queries this step computes (the whole
    prompt in step 1, then one row per step with a KV cache); the rows above were computed
    in earlier steps. Pass at most a few dozen labels: the chart has one cell per pair.
    """
    n = len(labels)
    names = [visible_name, newest_name, masked_name]
    rows = []
    for q in range(n):
        row_state = newest_name if q >= n - new_rows else visible_name
        for k in range(n):
            masked = k > q
            state = masked_name if masked else row_state
            rows.append({"query": labels[q], "key": labels[k], "state": state, "mark": _MASK_MARKS[names.index(state)]})
    x = _field("key", "nominal", axis={"labelAngle": -45, "labelLimit": 100, "labelOverlap": False},
               sort=list(labels), title=x_title)
    y = _field("query", "nominal", axis={"labelLimit": 120}, sort=list(labels), title=y_title)
    cells = {"mark": {"type": "rect", "stroke": "#ffffff", "strokeWidth": 0.5}, "encoding": {
        "color": _field("state", "nominal", legend={**_legend_below(), "labelExpr": _mask_legend_labels(names)},
                        scale=_scale(names, [VISIBLE_COLOR, NEW_ROW_COLOR, MASKED_COLOR]), sort=names,
                        title=state_title),
        "tooltip": [_tip("query", y_title), _tip("key", x_title), _tip("state", state_title)], "x": x, "y": y}}
    side = max(220, min(640, 30 * n))
    # Each state's mark in its cells and after its name in the legend (never colour alone):
    # white reads on the newest rows' blue and the masked grey; smaller letters in small cells.
    marks = {"data": dict(_TABLE_REF), "mark": {"type": "text", "color": "#ffffff", "fontSize": 10 if n <= 24 else 8,
                                                "limit": {"expr": CELL_TEXT_LIMIT}},
             "encoding": {"text": _field("mark", "nominal"), "x": x, "y": y},
             "transform": [{"filter": "datum.mark !== ''"}]}
    return _spec({"layer": [{"data": dict(_TABLE_REF), **cells}, marks]}, rows, title=title, height=side,
                 top_data=False, fixed_size=True, width=side)


def kv_variants_chart(
    kinds: Sequence[str],
    total_bytes: Sequence[int],
    shown: Sequence[str],
    details: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    detail_title: str,
) -> ChartSpec:
    """Total cache size for MHA, GQA and MQA (bars in GB, decimal) with the exact size written on."""
    gb = [b / 1e9 for b in total_bytes]
    rows = [{"kind": k, "gb": vl.json_number(g), "shown": s, "detail": d} for k, g, s, d in zip(kinds, gb, shown, details)]
    # The labels ("MHA (40 KV)", "MHA（40 个 KV 头）") are short: never cut them with "…".
    y = _field("kind", "nominal", axis={"labelLimit": 400}, sort=list(kinds), title=y_title)
    x = _field("gb", "quantitative", scale={"domain": [0, max(1e-12, max(gb)) * 1.3]}, title=x_title)
    color = _field("kind", "nominal", legend=None,
                   scale=_scale(kinds, [RECOMPUTE_COLOR, AFTER_COLOR, CACHED_COLOR][: len(kinds)]), sort=list(kinds),
                   title=y_title)
    tooltip = [_tip("kind", y_title), _tip("shown", x_title), _tip("detail", detail_title)]
    return _spec({"layer": _bars_with_values(y, x, color, tooltip, "gb", text_dx=4)}, rows, title=title,
                 height=40 * len(rows))


def kv_growth_chart(
    contexts: Sequence[int],
    series: Mapping[str, Sequence[int]],
    shown: Mapping[str, Sequence[str]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    series_title: str,
) -> ChartSpec:
    """Total cache size against context length on log–log axes.

    The size is proportional to the context, so every variant is a straight line of slope 1;
    more KV heads shift the line up (parallel), they do not make it steeper.
    """
    rows = [{"tokens": int(n), "series": name, "gb": vl.json_number(b / 1e9), "shown": s}
            for name in series for n, b, s in zip(contexts, series[name], shown[name])]
    names = list(series)
    encoding = {
        "color": _field("series", "nominal", legend=_legend_below(),
                        scale=_scale(names, [RECOMPUTE_COLOR, AFTER_COLOR, CACHED_COLOR][: len(names)]), sort=names,
                        title=series_title),
        "strokeDash": vl.dashes(names, series_title, _legend_below()),  # each line its dash: not colour alone
        "tooltip": [_tip("series", series_title), _tip("tokens", x_title, "quantitative", format=","),
                    _tip("shown", y_title)],
        "x": _field("tokens", "quantitative", axis={"format": "~s"}, scale={"type": "log"}, title=x_title),
        "y": _field("gb", "quantitative", scale={"type": "log"}, title=y_title),
    }
    return _spec({"mark": {"type": "line", "point": True}, "encoding": encoding}, rows, title=title, height=300)


_BUILDERS: dict[str, Any] = {
    f.__name__: f
    for f in (
        top_tokens_chart, before_after_chart, sample_histogram_chart, logit_lens_chart, final_token_by_stage_chart,
        timeline_chart, top5_chart, two_series_line_chart, cache_length_chart, causal_mask_chart, kv_variants_chart,
        kv_growth_chart,
    )
}
