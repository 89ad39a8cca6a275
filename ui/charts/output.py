"""Charts for the output stations: next-token odds, sampling, the logit lens, generation, KV cache.

Every builder takes plain arrays and already-translated strings and returns a finished
Vega-Lite spec (built with Altair, data attached) with a title, axis titles, a legend where
colour carries meaning and exact-value tooltips; ``show(spec)`` renders it and
``cached(builder, ...)`` memoises a builder call. Token labels arrive already made visible
(``ui.tokens.display_token``) and unique.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from core.registry import memo
from ui.charts.common import CJK_FONT, SEQUENTIAL_BLUES, cell_text_limit
from ui.tokens import display_token

# Colours that read on Streamlit's light and dark backgrounds alike.
ORIGINAL_COLOR = "#9aa5b1"  # grey-blue: "before"
AFTER_COLOR = "#2f6fdb"  # the app's primary blue: "after the knobs"
TAIL_COLOR = "#c9a227"  # amber: the long tail of the vocabulary
CACHED_COLOR = "#2f9e44"  # green: with the KV cache
RECOMPUTE_COLOR = "#e8590c"  # orange: recompute everything
MASKED_COLOR = "#868e96"
VISIBLE_COLOR = "#74c0fc"
NEW_ROW_COLOR = "#1c7ed6"
DARK_TEXT = "#1b1b1b"  # text drawn on light cells
PROB_TICKS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # room is left above 1 for labels; no tick claims p > 1
LABEL_TEXT = "#76808f"  # value labels beside bars: readable on the light and the dark background
# Legends go under the chart: on the right they cover the value labels beside the bars and
# squeeze the plot to nothing on a phone. (autosize "fit-x" keeps the plot's own height.)
LEGEND_BELOW = alt.Legend(orient="bottom", direction="vertical", labelLimit=480, titleLimit=480)
LEGEND = LEGEND_BELOW


def token_labels(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Readable, unique axis labels for token ids: visible spaces, byte tokens by name.

    A lone byte of a Chinese character decodes to "�"; its vocabulary name (``<0xE5>``) says
    more. Two ids that still look alike get their id appended, so chart axes never merge them.

    Example: token_labels(tok, [tok.encode(" Paris")[0]]) -> ["␣Paris"]
    """
    labels = []
    for i in ids:
        text = tokenizer.decode([int(i)])
        if "\ufffd" in text:
            text = tokenizer.id_to_token(int(i))
        labels.append(display_token(text))
    ids_per_label: dict[str, set[int]] = {}
    for label, i in zip(labels, ids):
        ids_per_label.setdefault(label, set()).add(int(i))
    return [f"{label} #{int(i)}" if len(ids_per_label[label]) > 1 else label for label, i in zip(labels, ids)]


TABLE = "table"  # every chart reads one named dataset, attached after Altair is done
ChartSpec = dict[str, Any]  # a finished Vega-Lite spec with its data


def _source() -> alt.Data:
    return alt.Data(name=TABLE)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts; NaN becomes null."""
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def _finish(chart: alt.TopLevelMixin, frame: pd.DataFrame, fixed_size: bool = False) -> ChartSpec:
    """A CJK-capable font, sizes that mean the plot area, the data attached: a Vega-Lite dict.

    Streamlit's default autosize "fit" squeezes the plot so that title, axes and legend fit
    in the given height, which flattens charts with long labels to nothing. "fit-x" fills
    the width and leaves ``height`` as the plot's own height; "pad" keeps both as given.

    The data joins the spec only after Altair has finished (Altair copies every inline value
    on each ``.properties()``/``layer``), and Altair's schema validation is skipped: together
    they were most of a slider's redraw time. The app tests validate every spec instead.
    """
    out = _finish_layout(chart, fixed_size)
    out["datasets"] = {TABLE: _records(frame)}
    return out


def _finish_layout(chart: alt.TopLevelMixin, fixed_size: bool = False) -> ChartSpec:
    """``_finish`` without the data: the chart's layout, for builders that keep it (shared,
    read-only) and only fill in the data and the title per call."""
    autosize = alt.AutoSizeParams(type="pad" if fixed_size else "fit-x", contains="padding")
    return chart.properties(autosize=autosize).configure(font=CJK_FONT).to_dict(validate=False)


def show(chart: ChartSpec | alt.TopLevelMixin, width: str = "stretch", live: bool = False) -> None:
    """Render a spec from this module (or any Altair chart, unvalidated) with Streamlit's theme.

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


