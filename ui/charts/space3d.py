"""Data for the 3-D point space (``ui.components.space3d``): the embedding map and the lab's arrows.

Builders take plain arrays and already-translated text and return plain JSON-able dicts; the
component draws them on a canvas in the browser. Coordinates are rounded to 4 significant
digits (a point on a ~600 px map moves by well under a pixel) to keep each rerun's message
small. Labels are sent as raw text: the browser writes them with ``fillText``/``textContent``,
never as markup, so no escaping is needed (or wanted: "<b>" must read "<b>").

Example: arrows_space({"king": [1, 0, 0]}, title="t", axes=("x1", "x2", "x3"), labels=...)["arrows"][0]["tip"] -> [1.0, 0.0, 0.0]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ui.charts.vectors import ARROW_COLOURS, CATEGORY_COLOURS, OTHER_COLOUR, PROMPT_COLOUR, MapText

if TYPE_CHECKING:
    from ui.charts.access import ChartFacts

OTHER_RADIUS, CATEGORY_RADIUS, PROMPT_RADIUS = 1.8, 3.2, 6.0  # CSS pixels at the cube's centre
MAP_HEIGHT, ARROWS_HEIGHT = 620, 440


@dataclass(frozen=True)
class SpaceLabels:
    """The component's own words (tooltips and buttons), translated by the caller."""

    token: str
    id: str
    group: str
    vector: str
    reset: str
    zoom_in: str
    zoom_out: str
    hint: str
    legend: str

    def as_dict(self) -> dict[str, str]:
        return dict(self.__dict__)


