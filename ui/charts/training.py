"""Charts of the Training page: plain data in, a Vega-Lite dict out (no Streamlit, no model).

- ``loss_curves``: training loss (per step, bucketed) and held-out loss over the steps, the
  snapshot steps as points, the chosen step as a rule, and the uniform start ln(vocab).
- ``next_token_bars``: the most probable next tokens with the target highlighted (axis ends at 1).
- ``cross_entropy_curve``: −ln p against p with the textbook example's points and the chosen p.
- ``live_loss``: a live run's training loss and held-out points.

Each layer reads its own dataset (row dicts) under a fixed name: a live chart redrawn with more
points keeps its spec and names, so the browser updates the data of the chart it already has.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ui.charts import palettes, vl
from ui.charts.output import LABEL_TEXT  # text beside marks: readable on light and dark

# Okabe–Ito (ui.charts.palettes): training, held-out, the marker and the uniform guess stay
# apart for colour-blind eyes.
TRAIN_COLOUR = palettes.BLUE
HELD_COLOUR = palettes.ORANGE
MARK_COLOUR = palettes.VERMILLION
UNIFORM_COLOUR = palettes.NEUTRAL_GREY


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


def _loss_rows(points: Sequence[tuple[int, float]], series: str) -> vl.Rows:
    """One row per (step, loss) of a series, the loss also as the tooltip's text."""
    return [{"step": int(s), "loss": vl.json_number(v), "series": series, "shown": f"{float(v):.3f}"}
            for s, v in points]


def _series_colour(text: LossText) -> vl.Spec:
    """Training loss blue, held-out orange, in a legend under the plot."""
    return vl.field("series", "nominal", legend={"orient": "bottom"},
                    scale=vl.scale([text.train, text.heldout], [TRAIN_COLOUR, HELD_COLOUR]), title=text.series_title)


def _series_dash(text: LossText) -> vl.Spec:
    """Training loss solid, held-out dashed: the lines differ without their colour (one legend)."""
    return vl.dashes([text.train, text.heldout], text.series_title, {"orient": "bottom"})


def _loss_tooltip(text: LossText) -> list[vl.Spec]:
    return [vl.tooltip("series", text.series_title), vl.tooltip("step", text.x_title, "quantitative"),
            vl.tooltip("shown", text.y_title)]


def _layer(data: str, mark: vl.Spec, encoding: vl.Spec) -> vl.Spec:
    """One layer drawing the named dataset (candidate for vl.py: every layered chart writes it)."""
    return {"data": {"name": data}, "mark": mark, "encoding": encoding}


def loss_curves(train_steps: Sequence[int], train_values: Sequence[float], held: Sequence[tuple[int, float]],
                snapshot_steps: Sequence[int], step: int, uniform: float, *, text: LossText) -> vl.Spec:
    """Loss against training step (a symlog x axis: the fast early fall and the long tail both show).

    Example: loss_curves([1, 2], [3.0, 2.0], [(2, 2.1)], [0, 2], 2, 7.5, text=LossText(*"abcdefgh"))
    """
    held_rows = _loss_rows([(s, v) for s, v in held if math.isfinite(v)], text.heldout)
    lines = _loss_rows(list(zip(train_steps, train_values)), text.train) + held_rows
    snapshots = set(int(s) for s in snapshot_steps)
    marks = [row for row in held_rows if row["step"] in snapshots]
    last = int(max([*train_steps, *snapshot_steps, step, 1]))
    # Vega's own symlog ticks label only the ends: name the powers of ten on the way.
    ticks = [0, *(10 ** k for k in range(1, 7) if 10 ** k < last * 0.8), last]
    symlog = {"domainMin": 0, "type": "symlog"}
    # labelExpr, not format: Vega's symlog axis ignores "format" and wrote "1e+2", "3.2e+3".
    x = vl.field("step", "quantitative", axis={"values": ticks, "labelExpr": "format(datum.value, ',')"},
                 scale=symlog, title=text.x_title)
    y = vl.field("loss", "quantitative", scale={"domainMin": 0}, title=text.y_title)
    curve = {"color": _series_colour(text), "tooltip": _loss_tooltip(text), "x": x, "y": y}
    layers = [
        _layer("loss", {"type": "line", "strokeWidth": 2}, {**curve, "strokeDash": _series_dash(text)}),
        _layer("snapshots", {"type": "point", "filled": True, "size": 45}, curve),
        _layer("uniform", {"type": "rule", "color": UNIFORM_COLOUR, "strokeDash": [4, 4]}, {
            "tooltip": [vl.tooltip("label", text.series_title), vl.tooltip("shown", text.y_title)],
            "y": vl.field("loss", "quantitative")}),
        _layer("now", {"type": "rule", "color": MARK_COLOUR, "strokeWidth": 2}, {
            "tooltip": [vl.tooltip("label", text.series_title), vl.tooltip("step", text.x_title, "quantitative")],
            "x": x}),  # the same axis (format and ticks): a bare field let Vega write "3.2e+3"
    ]
    datasets = {
        "loss": lines, "snapshots": marks,
        "uniform": [{"loss": float(uniform), "label": text.uniform, "shown": f"{uniform:.3f}"}],
        "now": [{"step": int(step), "label": text.step_now}],
    }
    return vl.spec({"layer": layers}, datasets, title=text.title, height=300)