def _legend_scale(domain: Sequence[str], colors: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(domain), range=list(colors))


# --- logits and sampling ----------------------------------------------------------------------


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
    frame = pd.DataFrame({
        "token": [*labels, tail_label],
        "prob": [*map(float, probs), float(tail_mass)],
        "kind": [kind_top] * len(labels) + [kind_tail],
        "logit": [*(f"{v:.3f}" for v in logits), "—"] if logits is not None else ["—"] * (len(labels) + 1),
    })
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    order = list(frame["token"])
    base = alt.Chart(_source()).encode(
        y=alt.Y("token:N", sort=order, title=y_title, axis=alt.Axis(labelLimit=180)),
    )
    bars = base.mark_bar().encode(
        # A probability axis never goes past 1; the value labels may run past the plot's end.
        x=alt.X("prob:Q", title=x_title, scale=alt.Scale(domain=[0, min(1.0, max(1e-9, float(frame["prob"].max())) * 1.15)])),
        # The legend goes below: on the right it would sit on the value labels.
        color=alt.Color("kind:N", title=kind_title, scale=_legend_scale([kind_top, kind_tail], [AFTER_COLOR, TAIL_COLOR]),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("token:N", title=y_title), alt.Tooltip("shown:N", title=x_title),
                 alt.Tooltip("logit:N", title=logit_title)],
    )
    text = base.mark_text(align="left", dx=3, color=LABEL_TEXT).encode(x=alt.X("prob:Q"), text=alt.Text("shown:N"))
    return _finish(alt.layer(bars, text).properties(title=title, height=24 * len(frame)), frame)


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
    frame = pd.DataFrame({
        "token": [*labels, *labels],
        "series": [original_name] * n + [after_name] * n,
        "prob": [*map(float, original), *map(float, after)],
        "status": [*status, *status],
    })
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    frame["note"] = [
        f"✂ {s}" if series == after_name and p == 0 else ""
        for s, series, p in zip(frame["status"], frame["series"], frame["prob"])
    ]
    # The knobs change the bars, the notes and the title, never the layout: built once per
    # (tokens, titles), the layout costs a lookup per move (and stays the same text: ``live``).
    layout = _before_after_layout(tuple(labels), x_title, y_title, series_title, original_name, after_name,
                                  status_title)
    return {**layout, "title": title, "datasets": {TABLE: _records(frame)}}