def hex_colour(colour: str) -> str:
    """"#rrggbb" for "#rrggbb" or "rgb(r, g, b)": the one form the component accepts.

    Example: hex_colour("rgb(127, 60, 141)") -> "#7f3c8d"
    """
    if re.fullmatch(r"#[0-9a-fA-F]{6}", colour):
        return colour.lower()
    match = re.fullmatch(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", colour)
    if not match:
        raise ValueError(f"not a colour: {colour!r}")
    return "#" + "".join(f"{min(255, int(v)):02x}" for v in match.groups())


def _rounded(values: np.ndarray) -> list[float]:
    """Finite values to 4 significant digits, as plain floats (JSON)."""
    values = np.asarray(values, dtype=float)
    return [float(f"{v:.4g}") for v in values.tolist()]


def _group(name: str, colour: str, radius: float, opacity: float, *, ring: bool = False) -> dict[str, Any]:
    return {"name": name, "colour": hex_colour(colour), "size": radius, "opacity": opacity, "ring": ring,
            "legend": True}


def _points(coords: np.ndarray, ids: Sequence[int], group: int | Sequence[int], labels: Sequence[str]) -> dict[str, list]:
    ids = list(ids)
    picked = coords[np.asarray(ids, dtype=int)] if ids else np.zeros((0, 3))
    groups = [group] * len(ids) if isinstance(group, int) else list(group)
    return {"x": _rounded(picked[:, 0]), "y": _rounded(picked[:, 1]), "z": _rounded(picked[:, 2]),
            "group": groups, "label": [str(v) for v in labels], "id": [int(i) for i in ids]}


def embedding_space(
    coords: np.ndarray,
    labels: Sequence[str],
    categories: Sequence[str | None],
    category_names: Mapping[str, str],
    explained: Sequence[float],
    *,
    text: MapText,
    show_other: bool,
    shown_ids: Sequence[int] | None = None,
    space_labels: SpaceLabels,
) -> dict[str, Any]:
    """Every shown token as a point (PCA coordinates), one legend group per category, "other" grey.

    ``labels`` are display strings per token id; ``categories`` each id's category key (None:
    other); ``category_names`` the translated names in legend order. The prompt's ringed tokens
    are a separate small part (``prompt_ring``), joined per rerun (``joined_space``).

    Example: embedding_space(np.zeros((2, 3)), ["a", "b"], [None, "x"], {"x": "X"}, [.5, .3, .1], text=..., show_other=True, space_labels=...)
    """
    coords = np.asarray(coords, dtype=float)
    ids = np.arange(coords.shape[0])
    keep = np.ones(ids.size, dtype=bool) if shown_ids is None else np.isin(ids, np.asarray(shown_ids, dtype=int))
    cats = np.array([c if c is not None else "" for c in categories], dtype=object)
    groups: list[dict[str, Any]] = []
    chosen_ids: list[int] = []
    chosen_groups: list[int] = []
    if show_other:
        other = ids[keep & (cats == "")].tolist()
        if other:
            groups.append(_group(text.other, OTHER_COLOUR, OTHER_RADIUS, 0.4))
            chosen_ids += other
            chosen_groups += [len(groups) - 1] * len(other)
    for index, (key, name) in enumerate(category_names.items()):
        members = ids[keep & (cats == key)].tolist()
        if not members:
            continue
        groups.append(_group(name, CATEGORY_COLOURS[index % len(CATEGORY_COLOURS)], CATEGORY_RADIUS, 0.95))
        chosen_ids += members
        chosen_groups += [len(groups) - 1] * len(members)

    def axis(n: int) -> str:
        return text.axis.format(n=n, share=f"{100 * float(explained[n - 1]):.1f}%")

    return {
        "title": text.title,
        "axes": [axis(1), axis(2), axis(3)],
        "height": MAP_HEIGHT,
        "groups": groups,
        "points": _points(coords, chosen_ids, chosen_groups, [labels[i] for i in chosen_ids]),
        "arrows": [],
        "range": None,  # each axis its own data range: PC2 and PC3 hold less variance but are worth seeing
        "labels": space_labels.as_dict(),
    }


def prompt_ring(coords: np.ndarray, ids: Sequence[int], labels: Sequence[str], *, name: str) -> dict[str, Any]:
    """The prompt's tokens as ringed, labelled points (each token id once, in prompt order).

    Example: prompt_ring(np.zeros((5, 3)), [3, 1, 3], ["c", "a", "c"], name="prompt")["points"]["id"] -> [3, 1]
    """
    first: dict[int, str] = {}
    for i, label in zip(ids, labels):
        first.setdefault(int(i), str(label))
    group = _group(name, PROMPT_COLOUR, PROMPT_RADIUS, 1.0, ring=True)
    return {"groups": [group], "points": _points(np.asarray(coords, dtype=float), list(first), 0, list(first.values()))}


def joined_space(space: Mapping[str, Any], *parts: Mapping[str, Any]) -> dict[str, Any]:
    """``space`` with each part's groups and points appended (group numbers shifted): the big map
    is built once per model and choices, the small per-prompt ring per prompt, joined per rerun.

    Example: joined_space(map_data, prompt_ring(coords, ids, labels, name="prompt"))
    """
    groups = list(space["groups"])
    points = {k: list(v) for k, v in space["points"].items()}
    for part in parts:
        shift = len(groups)
        groups += part["groups"]
        for column, values in part["points"].items():
            points[column] += [g + shift for g in values] if column == "group" else list(values)
    return {**space, "groups": groups, "points": points}


def arrows_space(
    vectors: Mapping[str, Sequence[float]],
    *,
    title: str,
    axes: tuple[str, str, str],
    space_labels: SpaceLabels,
) -> dict[str, Any]:
    """Arrows from the origin to each vector's tip (its first three numbers), labelled by name.

    All three axes share one range, so lengths and angles are drawn true: [-5 %, +110 %] of the
    longest coordinate when every number is ≥ 0, else ±110 %.
    """
    tips = np.array([list(v)[:3] for v in vectors.values()], dtype=float) if vectors else np.zeros((1, 3))
    reach = float(np.max(np.abs(tips))) if tips.size else 1.0
    reach = reach if reach > 0 else 1.0
    low = -0.05 * reach if float(tips.min()) >= 0 else -1.1 * reach
    return {
        "title": title,
        "axes": list(axes),
        "height": ARROWS_HEIGHT,
        "groups": [],
        "points": {"x": [], "y": [], "z": [], "group": [], "label": [], "id": []},
        "arrows": [{"name": str(name), "colour": ARROW_COLOURS[i % len(ARROW_COLOURS)],
                    "tip": [float(c) for c in list(values)[:3]]}
                   for i, (name, values) in enumerate(vectors.items())],
        "range": [low, 1.1 * reach],
        "labels": space_labels.as_dict(),
    }


def space_facts(data: Mapping[str, Any]) -> "ChartFacts":
    """The 3-D space as a screen reader gets it (``ui.charts.access``): one table row per point
    (token, group, three coordinates) or per arrow (name, tip).

    Example: space_facts(arrows_space({"king": [1, 0, 0]}, ...)).rows -> (("king", "1", "0", "0"),)
    """
    from ui.charts.access import TABLE_ROW_LIMIT, ChartFacts, cell_text

    labels, axes = data.get("labels") or {}, list(data.get("axes") or ("x", "y", "z"))
    if data.get("arrows"):
        headers = (labels.get("vector", ""), *axes)
        rows = [(a["name"], *(cell_text(float(c)) for c in a["tip"])) for a in data["arrows"]]
    else:
        points, groups = data["points"], data["groups"]
        headers = (labels.get("token", ""), labels.get("group", ""), *axes)
        rows = [(label, groups[g]["name"], cell_text(x), cell_text(y), cell_text(z)) for label, g, x, y, z
                in zip(points["label"], points["group"], points["x"], points["y"], points["z"])]
        # The ringed prompt tokens first: what this prompt adds to the map.
        rows.sort(key=lambda row: not any(g.get("ring") and g["name"] == row[1] for g in groups))
    return ChartFacts(name=str(data.get("title", "")), headers=tuple(headers),
                      rows=tuple(tuple(row) for row in rows[:TABLE_ROW_LIMIT]), total_rows=len(rows))


def space_summary(data: Mapping[str, Any], lang: str) -> str:
    """One sentence for a screen reader: the groups and their sizes, then the prompt's ringed
    tokens; or the arrows and their tips.

    Example: space_summary(map_data, "en") -> "Token map: 412 points in 3 groups (other 380, fruit 20, prompt 12).
             prompt: I, like, apples."
    """
    from ui.i18n import translate

    name = str(data.get("title", ""))
    sep = translate("charts.a11y.label_sep", lang)
    if data.get("arrows"):
        tips = sep.join(f"{a['name']} ({', '.join(format(float(c), '.3g') for c in a['tip'])})" for a in data["arrows"])
        return translate("charts.a11y.space_arrows", lang, name=name, arrows=len(data["arrows"]), arrow_list=tips)
    points, groups = data["points"], data["groups"]
    counts = [0] * len(groups)
    for g in points["group"]:
        counts[g] += 1
    listed = sep.join(translate("charts.a11y.count", lang, name=g["name"], count=c) for g, c in zip(groups, counts))
    text = translate("charts.a11y.space_groups", lang, name=name, points=len(points["group"]), groups=len(groups),
                     group_list=listed)
    for index, group in enumerate(groups):
        if group.get("ring"):
            tokens = [label for label, g in zip(points["label"], points["group"]) if g == index]
            text += " " + translate("charts.a11y.space_ring", lang, group=group["name"], tokens=sep.join(tokens))
    return text