@dataclass(frozen=True)
class BarsText:
    title: str
    x_title: str
    y_title: str
    kind_title: str
    target: str
    other: str


def next_token_bars(labels: Sequence[str], probs: Sequence[float], is_target: Sequence[bool], *,
                    text: BarsText) -> vl.Spec:
    """Horizontal probability bars, the target token in its own colour; the axis runs 0..1.

    Example: next_token_bars(["␣Paris", "␣Rome"], [0.7, 0.1], [True, False], text=BarsText(*"abcdef"))
    """
    rows = [{"token": label, "prob": float(p), "kind": text.target if target else text.other,
             "shown": f"{float(p):.4f}"} for label, p, target in zip(labels, probs, is_target)]
    y = vl.field("token", "nominal", axis={"labelLimit": 160}, sort=list(labels), title=text.y_title)
    x = vl.field("prob", "quantitative", scale={"domain": [0, 1]}, title=text.x_title)
    tooltip = [vl.tooltip("token", text.y_title), vl.tooltip("shown", text.x_title)]
    colour = vl.field("kind", "nominal", legend={"orient": "bottom"},
                      scale=vl.scale([text.target, text.other], [MARK_COLOUR, TRAIN_COLOUR]), title=text.kind_title)
    bars = {"mark": {"type": "bar"}, "encoding": {"color": colour, "tooltip": tooltip, "x": x, "y": y}}
    # Each bar ends in its kind's symbol (never colour alone); the value after it: at step 0
    # every p is ~1/vocab and the bars are too thin to see.
    symbols = vl.bar_symbols(bars["encoding"], "kind", [text.target, text.other])
    values = {"mark": {"type": "text", "align": "left", "color": LABEL_TEXT, "dx": 11},
              "encoding": {"text": vl.field("shown", "nominal"), "tooltip": tooltip, "x": x, "y": y}}
    return vl.spec({"layer": [bars, symbols, values]}, {vl.TABLE: rows}, title=text.title, height=max(160, 24 * len(rows)),
                   data=vl.TABLE)


RIGHT_LABEL_LIMIT = 0.6  # p above which a point's label is drawn to its left


def _curve_rows() -> vl.Rows:
    """−ln p along p: dense near 0, where the curve is steep, then evenly to 1."""
    ps = np.concatenate([np.geomspace(0.002, 0.05, 40), np.linspace(0.05, 1.0, 60)])
    return [{"p": p, "loss": loss, "shown": f"{loss:.3f}"} for p, loss in zip(ps.tolist(), (-np.log(ps)).tolist())]


