"""The attention pages' charts written as Vega-Lite dicts (the head view's and the weights heat
map's cached layouts, the head picker) are the specs Altair wrote for them, and valid Vega-Lite."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.attention as charts
from ui.charts.attention import HEAD_PICK, attention_heatmap, head_picker, head_view_chart, spec_of


def _without_data(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k != "datasets"}


def _valid(spec: dict) -> None:
    validate_jsonschema(json.loads(json.dumps(_without_data(spec), default=str)), load_schema())


@pytest.mark.parametrize(("n", "n_head"), [(1, 1), (7, 4), (12, 6), (40, 2)])
def test_the_head_view_layout_is_the_altair_spec(n: int, n_head: int) -> None:
    names = tuple(f"头 {h}" for h in range(n_head))  # translated head names
    titles = dict(weight_title="weight", query_side="query 'q'", key_side="key", head_title="head")
    built = spec_of(head_view_chart(np.zeros((n_head, n)), ["·"] * n, 0, names, title="", **titles))
    layout = charts._head_view_layout.__wrapped__(n, names, *titles.values())
    assert layout == _without_data(built)
    _valid(layout)


@pytest.mark.parametrize(("n", "cell"), [(1, None), (24, None), (25, None), (33, None), (100, None), (5, 20)])
def test_the_weights_heat_map_layout_is_the_altair_spec(n: int, cell: int | None) -> None:
    labels = tuple(f"{i}·<t{i}>" for i in range(n))
    built = spec_of(attention_heatmap(np.zeros((n, n)), list(labels), title="", x_title="key", y_title="query",
                                      value_title="weight", masked_text="masked", cell=cell))
    layout = charts._attention_layout.__wrapped__(labels, "key", "query", "weight", "masked", ".4f", cell)
    assert layout == _without_data(built)
    _valid(layout)


MATRIX_CASES = [
    (np.array([[1.0, -np.inf], [0.5, 2.0]]), dict(cell=36, cell_width=90)),  # masked score, a diverging scale
    (np.array([[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]), dict(diverging=False, domain=(0.0, 1.0), value_format=".3f", cell=48)),
    (np.array([[3.0, 1.0]]), dict(diverging=False)),  # a sequential scale from the values
    (np.zeros((2, 2)), {}),  # all zero: the scale still has a range
    (np.array([[np.nan, np.inf], [-1e-7, 12345.678]]), dict(value_format="+.2f")),
]


@pytest.mark.parametrize(("matrix", "options"), MATRIX_CASES)
def test_the_numbered_matrix_is_the_altair_spec(matrix: np.ndarray, options: dict) -> None:
    rows = [f"r<{i}>" for i in range(matrix.shape[0])]
    cols = [f"我 {j}" for j in range(matrix.shape[1])]
    titles = dict(title="Q · 头 1", x_title="dimension", y_title="token", value_title="value")
    built = spec_of(charts.value_matrix(matrix, rows, cols, **titles, **options))
    written = charts.value_matrix_spec(matrix, rows, cols, **titles, **options)
    assert _without_data(written) == _without_data(built)
    assert list(written["datasets"]) == list(built["datasets"])
    for name, frame in built["datasets"].items():
        pd.testing.assert_frame_equal(written["datasets"][name], frame)
    _valid(written)
    with pytest.raises(ValueError):
        charts.value_matrix_spec(matrix, rows[:-1], cols, **titles)


def altair_head_picker(layers: Sequence[int], heads: Sequence[int], labels: Sequence[str], scores: Sequence[float], *,
                       title: str, x_title: str, y_title: str, label_title: str, score_title: str,
                       selected: tuple[int, int] | None = None) -> alt.Chart:
    """The Altair builder ``head_picker`` replaced (as it was), for the comparison."""
    frame = pd.DataFrame({
        "layer": list(map(int, layers)), "head": list(map(int, heads)), "label": list(labels),
        "score": [float(s) for s in scores],
    })
    frame["shown"] = [f"{s:.2f}" if np.isfinite(s) else "—" for s in frame["score"]]
    frame["current"] = [selected == (lay, h) for lay, h in zip(frame["layer"], frame["head"])]
    pick = alt.selection_point(name=HEAD_PICK, fields=["layer", "head"], on="click", clear=False)
    x = alt.X("head:O", title=x_title, axis=alt.Axis(labelAngle=0, orient="top"))
    y = alt.Y("layer:O", title=y_title)
    tooltip = [alt.Tooltip("layer:O", title=y_title), alt.Tooltip("head:O", title=x_title),
               alt.Tooltip("label:N", title=label_title), alt.Tooltip("shown:N", title=score_title)]
    base = alt.Chart(frame)
    cells = base.mark_rect(cornerRadius=4, stroke="#e4572e", cursor="pointer").encode(
        x=x, y=y,
        color=alt.Color("label:N", title=label_title, scale=alt.Scale(scheme="pastel1"),
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=320,
                                          symbolStrokeWidth=0, symbolType="square", symbolOpacity=1)),
        strokeWidth=alt.condition("datum.current", alt.value(3), alt.value(0)),
        tooltip=tooltip,
    ).add_params(pick)
    text = base.mark_text(fontSize=12, color="#1b1b1b").encode(x=x, y=y, text="shown:N", tooltip=tooltip)
    return alt.layer(cells, text).properties(title=title, height=alt.Step(34), width="container")


@pytest.mark.parametrize("selected", [None, (1, 0)])
def test_the_head_picker_is_the_altair_spec(selected: tuple[int, int] | None) -> None:
    args = ([0, 0, 1, 1], [0, 1, 0, 1], ["broad", "self", "previous <b>", "broad"], [0.5, float("nan"), 0.25, 1.0])
    kwargs = dict(title="Pick a head", x_title="head", y_title="layer", label_title="label", score_title="score",
                  selected=selected)
    built = spec_of(altair_head_picker(*args, **kwargs))
    ours = head_picker(*args, **kwargs)
    view = built["params"][0]["views"][0]  # Altair names the view by a hash of the chart; ours is fixed
    assert json.loads(json.dumps(_without_data(built)).replace(view, charts.PICK_VIEW)) == _without_data(ours)
    assert list(ours["datasets"]) == list(built["datasets"])
    for name in built["datasets"]:
        pd.testing.assert_frame_equal(ours["datasets"][name], built["datasets"][name])
    _valid(ours)
    assert charts.picked_head({"selection": {HEAD_PICK: [{"layer": 1, "head": 0}]}}) == (1, 0)


def test_the_head_view_table_keeps_user_text_as_data() -> None:
    tokens = ["<b>", "%{y}", "'"]
    spec = charts.head_view_chart_spec(np.full((2, 3), 1 / 3), tokens, 2, ["H0", "H1"], title="t", weight_title="w",
                                       query_side="q", key_side="k", head_title="h")
    assert not re.search(r"<b>|%\{y\}", json.dumps(_without_data(spec)))
    (frame,) = spec["datasets"].values()
    assert set(frame.loc[frame["kind"] == "token", "token"]) == set(tokens)


def _grid(values: np.ndarray, **kwargs: object) -> dict:
    n_layer, n_head, n, _ = values.shape
    return charts.head_grid_spec(
        values, [f"{i}·t{i}" for i in range(n)], [f"L{layer} H{h}" for layer in range(n_layer) for h in range(n_head)],
        title="All heads", x_title="key", y_title="query", value_title="weight",
        layer_names=[f"layer {layer}" for layer in range(n_layer)], head_names=[f"H{h}" for h in range(n_head)],
        head_title="head", **kwargs)


@pytest.mark.parametrize("scores", [False, True])
def test_the_grid_has_one_cell_per_visible_query_key_pair_of_every_head(scores: bool) -> None:
    """Each head's panel: query q, key k ≤ q at its own place in the grid's units, with the
    value of patterns[layer, head, q, k]; nothing above the diagonal (the causal mask)."""
    rng = np.random.default_rng(1)
    values = np.tril(rng.random((2, 3, 5, 5)))
    if scores:
        values = np.where(np.tril(np.ones((5, 5))) > 0, rng.normal(size=values.shape), -np.inf)
    spec = _grid(values, scores=scores)
    _valid(spec)
    cells = spec["datasets"]["cells"]
    assert len(cells) == 2 * 3 * 15
    grid = charts.GridLayout.of(5, 2, 3)
    for row in cells.itertuples():
        layer, head = int(row.head[1]), int(row.head[4])
        q, k = int(row.query.split("·")[0]), int(row.key.split("·")[0])
        assert k <= q
        assert (row.x, row.y) == (grid.x0(head) + k, grid.y0(layer) + q)
        assert (row.x2 - row.x, row.y2 - row.y) == (1, 1)
        assert row.value == pytest.approx(values[layer, head, q, k], abs=1e-6)
    colour = spec["layer"][0]["encoding"]["color"]
    if scores:  # red-blue over ± the largest visible |score|, the −∞ of the mask left out
        bound = float(np.abs(values[np.isfinite(values)]).max())
        assert colour["scale"]["domain"] == pytest.approx([-bound, bound]) and colour["scale"]["scheme"] == "redblue"
    else:
        assert colour["scale"]["domain"] == [0.0, 1.0]
    x_axis = spec["layer"][0]["encoding"]["x"]["axis"]
    # the head names at the panels' centres: floor(centre / step) picks each panel's own name
    step = 5 + grid.gap
    assert [int(c // step) for c in x_axis["values"]] == [0, 1, 2] and x_axis["orient"] == "top"


def test_a_long_prompt_grid_is_one_image_pixel_for_cell() -> None:
    """Past GRID_RECT_MAX_CELLS the grid is one PNG (one pixel per unit): each visible cell has
    the colour Vega gives its value, the causal triangle and the gaps are transparent."""
    import base64
    import io

    from PIL import Image

    from ui.charts.heat_image import scheme_colours

    n = 40
    rng = np.random.default_rng(2)
    values = np.tril(rng.random((2, 4, n, n)))
    assert 2 * 4 * n * (n + 1) // 2 > charts.GRID_RECT_MAX_CELLS
    spec = _grid(values)
    _valid(spec)
    assert "datasets" not in spec
    url = spec["layer"][0]["data"]["values"][0]["url"]
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    grid = charts.GridLayout.of(n, 2, 4)
    assert image.shape == (grid.height, grid.width, 4)
    layer, head, q, k = 1, 2, 17, 9
    pixel = image[grid.y0(layer) + q, grid.x0(head) + k]
    expected = scheme_colours(np.array(0.12 + values[layer, head, q, k] * 0.88), "blues")
    assert tuple(pixel) == (*expected, 255)
    assert image[grid.y0(layer) + 3, grid.x0(head) + 4, 3] == 0  # above the diagonal
    assert image[grid.y0(layer) + 3, grid.x0(head) + n, 3] == 0  # the gap between heads
    legend = spec["layer"][1]["encoding"]["color"]
    assert legend["scale"]["domain"] == [0.0, 1.0] and legend["title"] == "weight"


def test_the_grid_refuses_names_that_do_not_fit() -> None:
    with pytest.raises(ValueError):
        charts.head_grid_spec(np.zeros((1, 2, 3, 3)), list("abc"), ["a", "b"], title="t", x_title="k", y_title="q",
                              value_title="w", layer_names=["L0"], head_names=["H0"], head_title="h")


def test_a_huge_grid_is_pooled_into_an_image_no_screen_outgrows() -> None:
    """A foreign model's 144 heads over a long prompt: each pixel is the strongest value of a
    k × k block (weights: the largest; scores: the farthest from 0; an all-masked block stays
    transparent), so the image stays within GRID_IMAGE_MAX_PIXELS."""
    import base64
    import io

    from PIL import Image

    assert charts.grid_pool_factor(4, 4, 64) == 1 and charts.grid_pool_factor(12, 12, 500) > 1
    weights = np.array([[[[1, np.nan, np.nan], [0.2, 0.5, np.nan], [0.3, 0.9, 0.1]]]], dtype=np.float32)
    np.testing.assert_array_equal(charts._pooled(weights, 2, scores=False),
                                  np.array([[[[1.0, np.nan], [0.9, 0.1]]]], dtype=np.float32))
    scores = np.array([[[[1, -np.inf, -np.inf], [-3, 0.5, -np.inf], [0.3, 0.9, 0.1]]]], dtype=np.float32)
    np.testing.assert_array_equal(charts._pooled(scores, 2, scores=True),
                                  np.array([[[[-3.0, np.nan], [0.9, 0.1]]]], dtype=np.float32))
    n, heads, layers = 300, 12, 12
    k = charts.grid_pool_factor(layers, heads, n)
    values = np.tril(np.full((layers, heads, n, n), 0.01, dtype=np.float32))
    values[3, 5, 200, 17] = 0.9  # one strong cell: its block must show it
    spec = _grid(values)
    url = spec["layer"][0]["data"]["values"][0]["url"]
    image = np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))))
    grid = charts.GridLayout.of(-(-n // k), layers, heads)
    assert image.shape[:2] == (grid.height, grid.width) and grid.width * grid.height <= charts.GRID_IMAGE_MAX_PIXELS
    from ui.charts.heat_image import scheme_colours

    strong = tuple(scheme_colours(np.array(0.12 + 0.9 * 0.88), "blues"))
    assert tuple(image[grid.y0(3) + 200 // k, grid.x0(5) + 17 // k][:3]) == strong
    assert image[grid.y0(3) + 1, grid.x0(5) + grid.n - 1, 3] == 0  # above the diagonal: transparent
