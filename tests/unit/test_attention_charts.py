"""The attention pages' charts (Vega-Lite dicts): the head view, the weights and scores heat maps,
the numbered matrices, the head picker, the √d_k charts and the all-heads grid; what each shows,
and that each is valid Vega-Lite."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

import ui.charts.attention as charts
from ui.charts.attention import HEAD_PICK, attention_heatmap, head_picker, head_view_chart_spec


def _without_data(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k != "datasets"}


def _valid(spec: dict) -> None:
    validate_jsonschema(json.loads(json.dumps(_without_data(spec), default=str)), load_schema())


def _rows(spec: dict, name: str | None = None) -> list[dict]:
    data = spec["datasets"][name] if name else next(iter(spec["datasets"].values()))
    return data.to_dict(orient="records") if hasattr(data, "to_dict") else list(data)


@pytest.mark.parametrize(("n", "n_head"), [(1, 1), (7, 4), (12, 6), (40, 2)])
def test_the_head_view_has_a_panel_per_head_and_a_line_per_visible_key(n: int, n_head: int) -> None:
    names = [f"头 {h}" for h in range(n_head)]  # translated head names
    titles = dict(weight_title="weight", query_side="query 'q'", key_side="key", head_title="head")
    weights = np.full((n_head, n), 1.0 / n)
    spec = head_view_chart_spec(weights, ["·"] * n, n - 1, names, title="T", **titles)
    _valid(spec)
    assert spec["title"] == "T" and spec["columns"] == min(4, n_head)
    assert spec["facet"]["field"] == "head" and spec["facet"]["sort"] == names
    lines, left, right = spec["spec"]["layer"]
    assert spec["spec"]["height"] == max(160, 18 * n) and spec["spec"]["width"] == 190
    colour = lines["encoding"]["color"]
    palette = charts.HEAD_COLOURS
    assert colour["scale"] == {"domain": names, "range": [palette[h % len(palette)] for h in range(n_head)]}
    assert [(t["field"], t["title"]) for t in lines["encoding"]["tooltip"]] == [
        ("head", "head"), ("query", "query 'q'"), ("key", "key"), ("shown", "weight")]
    assert lines["encoding"]["strokeWidth"]["scale"] == {"domain": [0, 1], "range": [0.3, 7]}
    assert lines["encoding"]["y"]["scale"] == {"domain": [-0.5, n - 0.5], "reverse": True}
    assert left["mark"]["align"] == "right" and right["mark"]["align"] == "left"
    assert left["encoding"]["color"]["condition"] == {"test": "datum.is_query", "value": charts.QUERY_INK}
    rows = _rows(spec)
    line_rows = [r for r in rows if r["kind"] == "line"]
    assert len(line_rows) == n_head * n and {r["shown"] for r in line_rows} == {f"{1.0 / n:.4f}"}
    assert sum(r["kind"] == "token" for r in rows) == n_head * n
    again = head_view_chart_spec(weights * 0, ["·"] * n, 0, names, title="U", **titles)
    assert again["facet"] is spec["facet"]  # the layout is built once per length, heads and titles


@pytest.mark.parametrize(("n", "cell"), [(1, None), (24, None), (25, None), (33, None), (100, None), (5, 20)])
def test_the_weights_heat_map_shows_every_token_on_both_axes(n: int, cell: int | None) -> None:
    labels = [f"{i}·<t{i}>" for i in range(n)]
    weights = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    spec = attention_heatmap(weights, labels, title="T", x_title="key", y_title="query", value_title="weight",
                             masked_text="masked", cell=cell)
    _valid(spec)
    enc = spec["encoding"]
    assert spec["title"] == "T" and spec["mark"] == {"type": "rect"}
    assert enc["x"]["sort"] == labels and enc["y"]["sort"] == labels
    assert (enc["x"]["title"], enc["y"]["title"], enc["color"]["title"]) == ("key", "query", "weight")
    assert enc["x"]["axis"]["labelFontSize"] == (12 if n <= 24 else 9) and enc["x"]["axis"]["labelAngle"] == -60
    assert enc["y"]["axis"]["labelOverlap"] is (n > 32)
    step = cell or int(min(36, max(9, 600 // n)))
    assert spec["width"] == spec["height"] == {"step": step}
    assert enc["color"]["scale"] == {"domain": [0, 1], "scheme": {"name": "blues", "extent": [0.12, 1.0]}}
    assert enc["color"]["condition"] == {"test": "datum.masked", "value": charts.MASKED_GREY}
    assert [(t["field"], t["title"]) for t in enc["tooltip"]] == [("query", "query"), ("key", "key"), ("shown", "weight")]
    rows = _rows(spec)
    assert len(rows) == n * n
    last = rows[-1]
    assert (last["query"], last["key"], last["shown"], last["masked"]) == (labels[-1], labels[-1], f"{1 / n:.4f}", False)
    if n > 1:
        assert rows[1]["masked"] and rows[1]["shown"] == "masked"  # query 0 may not see key 1


def test_the_scores_heat_map_is_red_blue_over_the_largest_visible_score() -> None:
    scores = np.array([[1.5, -np.inf], [-3.0, 2.0]])
    spec = attention_heatmap(scores, ["a", "b"], title="T", x_title="k", y_title="q", value_title="score",
                             masked_text="masked", scores=True, value_format=".2f")
    _valid(spec)
    assert spec["encoding"]["color"]["scale"] == {"domain": [-3.0, 3.0], "reverse": True, "scheme": "redblue"}
    assert [r["shown"] for r in _rows(spec)] == ["1.50", "−∞", "-3.00", "2.00"]


def test_a_long_prompt_heat_map_sends_the_visible_triangle_with_token_lookups() -> None:
    n = charts.DENSE_HEATMAP_MAX + 10
    weights = np.tril(np.full((n, n), 0.25))
    spec = attention_heatmap(weights, [f"t{i}" for i in range(n)], title="T", x_title="k", y_title="q",
                             value_title="w", masked_text="m")
    _valid(spec)
    assert len(spec["datasets"]["cells"]) == n * (n + 1) // 2 and spec["data"] == {"name": "cells"}
    assert [t["as"] for t in spec["transform"]] == [["query"], ["key"]]
    assert all(t["from"]["data"]["name"] == "labels" for t in spec["transform"])
    assert spec["config"]["view"]["fill"] == charts.MASKED_GREY  # the masked triangle is the background
    assert spec["encoding"]["tooltip"][2] == {"field": "value", "title": "w", "type": "quantitative", "format": ".4f"}


MATRIX_CASES = [
    (np.array([[1.0, -np.inf], [0.5, 2.0]]), dict(cell=36, cell_width=90)),  # masked score, a diverging scale
    (np.array([[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]), dict(diverging=False, domain=(0.0, 1.0), value_format=".3f", cell=48)),
    (np.array([[3.0, 1.0]]), dict(diverging=False)),  # a sequential scale from the values
    (np.zeros((2, 2)), {}),  # all zero: the scale still has a range
    (np.array([[np.nan, np.inf], [-1e-7, 12345.678]]), dict(value_format="+.2f")),
]


@pytest.mark.parametrize(("matrix", "options"), MATRIX_CASES)
def test_the_numbered_matrix_writes_each_value_in_its_cell(matrix: np.ndarray, options: dict) -> None:
    rows = [f"r<{i}>" for i in range(matrix.shape[0])]
    cols = [f"我 {j}" for j in range(matrix.shape[1])]
    titles = dict(title="Q · 头 1", x_title="dimension", y_title="token", value_title="value")
    spec = charts.value_matrix_spec(matrix, rows, cols, **titles, **options)
    _valid(spec)
    rects, text = spec["layer"]
    assert spec["title"] == "Q · 头 1" and spec["height"] == {"step": options.get("cell", 40)}
    assert spec["width"] == {"step": options.get("cell_width") or options.get("cell", 40)}
    assert rects["encoding"]["x"]["sort"] == cols and rects["encoding"]["y"]["sort"] == rows
    assert rects["encoding"]["x"]["axis"]["orient"] == "top"
    if options.get("cell_width"):
        assert rects["encoding"]["x"]["axis"]["labelLimit"] == options["cell_width"] - 6
    colour = rects["encoding"]["color"]
    assert colour["value"] == charts.MASKED_GREY and colour["condition"]["test"] == "datum.finite"
    finite = matrix[np.isfinite(matrix)]
    if options.get("diverging", True):
        bound = float(np.abs(finite).max()) or 1.0
        assert colour["condition"]["scale"] == {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    else:
        lo, hi = options.get("domain") or (min(float(finite.min()), 0.0), max(float(finite.max()), 1e-9))
        assert colour["condition"]["scale"]["domain"] == [lo, hi]
    assert [(t["field"], t["title"]) for t in rects["encoding"]["tooltip"]] == [
        ("row", "token"), ("col", "dimension"), ("exact", "value")]
    assert text["encoding"]["text"] == {"field": "shown", "type": "nominal"}
    fmt = options.get("value_format", ".3g")
    for cell, value in zip(_rows(spec), matrix.ravel()):
        expected = format(value, fmt) if np.isfinite(value) else ("—" if np.isnan(value) else "−∞" if value < 0 else "∞")
        assert cell["shown"] == expected and cell["finite"] == bool(np.isfinite(value))
        assert cell["ink"] in (charts.LIGHT_INK, charts.DARK_INK)
    with pytest.raises(ValueError):
        charts.value_matrix_spec(matrix, rows[:-1], cols, **titles)


def test_two_matrices_side_by_side_keep_their_own_data_and_colour_scales() -> None:
    from ui.charts.vl import hconcat

    left = charts.value_matrix_spec(np.array([[0.1, 0.9]]), ["H0"], ["a", "b"], title="W", x_title="x", y_title="y",
                                    value_title="w", diverging=False, domain=(0.0, 1.0))
    right = charts.value_matrix_spec(np.array([[0.5]]), ["H0"], ["shift"], title="S", x_title=" ", y_title="y",
                                     value_title="s")
    spec = hconcat([left, right], title="both", spacing=24, independent=("color",))
    _valid(spec)
    assert spec["resolve"] == {"scale": {"color": "independent"}} and spec["spacing"] == 24
    assert [c["title"] for c in spec["hconcat"]] == ["W", "S"]
    (a, b) = (c["data"]["name"] for c in spec["hconcat"])
    assert a != b and _rows(spec, a)[1]["shown"] == "0.9" and _rows(spec, b)[0]["col"] == "shift"


@pytest.mark.parametrize("selected", [None, (1, 0)])
def test_the_head_picker_names_each_head_and_outlines_the_one_shown(selected: tuple[int, int] | None) -> None:
    args = ([0, 0, 1, 1], [0, 1, 0, 1], ["broad", "self", "previous <b>", "broad"], [0.5, float("nan"), 0.25, 1.0])
    kwargs = dict(title="Pick a head", x_title="head", y_title="layer", label_title="label", score_title="score",
                  selected=selected)
    spec = head_picker(*args, **kwargs)
    _valid(spec)
    assert spec["params"] == [{"name": HEAD_PICK, "select": {"type": "point", "clear": False, "fields": ["layer", "head"],
                                                             "on": "click"}, "views": [charts.PICK_VIEW]}]
    cells, text = spec["layer"]
    assert cells["name"] == charts.PICK_VIEW and spec["height"] == {"step": 44} and spec["width"] == "container"
    assert cells["encoding"]["color"]["field"] == "label" and cells["encoding"]["color"]["title"] == "label"
    assert cells["encoding"]["color"]["legend"]["orient"] == "bottom"
    assert cells["encoding"]["strokeWidth"] == {"condition": {"test": "datum.current", "value": 3}, "value": 0}
    assert [(t["field"], t["title"]) for t in cells["encoding"]["tooltip"]] == [
        ("layer", "layer"), ("head", "head"), ("label", "label"), ("shown", "score")]
    # Each cell writes its label over its score: the colour is never the only cue.
    assert cells["encoding"]["x"]["axis"]["orient"] == "top" and text["encoding"]["text"]["field"] == "cell_text"
    rows = _rows(spec)
    assert [r["shown"] for r in rows] == ["0.50", "—", "0.25", "1.00"]
    assert [r["cell_text"] for r in rows] == ["broad\n0.50", "self\n—", "previous <b>\n0.25", "broad\n1.00"]
    assert [r["current"] for r in rows] == [selected == (r["layer"], r["head"]) for r in rows]
    assert charts.picked_head({"selection": {HEAD_PICK: [{"layer": 1, "head": 0}]}}) == (1, 0)


def test_the_scaling_lab_charts_show_each_value_once() -> None:
    bars = charts.grouped_bars(["a", "b"], {"softmax": [0.25, 0.75], "plain": [None, 1.0]}, title="T", x_title="x",
                               y_title="p", legend_title="kind")
    hist = charts.overlaid_histogram({"raw": np.array([0.0, 1.0, 1.0]), "scaled": np.array([0.5])}, title="H",
                                     x_title="dot", y_title="count", legend_title="kind", bins=2)
    dk = charts.lines_over_dk(np.array([1, 4, 16]), {"raw": np.array([0.5, 0.7, 0.9])}, 4, title="L", x_title="d_k",
                              y_title="max", legend_title="kind")
    for spec in (bars, hist, dk):
        _valid(spec)
        assert spec["height"] == 260
    assert [(r["category"], r["series"], r["shown"]) for r in _rows(bars)] == [
        ("a", "softmax", "0.250"), ("b", "softmax", "0.750"), ("b", "plain", "1.000")]  # None draws no bar
    bar_layer, symbols = bars["layer"]  # each bar ends in its series' symbol (not colour alone)
    assert symbols["encoding"]["shape"]["scale"]["domain"] == ["softmax", "plain"]
    assert bar_layer["encoding"]["xOffset"]["sort"] == ["softmax", "plain"] and bar_layer["encoding"]["x"]["sort"] == ["a", "b"]
    assert sum(r["count"] for r in _rows(hist) if r["series"] == "raw") == 3 and hist["encoding"]["y"]["stack"] is None
    assert _rows(dk, "chosen") == [{"d_k": 4}] and dk["layer"][0]["encoding"]["x"]["scale"] == {"base": 2, "type": "log"}


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
