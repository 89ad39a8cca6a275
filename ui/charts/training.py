"""Charts of the Training page: plain data in, an Altair chart out (no Streamlit, no model).

- ``loss_curves``: training loss (per step, bucketed) and held-out loss over the steps, the
  snapshot steps as points, the chosen step as a rule, and the uniform start ln(vocab).
- ``next_token_bars``: the most probable next tokens with the target highlighted (axis ends at 1).
- ``cross_entropy_curve``: −ln p against p with the textbook example's points and the chosen p.
- ``live_loss``: a live run's training loss and held-out points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from ui.charts.output import LABEL_TEXT  # text beside marks: readable on light and dark

TRAIN_COLOUR = "#4c78a8"
HELD_COLOUR = "#f58518"
MARK_COLOUR = "#e45756"
UNIFORM_COLOUR = "#9d9d9d"

# The given height is the plot's own: with Streamlit's default autosize "fit" the legend and
# titles below would be taken out of it and squeeze the bars to a sliver ("fit-x" fills the width only).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")


@dataclass(frozen=True)
class LossText:
    title: str
    x_title: str
    y_title: str
    series_title: str
    train: str
    heldout: str
    uniform: str
    step_now: str


def loss_curves(train_steps: Sequence[int], train_values: Sequence[float], held: Sequence[tuple[int, float]],
                snapshot_steps: Sequence[int], step: int, uniform: float, *, text: LossText) -> alt.LayerChart:
    """Loss against training step (a symlog x axis: the fast early fall and the long tail both show).

    Example: loss_curves([1, 2], [3.0, 2.0], [(2, 2.1)], [0, 2], 2, 7.5, text=LossText(*"abcdefgh"))
    """
    rows = [{"step": int(s), "loss": float(v), "series": text.train} for s, v in zip(train_steps, train_values)]
    rows += [{"step": int(s), "loss": float(v), "series": text.heldout} for s, v in held if math.isfinite(v)]
    frame = pd.DataFrame(rows, columns=["step", "loss", "series"])
    frame["shown"] = [f"{v:.3f}" for v in frame["loss"]]
    held_frame = frame[frame["series"] == text.heldout]
    marks = held_frame[held_frame["step"].isin(list(snapshot_steps))]
    last = int(max([*train_steps, *snapshot_steps, step, 1]))
    # Vega's own symlog ticks label only the ends: name the powers of ten on the way.
    ticks = [0, *(10 ** k for k in range(1, 7) if 10 ** k < last * 0.8), last]
    x = alt.X("step:Q", title=text.x_title, scale=alt.Scale(type="symlog", domainMin=0),
              axis=alt.Axis(values=ticks, format=","))
    y = alt.Y("loss:Q", title=text.y_title, scale=alt.Scale(domainMin=0))
    colour = alt.Color("series:N", title=text.series_title,
                       scale=alt.Scale(domain=[text.train, text.heldout], range=[TRAIN_COLOUR, HELD_COLOUR]),
                       legend=alt.Legend(orient="bottom"))
    tooltip = [alt.Tooltip("series:N", title=text.series_title), alt.Tooltip("step:Q", title=text.x_title),
               alt.Tooltip("shown:N", title=text.y_title)]
    lines = alt.Chart(frame).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour, tooltip=tooltip)
    points = alt.Chart(marks).mark_point(filled=True, size=45).encode(x=x, y=y, color=colour, tooltip=tooltip)
    uniform_frame = pd.DataFrame({"loss": [float(uniform)], "label": [text.uniform], "shown": [f"{uniform:.3f}"]})
    uniform_rule = alt.Chart(uniform_frame).mark_rule(strokeDash=[4, 4], color=UNIFORM_COLOUR).encode(
        y="loss:Q", tooltip=[alt.Tooltip("label:N", title=text.series_title), alt.Tooltip("shown:N", title=text.y_title)])
    now = pd.DataFrame({"step": [int(step)], "label": [text.step_now]})
    rule = alt.Chart(now).mark_rule(color=MARK_COLOUR, strokeWidth=2).encode(
        x=alt.X("step:Q", scale=alt.Scale(type="symlog", domainMin=0)),
        tooltip=[alt.Tooltip("label:N", title=text.series_title), alt.Tooltip("step:Q", title=text.x_title)])
    return alt.layer(lines, points, uniform_rule, rule).properties(title=text.title, height=300, autosize=FIT_WIDTH)


@dataclass(frozen=True)
class BarsText:
    title: str
    x_title: str
    y_title: str
    kind_title: str
    target: str
    other: str


def next_token_bars(labels: Sequence[str], probs: Sequence[float], is_target: Sequence[bool], *,
                    text: BarsText) -> alt.LayerChart:
    """Horizontal probability bars, the target token in its own colour; the axis runs 0..1.

    Example: next_token_bars(["␣Paris", "␣Rome"], [0.7, 0.1], [True, False], text=BarsText(*"abcdef"))
    """
    frame = pd.DataFrame({
        "token": list(labels), "prob": [float(p) for p in probs],
        "kind": [text.target if t else text.other for t in is_target],
    })
    frame["shown"] = [f"{p:.4f}" for p in frame["prob"]]
    y = alt.Y("token:N", sort=list(labels), title=text.y_title, axis=alt.Axis(labelLimit=160))
    x = alt.X("prob:Q", title=text.x_title, scale=alt.Scale(domain=[0, 1]))
    tooltip = [alt.Tooltip("token:N", title=text.y_title), alt.Tooltip("shown:N", title=text.x_title)]
    bars = alt.Chart(frame).mark_bar().encode(
        y=y, x=x, tooltip=tooltip,
        color=alt.Color("kind:N", title=text.kind_title,
                        scale=alt.Scale(domain=[text.target, text.other], range=[MARK_COLOUR, TRAIN_COLOUR]),
                        legend=alt.Legend(orient="bottom")),
    )
    # The value beside each bar: at step 0 every p is ~1/vocab and the bars are too thin to see.
    values = alt.Chart(frame).mark_text(align="left", dx=4, color=LABEL_TEXT).encode(y=y, x=x, text="shown:N", tooltip=tooltip)
    return alt.layer(bars, values).properties(title=text.title, height=max(160, 24 * len(labels)), autosize=FIT_WIDTH)


RIGHT_LABEL_LIMIT = 0.6  # p above which a point's label is drawn to its left


def cross_entropy_curve(p_now: float, examples: Sequence[tuple[float, str]], *, title: str, x_title: str,
                        y_title: str, point_title: str) -> alt.LayerChart:
    """−ln p for p in (0, 1], the textbook example's points labelled, the chosen p marked.

    Example: cross_entropy_curve(0.5, [(0.9, "0.9"), (0.01, "0.01")], title="t", x_title="p", y_title="loss", point_title="p")
    """
    ps = np.concatenate([np.geomspace(0.002, 0.05, 40), np.linspace(0.05, 1.0, 60)])
    curve = pd.DataFrame({"p": ps, "loss": -np.log(ps)})
    curve["shown"] = [f"{v:.3f}" for v in curve["loss"]]
    pts = pd.DataFrame({"p": [p for p, _ in examples] + [p_now],
                        "label": [lab for _, lab in examples] + [f"p = {p_now:.3f}"],
                        "kind": ["example"] * len(examples) + ["now"]})
    pts["loss"] = -np.log(pts["p"])
    pts["shown"] = [f"{v:.3f}" for v in pts["loss"]]
    x = alt.X("p:Q", title=x_title, scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("loss:Q", title=y_title)
    tooltip = [alt.Tooltip("p:Q", title=x_title, format=".3f"), alt.Tooltip("shown:N", title=y_title)]
    line = alt.Chart(curve).mark_line(color=TRAIN_COLOUR, strokeWidth=2).encode(x=x, y=y, tooltip=tooltip)
    dots = alt.Chart(pts).mark_point(filled=True, size=90).encode(
        x=x, y=y, tooltip=[alt.Tooltip("label:N", title=point_title), *tooltip],
        color=alt.Color("kind:N", legend=None, scale=alt.Scale(domain=["example", "now"], range=[HELD_COLOUR, MARK_COLOUR])))
    # A label right of its point would run past the plot's right edge near p = 1: those
    # (p > 0.6) sit left of their point instead. The chosen p's label sits a line higher than
    # the examples', so the two stay apart when the slider is on an example (p = 0.9 at first).
    labels = []
    for kind, dy in (("example", -8), ("now", -24)):
        for near_right in (False, True):
            rows = pts[(pts["kind"] == kind) & ((pts["p"] > RIGHT_LABEL_LIMIT) == near_right)]
            if len(rows):
                labels.append(alt.Chart(rows).mark_text(
                    align="right" if near_right else "left", dx=-8 if near_right else 8, dy=dy,
                    color=LABEL_TEXT).encode(x=x, y=y, text="label:N"))
    return alt.layer(line, dots, *labels).properties(title=title, height=260, autosize=FIT_WIDTH)


def live_loss(points: Sequence[Sequence[float | None]], init_loss: float | None, total_steps: int, *,
              text: LossText) -> alt.LayerChart:
    """A live run: training loss per step and held-out loss where it was measured.

    ``points`` are (step, loss, tokens, seconds, heldout or None) rows.
    Example: live_loss([(1, 7.5, 1024, 0.1, None)], 7.6, 60, text=LossText(*"abcdefgh"))
    """
    rows = [{"step": int(p[0]), "loss": float(p[1]), "series": text.train} for p in points]
    rows += [{"step": int(p[0]), "loss": float(p[4]), "series": text.heldout} for p in points if p[4] is not None]
    if init_loss is not None:
        rows.insert(0, {"step": 0, "loss": float(init_loss), "series": text.heldout})
    frame = pd.DataFrame(rows, columns=["step", "loss", "series"])
    frame["shown"] = [f"{v:.3f}" for v in frame["loss"]]
    x = alt.X("step:Q", title=text.x_title, scale=alt.Scale(domain=[0, max(1, int(total_steps))]))
    y = alt.Y("loss:Q", title=text.y_title, scale=alt.Scale(domainMin=0))
    colour = alt.Color("series:N", title=text.series_title,
                       scale=alt.Scale(domain=[text.train, text.heldout], range=[TRAIN_COLOUR, HELD_COLOUR]),
                       legend=alt.Legend(orient="bottom"))
    tooltip = [alt.Tooltip("series:N", title=text.series_title), alt.Tooltip("step:Q", title=text.x_title),
               alt.Tooltip("shown:N", title=text.y_title)]
    train = alt.Chart(frame[frame["series"] == text.train]).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour, tooltip=tooltip)
    held = alt.Chart(frame[frame["series"] == text.heldout]).mark_line(point=True, strokeDash=[5, 3]).encode(
        x=x, y=y, color=colour, tooltip=tooltip)
    return alt.layer(train, held).properties(title=text.title, height=280, autosize=FIT_WIDTH)
