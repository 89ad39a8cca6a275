"""Heat maps and the embedding map written without a ``go.Figure`` are the figures Plotly wrote
(byte for byte, as Streamlit sends them), and keep user text escaped."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest

from ui.charts.common import CJK_FONT, joined_figure, ready_figure
from ui.charts.vectors import (DIVERGING, MAX_ANNOTATED_CELLS, MapText, embedding_map_3d, matrix_heatmap,
                               matrix_heatmap_spec)
from ui.text import escape_plotly


def plotly_matrix_heatmap(matrix: np.ndarray, *, title: str, x_title: str, y_title: str, value_title: str,
                          x_labels: Sequence[str] | None = None, y_labels: Sequence[str] | None = None,
                          symmetric: bool = True, height: int = 420, bound: float | None = None) -> go.Figure:
    """The go.Figure builder ``matrix_heatmap_spec`` replaced (as it was), for the comparison."""
    values = np.asarray(matrix, dtype=float)
    rows, cols = values.shape
    x = [escape_plotly(v) for v in x_labels] if x_labels is not None else [str(j) for j in range(cols)]
    y = [escape_plotly(v) for v in y_labels] if y_labels is not None else [str(i) for i in range(rows)]
    if bound is None:
        bound = float(np.nanmax(np.abs(values))) if values.size and np.isfinite(values).any() else 1.0
    bound = bound if bound > 0 else 1.0
    heat = go.Heatmap(
        z=values.astype(np.float32), x=x, y=y,
        colorscale=DIVERGING if symmetric else "Blues",
        zmin=-bound if symmetric else None, zmax=bound if symmetric else None,
        colorbar={"title": {"text": value_title}},
        hovertemplate=f"{y_title}: %{{y}}<br>{x_title}: %{{x}}<br>{value_title}: %{{z:.4f}}<extra></extra>",
        xgap=1 if cols <= 64 else 0, ygap=1 if rows <= 64 else 0,
    )
    if rows * cols <= MAX_ANNOTATED_CELLS:
        heat.update(texttemplate="%{z:.2f}", textfont={"size": 10})
    fig = go.Figure(heat)
    fig.update_layout(
        title={"text": title}, height=height, margin={"l": 10, "r": 10, "t": 50, "b": 10},
        hoverlabel={"font": {"family": CJK_FONT}},
        xaxis={"title": {"text": x_title}, "type": "category"},
        yaxis={"title": {"text": y_title}, "type": "category", "autorange": "reversed"},
    )
    return fig


def _sent(fig: object, presenter: bool = False) -> str:
    """The figure's JSON as Streamlit sends it (themed)."""
    return plotly.io.to_json(ready_figure(fig, presenter=presenter), validate=False)


rng = np.random.default_rng(0)
CASES = {
    "small": (rng.normal(size=(4, 6)), {}),
    "labels": (rng.normal(size=(3, 5)), dict(y_labels=["<b>x</b>", "%{y}", "巴黎"], x_labels=list("abcde"))),
    "wide": (rng.normal(size=(8, 128)), dict(bound=2.5)),
    "tall": (rng.normal(size=(80, 20)), dict(height=700)),
    "sequential": (rng.random(size=(5, 5)), dict(symmetric=False)),
    "zeros": (np.zeros((2, 2)), {}),
    "nan": (np.array([[np.nan, 1.0], [0.5, np.nan]]), {}),
}


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("name", list(CASES))
def test_the_heat_map_dict_is_the_figure_plotly_wrote(name: str, presenter: bool) -> None:
    matrix, extra = CASES[name]
    kwargs = dict(title="A title long enough to wrap on a phone, with 128 numbers", x_title="dim", y_title="token",
                  value_title="value", **extra)
    reference = plotly_matrix_heatmap(matrix, **kwargs)
    spec = matrix_heatmap_spec(matrix, **kwargs)
    assert _sent(spec, presenter) == _sent(reference, presenter)
    # the go.Figure of the same dict (tests and tools read its properties): the same figure
    assert json.loads(_sent(matrix_heatmap(matrix, **kwargs), presenter)) == json.loads(_sent(reference, presenter))


def test_the_shared_template_is_not_changed_by_theming() -> None:
    spec = matrix_heatmap_spec(np.eye(2), title="t", x_title="x", y_title="y", value_title="v")
    before = json.dumps(spec["layout"]["template"], sort_keys=True)
    ready_figure(spec, presenter=True)
    again = matrix_heatmap_spec(np.eye(3), title="t", x_title="x", y_title="y", value_title="v")
    assert again["layout"]["template"] is spec["layout"]["template"]
    assert json.dumps(spec["layout"]["template"], sort_keys=True) == before


TEXT = MapText(title="Map", axis="PC{n} ({share})", token="token", token_id="id", category="category",
               other="other", prompt="your prompt")


def test_the_map_sends_plain_lists_that_plotly_writes_without_cleaning() -> None:
    """customdata as lists: orjson writes the figure as it is (an object array made Plotly clean
    every value of ~1,800 points on each rerun); the labels stay escaped."""
    import orjson

    coords = rng.normal(size=(12, 3))
    labels = [f"<i>{i}</i>" for i in range(12)]
    categories = ["fruit" if i % 2 else None for i in range(12)]
    args = (coords, labels, categories, {"fruit": "Fruit"}, [0.5, 0.3, 0.1])
    points = ready_figure(embedding_map_3d(*args, text=TEXT, visible_categories=["fruit"], show_other=True))
    ring = ready_figure(embedding_map_3d(*args, text=TEXT, visible_categories=(), show_other=False,
                                         highlight_ids=[1, 2], highlight_labels=["<b>", "ok"]))
    joined = joined_figure(points, ring).to_dict()
    orjson.dumps(joined, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY)  # no TypeError: no cleaning
    shown = [row[0] for trace in joined["data"] for row in trace["customdata"]] + joined["data"][-1]["text"]
    assert shown and not any("<" in label for label in shown) and "&lt;i&gt;1&lt;/i&gt;" in shown
    assert joined["data"][-1]["customdata"] == [["&lt;b&gt;", 1], ["ok", 2]]


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("part", ["points", "ring", "whole", "sample"])
def test_the_map_dict_is_the_figure_plotly_wrote(part: str, presenter: bool) -> None:
    from ui.charts.vectors import embedding_map_spec

    coords = rng.normal(size=(40, 3))
    labels = [f"<i>{i}</i>%{{y}}" for i in range(40)]
    categories = [None if i % 3 else ("city" if i % 2 else "fruit") for i in range(40)]
    args = (coords, labels, categories, {"city": "City", "fruit": "水果"}, [0.5, 0.3, 0.1])
    ring = dict(highlight_ids=[3, 7, 3], highlight_labels=["a*", "<b>", "a*"])
    kwargs = {"points": dict(visible_categories=["city", "fruit"], show_other=True),
              "ring": dict(visible_categories=(), show_other=False, **ring),
              "whole": dict(visible_categories=["fruit"], show_other=True, **ring),
              "sample": dict(visible_categories=["city"], show_other=False, shown_ids=list(range(0, 40, 3)))}[part]
    reference = json.loads(_sent(embedding_map_3d(*args, text=TEXT, **kwargs), presenter))
    assert json.loads(_sent(embedding_map_spec(*args, text=TEXT, **kwargs), presenter)) == reference
