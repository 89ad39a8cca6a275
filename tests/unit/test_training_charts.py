"""The Training page's charts: valid Vega-Lite that draws the data; the cross-entropy curve's
point labels stay inside the plot."""

from __future__ import annotations

import json
import math

import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from ui.charts import vl
from ui.charts.training import (HELD_COLOUR, MARK_COLOUR, RIGHT_LABEL_LIMIT, TRAIN_COLOUR, BarsText, LossText,
                                cross_entropy_curve, live_loss, loss_curves, next_token_bars)
from ui.sections.training import EXAMPLES

LOSS_TEXT = LossText("Loss", "step", "loss", "series", "train", "held-out", "uniform", "now")
BARS_TEXT = BarsText("Next", "p", "token", "kind", "target", "other")


def validated(spec: dict) -> dict:
    """The spec checked against the Vega-Lite schema it names (the one Altair ships), and as JSON."""
    assert spec["$schema"] == vl.SCHEMA_URL
    validate_jsonschema(spec, load_schema())
    json.dumps(spec, allow_nan=False)
    return spec


def rows_of(spec: dict, layer: dict) -> list[dict]:
    return spec["datasets"][layer.get("data", spec.get("data"))["name"]]


def _label_layers(p_now: float) -> list[dict]:
    spec = validated(cross_entropy_curve(p_now, EXAMPLES, title="t", x_title="p", y_title="loss", point_title="p"))
    layers = [layer for layer in spec["layer"] if (layer["mark"].get("type") == "text")]
    datasets = spec["datasets"]
    return [{"align": layer["mark"]["align"], "dx": layer["mark"]["dx"], "dy": layer["mark"]["dy"],
             "rows": datasets[layer["data"]["name"]]} for layer in layers]


@pytest.mark.parametrize("p_now", [0.001, 0.3, 0.6, 0.61, 0.9, 1.0])
def test_labels_near_the_right_edge_sit_left_of_their_point(p_now: float) -> None:
    layers = _label_layers(p_now)
    labelled = sorted(row["label"] for layer in layers for row in layer["rows"])
    assert labelled == sorted([label for _, label in EXAMPLES] + [f"p = {p_now:.3f}"])  # every point once
    for layer in layers:
        for row in layer["rows"]:
            if row["p"] > RIGHT_LABEL_LIMIT:  # text ending at the point, not starting there
                assert (layer["align"], layer["dx"]) == ("right", -8), row
            else:
                assert (layer["align"], layer["dx"]) == ("left", 8), row


def test_the_textbook_example_at_0_9_is_labelled_to_its_left() -> None:
    layers = _label_layers(0.5)
    (right,) = [layer for layer in layers if layer["align"] == "right"]
    assert [row["label"] for row in right["rows"]] == ["p = 0.9 → 0.105"]


def test_the_chosen_p_on_an_example_does_not_cover_its_label() -> None:
    """The slider starts at p = 0.9, the textbook example's point: its label goes a line higher."""
    layers = _label_layers(0.9)
    offsets = {row["label"]: layer["dy"] for layer in layers for row in layer["rows"]}
    assert offsets["p = 0.900"] <= offsets["p = 0.9 → 0.105"] - 14


def test_the_cross_entropy_curve_is_minus_log_p() -> None:
    spec = validated(cross_entropy_curve(0.5, EXAMPLES, title="t", x_title="p", y_title="loss", point_title="pt"))
    line, dots = spec["layer"][:2]
    curve = rows_of(spec, line)
    assert curve[0]["p"] == pytest.approx(0.002) and curve[-1]["p"] == 1.0
    assert all(row["loss"] == pytest.approx(-math.log(row["p"])) and row["shown"] == f"{row['loss']:.3f}" for row in curve)
    points = rows_of(spec, dots)
    assert [row["kind"] for row in points] == ["example"] * len(EXAMPLES) + ["now"]
    assert points[-1]["p"] == 0.5 and points[-1]["label"] == "p = 0.500"
    assert dots["encoding"]["color"]["scale"] == {"domain": ["example", "now"], "range": [HELD_COLOUR, MARK_COLOUR]}
    assert line["encoding"]["x"]["scale"] == {"domain": [0, 1]} and spec["height"] == 260


