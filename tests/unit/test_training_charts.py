"""The Training page's cross-entropy curve: point labels stay inside the plot."""

from __future__ import annotations

import pytest

from ui.charts.training import RIGHT_LABEL_LIMIT, cross_entropy_curve
from ui.sections.training import EXAMPLES


def _label_layers(p_now: float) -> list[dict]:
    spec = cross_entropy_curve(p_now, EXAMPLES, title="t", x_title="p", y_title="loss", point_title="p").to_dict()
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
