"""The embedding map drawn as two cached parts (every point; the prompt's ringed tokens) and
joined is the figure one build of everything gives, in both themes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ui.charts.common import joined_figure, ready_figure
from ui.charts.vectors import MapText, embedding_map_3d

TEXT = MapText(title="Map of the table", axis="PC{n} ({share})", token="token", token_id="id", category="category",
               other="other", prompt="your prompt")


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("show_other", [True, False])
def test_points_and_ring_joined_are_the_whole_map(presenter: bool, show_other: bool) -> None:
    rng = np.random.default_rng(0)
    coords = rng.normal(size=(40, 3))
    labels = [f"t<{i}>" for i in range(40)]
    categories = [None if i % 3 else ("city" if i % 2 else "fruit") for i in range(40)]
    names = {"city": "City", "fruit": "Fruit"}
    args = (coords, labels, categories, names, [0.5, 0.3, 0.1])
    common = dict(text=TEXT, shown_ids=list(range(0, 40, 2)))
    whole = ready_figure(embedding_map_3d(*args, **common, visible_categories=["city", "fruit"], show_other=show_other,
                                          highlight_ids=[3, 7], highlight_labels=["a*", "b"]), presenter=presenter)
    points = ready_figure(embedding_map_3d(*args, **common, visible_categories=["city", "fruit"], show_other=show_other),
                          presenter=presenter)
    ring = ready_figure(embedding_map_3d(*args, **common, visible_categories=(), show_other=False,
                                         highlight_ids=[3, 7], highlight_labels=["a*", "b"]), presenter=presenter)
    joined = joined_figure(points, ring).to_dict()
    assert json.dumps(joined, sort_keys=True, default=str) == json.dumps(whole.to_dict(), sort_keys=True, default=str)
    assert joined["data"][-1]["mode"] == "markers+text" and len(joined["data"]) == len(points.to_dict()["data"]) + 1
    # No prompt: nothing to ring, the points alone.
    empty = ready_figure(embedding_map_3d(*args, **common, visible_categories=(), show_other=False), presenter=presenter)
    assert joined_figure(points, empty).to_dict()["data"] == points.to_dict()["data"]