def test_loss_curves_name_the_powers_of_ten_and_mark_the_snapshots() -> None:
    nan = float("nan")
    spec = validated(loss_curves([1, 2, 5, 40, 200], [7.0, 6.0, 5.1, 3.2, nan], [(0, 7.6), (40, 3.5), (100, nan)],
                                 [0, 40, 200], 40, 7.61, text=LOSS_TEXT))
    lines, points, uniform, now = spec["layer"]
    curve = rows_of(spec, lines)
    assert [(row["step"], row["loss"], row["series"]) for row in curve] == [
        (1, 7.0, "train"), (2, 6.0, "train"), (5, 5.1, "train"), (40, 3.2, "train"), (200, None, "train"),
        (0, 7.6, "held-out"), (40, 3.5, "held-out")]  # a missing training loss is null; a missing held-out one left out
    assert [(row["step"], row["shown"]) for row in rows_of(spec, points)] == [(0, "7.600"), (40, "3.500")]
    x = lines["encoding"]["x"]
    assert x["scale"] == {"domainMin": 0, "type": "symlog"} and x["axis"]["values"] == [0, 10, 100, 200]
    assert lines["encoding"]["color"]["scale"] == {"domain": ["train", "held-out"], "range": [TRAIN_COLOUR, HELD_COLOUR]}
    assert rows_of(spec, uniform) == [{"loss": 7.61, "label": "uniform", "shown": "7.610"}]
    assert rows_of(spec, now) == [{"step": 40, "label": "now"}] and now["encoding"]["x"]["scale"]["type"] == "symlog"
    assert spec["autosize"] == {"contains": "padding", "type": "fit-x"} and spec["height"] == 300
    validated(loss_curves([], [], [], [0], 0, 7.61, text=LOSS_TEXT))  # before any step: still a chart


def test_next_token_bars_keep_their_order_and_colour_the_target() -> None:
    labels = ["␣Paris", "␣Rome", "<b>x</b>"]
    spec = validated(next_token_bars(labels, [0.7, 0.1, 1e-6], [True, False, False], text=BARS_TEXT))
    bars, symbols, values = spec["layer"]  # the target also differs by its bar's end symbol
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["target", "other"]
    assert rows_of(spec, bars) == [
        {"token": "␣Paris", "prob": 0.7, "kind": "target", "shown": "0.7000"},
        {"token": "␣Rome", "prob": 0.1, "kind": "other", "shown": "0.1000"},
        {"token": "<b>x</b>", "prob": 1e-6, "kind": "other", "shown": "0.0000"}]
    assert bars["encoding"]["y"]["sort"] == labels and bars["encoding"]["x"]["scale"] == {"domain": [0, 1]}
    assert bars["encoding"]["color"]["scale"]["domain"] == ["target", "other"]
    assert values["mark"]["type"] == "text" and values["encoding"]["text"]["field"] == "shown"
    assert spec["height"] == 160
    assert validated(next_token_bars(["a"] * 9, [0.1] * 9, [False] * 9, text=BARS_TEXT))["height"] == 24 * 9


def test_live_loss_draws_training_and_held_out_loss() -> None:
    points = [(1, 7.5, 1024, 0.1, None), (2, 7.0, 2048, 0.2, 7.1), (3, 6.5, 3072, 0.3, None)]
    spec = validated(live_loss(points, 7.6, 60, text=LOSS_TEXT))
    train, held = spec["layer"]
    assert [(row["step"], row["loss"]) for row in rows_of(spec, train)] == [(1, 7.5), (2, 7.0), (3, 6.5)]
    assert [(row["step"], row["loss"]) for row in rows_of(spec, held)] == [(0, 7.6), (2, 7.1)]  # the start, then measured
    # held-out dashed, training solid: one dash scale (and legend) for both lines
    assert held["encoding"]["strokeDash"] == train["encoding"]["strokeDash"] and held["mark"]["point"] is True
    dash = held["encoding"]["strokeDash"]["scale"]
    assert dash["domain"] == [LOSS_TEXT.train, LOSS_TEXT.heldout] and dash["range"][0] == [1, 0] != dash["range"][1]
    assert train["encoding"]["x"]["scale"] == {"domain": [0, 60]} and spec["height"] == 280
    assert validated(live_loss(points[:1], None, 0, text=LOSS_TEXT))["layer"][0]["encoding"]["x"]["scale"] == {
        "domain": [0, 1]}