@lru_cache(maxsize=64)
def _before_after_layout(labels: tuple[str, ...], x_title: str, y_title: str, series_title: str,
                         original_name: str, after_name: str, status_title: str) -> ChartSpec:
    n = len(labels)
    order = list(labels)
    series_order = [original_name, after_name]
    y = alt.Y("token:N", sort=order, title=y_title, axis=alt.Axis(labelLimit=180))
    offset = alt.YOffset("series:N", sort=series_order)
    bars = alt.Chart(_source()).mark_bar().encode(
        y=y, yOffset=offset,
        x=alt.X("prob:Q", title=x_title, scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("series:N", title=series_title, sort=series_order,
                        scale=_legend_scale(series_order, [ORIGINAL_COLOR, AFTER_COLOR]),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("token:N", title=y_title), alt.Tooltip("series:N", title=series_title),
                 alt.Tooltip("shown:N", title=x_title), alt.Tooltip("status:N", title=status_title)],
    )
    notes = alt.Chart(_source()).mark_text(align="left", dx=4, fontSize=11, color=RECOMPUTE_COLOR).encode(
        y=y, yOffset=offset, x=alt.X("prob:Q"), text=alt.Text("note:N"),
    )
    values = alt.Chart(_source()).transform_filter("datum.prob > 0").mark_text(align="left", dx=3, fontSize=10, color=LABEL_TEXT).encode(
        y=y, yOffset=offset, x=alt.X("prob:Q"), text=alt.Text("shown:N"),
    )
    # 22 px a bar: the two values written beside a token's bars ran into each other at the
    # presenter's 16 px text (17 px a bar before).
    return _finish_layout(alt.layer(bars, values, notes).properties(title="", height=44 * n))


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
    frame = pd.DataFrame({
        "token": [*labels, *labels],
        "series": [observed_name] * len(labels) + [expected_name] * len(labels),
        "value": [*map(float, observed), *map(float, expected)],
        "count": [*map(int, counts), *map(int, counts)],
    })
    frame["shown"] = [f"{v:.4f}" for v in frame["value"]]
    # The bars' order is data (a rank per token), not a list in the spec: which tokens are shown
    # changes with every knob and draw, the spec does not (the browser swaps the data in).
    frame["order"] = [*range(len(labels)), *range(len(labels))]
    layout = _histogram_layout(x_title, y_title, series_title, observed_name, expected_name, count_title)
    return {**layout, "title": title, "datasets": {TABLE: _records(frame)}}


@lru_cache(maxsize=64)
def _histogram_layout(x_title: str, y_title: str, series_title: str, observed_name: str, expected_name: str,
                      count_title: str) -> ChartSpec:
    """``sample_histogram_chart``'s layout: the same for every knob, draw and N."""
    names = [observed_name, expected_name]
    color = alt.Color("series:N", title=series_title, sort=names,
                      scale=_legend_scale(names, [AFTER_COLOR, RECOMPUTE_COLOR]), legend=LEGEND)
    x = alt.X("token:N", sort=alt.EncodingSortField(field="order", op="min"), title=x_title,
              axis=alt.Axis(labelAngle=-40, labelLimit=120, labelOverlap=False))
    tooltip = [alt.Tooltip("token:N", title=x_title), alt.Tooltip("series:N", title=series_title),
               alt.Tooltip("shown:N", title=y_title), alt.Tooltip("count:Q", title=count_title)]
    base = alt.Chart(_source())
    bars = base.transform_filter(alt.datum.series == observed_name).mark_bar(opacity=0.85).encode(
        x=x, y=alt.Y("value:Q", title=y_title), color=color, tooltip=tooltip)
    ticks = base.transform_filter(alt.datum.series == expected_name).mark_tick(thickness=3, size=26).encode(
        x=x, y=alt.Y("value:Q"), color=color, tooltip=tooltip)
    return _finish_layout(alt.layer(bars, ticks).properties(title="", height=320))


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
    rows = []
    for s in range(n_stage):
        for r in range(k):
            token = tokens[s][r]
            rows.append({
                "stage": stage_labels[s], "rank": r + 1, "token": token, "prob": probs[s, r],
                "shown": f"{probs[s, r]:.3f}", "cell": f"{token}\n{probs[s, r]:.2f}",
                "is_final": highlight_token is not None and token == highlight_token,
            })
    frame = pd.DataFrame(rows)
    x = alt.X("rank:O", title=x_title, axis=alt.Axis(labelAngle=0))
    y = alt.Y("stage:N", sort=list(stage_labels), title=y_title, axis=alt.Axis(labelLimit=280))  # "embedding (before block 0)" whole
    base = alt.Chart(_source())
    cells = base.mark_rect(stroke=RECOMPUTE_COLOR).encode(
        x=x, y=y,
        color=alt.Color("prob:Q", title=value_title, scale=alt.Scale(scheme=SEQUENTIAL_BLUES, domain=[0, 1])),
        strokeWidth=alt.StrokeWidthValue(0, condition={"test": "datum.is_final", "value": 3}),
        tooltip=[alt.Tooltip("stage:N", title=y_title), alt.Tooltip("rank:O", title=x_title),
                 alt.Tooltip("token:N", title=token_title), alt.Tooltip("shown:N", title=value_title)],
    )
    text = base.mark_text(fontSize=11, limit=cell_text_limit()).encode(
        x=x, y=y, text=alt.Text("token:N"),
        color=alt.ColorValue(DARK_TEXT, condition={"test": "datum.prob > 0.55", "value": "#ffffff"}),
    )
    return _finish(alt.layer(cells, text).properties(title=title, height=40 * n_stage), frame)


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
    frame = pd.DataFrame({"stage": list(stage_labels), "prob": list(map(float, probs)), "rank": list(map(int, ranks))})
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    chart = alt.Chart(_source()).mark_line(point=alt.OverlayMarkDef(size=70), color=AFTER_COLOR).encode(
        x=alt.X("stage:N", sort=list(stage_labels), title=x_title,
                # slanted: on a phone five level labels side by side ran into each other
                axis=alt.Axis(labelAngle=-35, labelLimit=180, labelOverlap=False)),
        y=alt.Y("prob:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("stage:N", title=x_title), alt.Tooltip("shown:N", title=y_title),
                 alt.Tooltip("rank:Q", title=rank_title)],
    )
    return _finish(chart.properties(title=title, height=200), frame)


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
    frame = pd.DataFrame({"step": list(map(int, steps)), "token": list(tokens), "prob": list(map(float, probs)),
                          "alternatives": list(alternatives)})
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    # Each step's token is written under its bar as the axis label ("3 ␣Paris"): rotated axis
    # labels never overlap (Vega drops some on a narrow screen), text above the bars did.
    frame["tick"] = [f"{s} {tok}" for s, tok in zip(frame["step"], frame["token"])]
    x = alt.X("tick:N", sort=list(frame["tick"]), title=x_title,
              axis=alt.Axis(labelAngle=-60, labelLimit=110, labelOverlap="greedy"))
    base = alt.Chart(_source()).encode(x=x)
    tooltip = [alt.Tooltip("step:O", title=x_title), alt.Tooltip("token:N", title=token_title),
               alt.Tooltip("shown:N", title=y_title), alt.Tooltip("alternatives:N", title=alternatives_title)]
    bars = base.mark_bar(color=AFTER_COLOR).encode(
        y=alt.Y("prob:Q", title=y_title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(values=PROB_TICKS)),
        tooltip=tooltip)
    return _finish(bars.properties(title=title, height=260), frame)


def top5_chart(labels: Sequence[str], probs: Sequence[float], chosen: str, *, title: str, x_title: str,
               y_title: str, chosen_title: str, chosen_name: str, other_name: str) -> ChartSpec:
    """The five most probable tokens of one step; the one drawn is coloured differently."""
    frame = pd.DataFrame({"token": list(labels), "prob": list(map(float, probs))})
    frame["kind"] = [chosen_name if tok == chosen else other_name for tok in frame["token"]]
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    base = alt.Chart(_source()).encode(y=alt.Y("token:N", sort=list(labels), title=y_title, axis=alt.Axis(labelLimit=160)))
    bars = base.mark_bar().encode(
        x=alt.X("prob:Q", title=x_title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(values=PROB_TICKS)),
        color=alt.Color("kind:N", title=chosen_title, scale=_legend_scale([chosen_name, other_name],
                                                                          [CACHED_COLOR, ORIGINAL_COLOR]),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("token:N", title=y_title), alt.Tooltip("shown:N", title=x_title)],
    )
    text = base.mark_text(align="left", dx=3, color=LABEL_TEXT).encode(x=alt.X("prob:Q"), text=alt.Text("shown:N"))
    return _finish(alt.layer(bars, text).properties(title=title, height=34 * len(frame)), frame)


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
    rows = [{"step": int(s), "series": name, "value": float(v)}
            for name, values in series.items() for s, v in zip(steps, values)]
    frame = pd.DataFrame(rows)
    frame["shown"] = [format(v, value_format) for v in frame["value"]]
    names = list(series)
    chart = alt.Chart(_source()).mark_line(point=True).encode(
        x=alt.X("step:Q", title=x_title, axis=alt.Axis(tickMinStep=1, format="d")),
        y=alt.Y("value:Q", title=y_title, scale=alt.Scale(type="log") if log_scale else alt.Scale(zero=True)),
        color=alt.Color("series:N", title=series_title, sort=names, scale=_legend_scale(names, colors),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("step:Q", title=x_title), alt.Tooltip("series:N", title=series_title),
                 alt.Tooltip("shown:N", title=y_title)],
    )
    return _finish(chart.properties(title=title, height=280), frame)


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
    rows = []
    for q in range(n):
        for k in range(n):
            if k > q:
                state = masked_name
            elif q >= n - new_rows:
                state = newest_name
            else:
                state = visible_name
            rows.append({"query": labels[q], "key": labels[k], "state": state,
                         "score": "−∞" if k > q else "✓"})
    frame = pd.DataFrame(rows)
    names = [visible_name, newest_name, masked_name]
    x = alt.X("key:N", sort=list(labels), title=x_title,
              axis=alt.Axis(labelAngle=-45, labelLimit=100, labelOverlap=False))
    y = alt.Y("query:N", sort=list(labels), title=y_title, axis=alt.Axis(labelLimit=120))
    cells = alt.Chart(_source()).mark_rect(stroke="#ffffff", strokeWidth=0.5).encode(
        x=x, y=y,
        color=alt.Color("state:N", title=state_title, sort=names,
                        scale=_legend_scale(names, [VISIBLE_COLOR, NEW_ROW_COLOR, MASKED_COLOR]),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("query:N", title=y_title), alt.Tooltip("key:N", title=x_title),
                 alt.Tooltip("state:N", title=state_title)],
    )
    layers: list[alt.Chart] = [cells]
    if n <= 24:  # the −∞ marks only while the cells are big enough to hold them
        layers.append(alt.Chart(_source()).transform_filter("datum.score !== '✓'").mark_text(fontSize=10, color="#ffffff")
                      .encode(x=x, y=y, text=alt.Text("score:N")))
    side = max(220, min(640, 30 * n))
    chart = alt.layer(*layers)
    return _finish(chart.properties(title=title, width=side, height=side), frame, fixed_size=True)


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
    frame = pd.DataFrame({"kind": list(kinds), "gb": [b / 1e9 for b in total_bytes], "shown": list(shown),
                          "detail": list(details)})
    # The labels ("MHA (40 KV)", "MHA（40 个 KV 头）") are short: never cut them with "…".
    base = alt.Chart(_source()).encode(y=alt.Y("kind:N", sort=list(kinds), title=y_title,
                                               axis=alt.Axis(labelLimit=400)))
    bars = base.mark_bar().encode(
        x=alt.X("gb:Q", title=x_title, scale=alt.Scale(domain=[0, max(1e-12, float(frame["gb"].max())) * 1.3])),
        color=alt.Color("kind:N", title=y_title, sort=list(kinds),
                        scale=_legend_scale(list(kinds), [RECOMPUTE_COLOR, AFTER_COLOR, CACHED_COLOR][: len(kinds)]),
                        legend=None),
        tooltip=[alt.Tooltip("kind:N", title=y_title), alt.Tooltip("shown:N", title=x_title),
                 alt.Tooltip("detail:N", title=detail_title)],
    )
    text = base.mark_text(align="left", dx=4, color=LABEL_TEXT).encode(x=alt.X("gb:Q"), text=alt.Text("shown:N"))
    return _finish(alt.layer(bars, text).properties(title=title, height=40 * len(frame)), frame)


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
    rows = [{"tokens": int(n), "series": name, "gb": b / 1e9, "shown": s}
            for name in series for n, b, s in zip(contexts, series[name], shown[name])]
    frame = pd.DataFrame(rows)
    names = list(series)
    chart = alt.Chart(_source()).mark_line(point=True).encode(
        x=alt.X("tokens:Q", title=x_title, scale=alt.Scale(type="log"), axis=alt.Axis(format="~s")),
        y=alt.Y("gb:Q", title=y_title, scale=alt.Scale(type="log")),
        color=alt.Color("series:N", title=series_title, sort=names,
                        scale=_legend_scale(names, [RECOMPUTE_COLOR, AFTER_COLOR, CACHED_COLOR][: len(names)]),
                        legend=LEGEND_BELOW),
        tooltip=[alt.Tooltip("series:N", title=series_title), alt.Tooltip("tokens:Q", title=x_title, format=","),
                 alt.Tooltip("shown:N", title=y_title)],
    )
    return _finish(chart.properties(title=title, height=300), frame)


_BUILDERS: dict[str, Any] = {
    f.__name__: f
    for f in (
        top_tokens_chart, before_after_chart, sample_histogram_chart, logit_lens_chart, final_token_by_stage_chart,
        timeline_chart, top5_chart, two_series_line_chart, causal_mask_chart, kv_variants_chart, kv_growth_chart,
    )
}