def cross_entropy_curve(p_now: float, examples: Sequence[tuple[float, str]], *, title: str, x_title: str,
                        y_title: str, point_title: str) -> vl.Spec:
    """−ln p for p in (0, 1], the textbook example's points labelled, the chosen p marked.

    Example: cross_entropy_curve(0.5, [(0.9, "0.9"), (0.01, "0.01")], title="t", x_title="p", y_title="loss", point_title="p")
    """
    points = [(float(p), label, "example") for p, label in examples] + [(float(p_now), f"p = {p_now:.3f}", "now")]
    losses = (-np.log([p for p, _, _ in points])).tolist()
    pts = [{"p": p, "label": label, "kind": kind, "loss": loss, "shown": f"{loss:.3f}"}
           for (p, label, kind), loss in zip(points, losses)]
    x = vl.field("p", "quantitative", scale={"domain": [0, 1]}, title=x_title)
    y = vl.field("loss", "quantitative", title=y_title)
    tooltip = [vl.tooltip("p", x_title, "quantitative", format=".3f"), vl.tooltip("shown", y_title)]
    layers = [
        _layer("curve", {"type": "line", "color": TRAIN_COLOUR, "strokeWidth": 2},
               {"tooltip": tooltip, "x": x, "y": y}),
        _layer("points", {"type": "point", "filled": True, "size": 90}, {
            "color": vl.field("kind", "nominal", legend=None,
                              scale=vl.scale(["example", "now"], [HELD_COLOUR, MARK_COLOUR])),
            # the chosen p a diamond, the examples dots: not colour alone
            "shape": vl.field("kind", "nominal", legend=None, scale=vl.scale(["example", "now"], ["circle", "diamond"])),
            "tooltip": [vl.tooltip("label", point_title), *tooltip], "x": x, "y": y}),
    ]
    datasets = {"curve": _curve_rows(), "points": pts}
    # A label right of its point would run past the plot's right edge near p = 1: those
    # (p > 0.6) sit left of their point instead. The chosen p's label sits a line higher than
    # the examples', so the two stay apart when the slider is on an example (p = 0.9 at first);
    # near an example it sits two lines higher: presenter mode's larger letters need the room.
    near_example = any(abs(float(p_now) - float(p)) < 0.15 for p, _ in examples)
    for kind, dy in (("example", -8), ("now", -48 if near_example else -24)):
        for near_right in (False, True):
            rows = [row for row in pts if row["kind"] == kind and (row["p"] > RIGHT_LABEL_LIMIT) == near_right]
            if rows:
                name = f"labels-{kind}-{'right' if near_right else 'left'}"
                datasets[name] = rows
                mark = {"type": "text", "align": "right" if near_right else "left", "color": LABEL_TEXT,
                        "dx": -8 if near_right else 8, "dy": dy}
                layers.append(_layer(name, mark, {"text": vl.field("label", "nominal"), "x": x, "y": y}))
    return vl.spec({"layer": layers}, datasets, title=title, height=260)


def live_loss(points: Sequence[Sequence[float | None]], init_loss: float | None, total_steps: int, *,
              text: LossText) -> vl.Spec:
    """A live run: training loss per step and held-out loss where it was measured.

    ``points`` are (step, loss, tokens, seconds, heldout or None) rows.
    Example: live_loss([(1, 7.5, 1024, 0.1, None)], 7.6, 60, text=LossText(*"abcdefgh"))
    """
    train = _loss_rows([(p[0], p[1]) for p in points], text.train)
    held = _loss_rows(([(0, init_loss)] if init_loss is not None else []) + [(p[0], p[4]) for p in points
                                                                           if p[4] is not None], text.heldout)
    x = vl.field("step", "quantitative", axis={"format": ","}, scale={"domain": [0, max(1, int(total_steps))]},
                 title=text.x_title)
    y = vl.field("loss", "quantitative", scale={"domainMin": 0}, title=text.y_title)
    curve = {"color": _series_colour(text), "strokeDash": _series_dash(text), "tooltip": _loss_tooltip(text),
             "x": x, "y": y}
    layers = [_layer("train", {"type": "line", "strokeWidth": 2}, curve),
              _layer("heldout", {"type": "line", "point": True}, curve)]
    return vl.spec({"layer": layers}, {"train": train, "heldout": held}, title=text.title, height=280)
