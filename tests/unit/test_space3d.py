"""The 3-D space's data (ui.charts.space3d): what the browser draws for the embedding map and
the similarity lab's arrows."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ui.charts.space3d import (SpaceLabels, arrows_space, embedding_space, hex_colour, joined_space,
                               prompt_ring)
from ui.charts.vectors import CATEGORY_COLOURS, OTHER_COLOUR, PROMPT_COLOUR, MapText

TEXT = MapText(title="Map", axis="PC{n} ({share} of variance)", token="token", token_id="id", category="category",
               other="other", prompt="your prompt")
LABELS = SpaceLabels(token="token", id="id", group="group", vector="vector", reset="reset", zoom_in="in",
                     zoom_out="out", hint="hint", legend="legend")


def test_colours_are_hex_as_the_browser_accepts() -> None:
    assert hex_colour("rgb(127, 60, 141)") == "#7f3c8d"
    assert hex_colour("#ABCDEF") == "#abcdef"
    for bad in ("red", "rgb(1,2)", "#12345", "url(x)"):
        with pytest.raises(ValueError):
            hex_colour(bad)


def test_every_category_has_its_own_colour_apart_from_other_and_the_prompt() -> None:
    """One colour per category of the corpus (no two categories share one on the map), none of
    them the grey of "other" or the prompt's orange."""
    from core.text.corpus import category_words

    assert len(CATEGORY_COLOURS) >= len(category_words())
    assert len(set(CATEGORY_COLOURS)) == len(CATEGORY_COLOURS)
    assert all(hex_colour(c) == c for c in CATEGORY_COLOURS)
    assert hex_colour(OTHER_COLOUR) not in CATEGORY_COLOURS and hex_colour(PROMPT_COLOUR) not in CATEGORY_COLOURS


def _world(n: int = 12) -> tuple[np.ndarray, list[str], list[str | None]]:
    rng = np.random.default_rng(3)
    coords = rng.normal(size=(n, 3)) * [3.0, 1.0, 0.2]
    labels = [f"w{i}" for i in range(n)]
    categories = ["fruit" if i % 3 == 0 else "city" if i % 3 == 1 else None for i in range(n)]
    return coords, labels, categories


def test_the_map_has_one_group_per_category_and_every_point_once() -> None:
    coords, labels, categories = _world()
    space = embedding_space(coords, labels, categories, {"fruit": "Fruit", "city": "City"}, [0.5, 0.25, 0.125],
                            text=TEXT, show_other=True, space_labels=LABELS)
    assert [g["name"] for g in space["groups"]] == ["other", "Fruit", "City"]
    assert [g["colour"] for g in space["groups"]] == [OTHER_COLOUR, CATEGORY_COLOURS[0], CATEGORY_COLOURS[1]]
    assert space["axes"] == ["PC1 (50.0% of variance)", "PC2 (25.0% of variance)", "PC3 (12.5% of variance)"]
    points = space["points"]
    assert sorted(points["id"]) == list(range(12))
    for i, token_id in enumerate(points["id"]):
        group = space["groups"][points["group"][i]]["name"]
        assert group == {"fruit": "Fruit", "city": "City", None: "other"}[categories[token_id]]
        assert points["label"][i] == labels[token_id]
        sent = np.array([points["x"][i], points["y"][i], points["z"][i]])
        np.testing.assert_allclose(sent, coords[token_id], rtol=5e-4)  # 4 significant digits
    assert space["range"] is None and space["labels"]["token"] == "token"
    json.dumps(space)  # plain JSON, nothing numpy


def test_the_map_can_leave_out_other_and_unshown_tokens() -> None:
    coords, labels, categories = _world()
    space = embedding_space(coords, labels, categories, {"fruit": "Fruit", "city": "City"}, [0.5, 0.25, 0.125],
                            text=TEXT, show_other=False, shown_ids=[0, 1, 2, 3], space_labels=LABELS)
    assert [g["name"] for g in space["groups"]] == ["Fruit", "City"]
    assert sorted(space["points"]["id"]) == [0, 1, 3]  # 2 is "other"; 4.. are not shown
    empty = embedding_space(coords, labels, categories, {"fruit": "Fruit"}, [0.5, 0.25, 0.125], text=TEXT,
                            show_other=False, shown_ids=[1], space_labels=LABELS)
    assert empty["groups"] == [] and empty["points"]["id"] == []


def test_the_prompt_ring_joins_the_map_without_changing_it() -> None:
    coords, labels, categories = _world()
    space = embedding_space(coords, labels, categories, {"fruit": "Fruit"}, [0.5, 0.25, 0.125], text=TEXT,
                            show_other=True, space_labels=LABELS)
    before = json.dumps(space)
    ring = prompt_ring(coords, [5, 2, 5, 7], ["<b>", "b", "<b>", "%{x}"], name="your prompt")
    assert ring["points"]["id"] == [5, 2, 7] and ring["points"]["label"] == ["<b>", "b", "%{x}"]
    assert ring["groups"][0]["ring"] and ring["groups"][0]["colour"] == PROMPT_COLOUR
    joined = joined_space(space, ring)
    assert json.dumps(space) == before  # the shared, cached map is never changed
    n = len(space["points"]["id"])
    assert joined["points"]["id"][n:] == [5, 2, 7]
    assert set(joined["points"]["group"][n:]) == {len(space["groups"])}  # the ring's group, shifted
    assert joined["groups"][-1]["name"] == "your prompt"
    for column in ("x", "y", "z", "label", "id", "group"):
        assert len(joined["points"][column]) == n + 3


@pytest.mark.parametrize(("vectors", "low"), [
    ({"apple": [0.9, 0.1, 0.0], "plane": [0.1, 0.2, 0.95]}, -0.05 * 0.95),
    ({"a": [-2.0, 1.0, 0.5], "b": [0.0, 1.0, 0.0]}, -2.2),
])
def test_arrows_share_one_range_so_angles_are_true(vectors: dict, low: float) -> None:
    space = arrows_space(vectors, title="t", axes=("x1", "x2", "x3"), space_labels=LABELS)
    reach = max(abs(v) for row in vectors.values() for v in row)
    assert space["range"] == pytest.approx([low, 1.1 * reach])
    assert [a["tip"] for a in space["arrows"]] == [list(map(float, v)) for v in vectors.values()]
    assert [a["name"] for a in space["arrows"]] == list(vectors)
    assert len({a["colour"] for a in space["arrows"]}) == len(vectors)
    assert space["points"]["id"] == []


def test_the_built_in_map_is_small_to_send() -> None:
    """About 1,100 points: each rerun of the map sends its data; keep it well under Plotly's."""
    import core
    from ui.precompute import embeddings_table

    view = embeddings_table(core.load_builtin("classic"))
    names = {c: c for c in dict.fromkeys(c for c in view.categories if c)}
    space = embedding_space(view.projection.coords, view.labels, view.categories, names,
                            view.projection.explained_variance_ratio, text=TEXT, show_other=True,
                            shown_ids=sorted(view.trained), space_labels=LABELS)
    assert len(space["points"]["id"]) == len(view.trained)
    assert len(json.dumps(space)) < 90_000
