"""The Positional-encoding page's Vega-Lite heat maps (cells or one image) and RoPE pictures:
what they draw is the data."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from altair.utils.schemapi import validate_jsonschema
from altair.vegalite.v6.schema import load_schema

from core.text.bpe_view import display_width
from ui.charts import vl
from ui.charts.common import style_vega
from ui.charts.positional import (K_COLOUR, LINE_STYLES, Q_COLOUR, SERIES_COLOURS, PairPanel, RotationText,
                                  frequency_chart, rotation_panels_vega, score_by_offset, waves)
from ui.charts.heat_image import MISSING_RGB, SCHEME_STOPS, colour_positions, heat_png, scheme_colours, stops
from ui.charts.vectors import MAX_ANNOTATED_CELLS, RECT_MAX_CELLS, matrix_heatmap_vega

TEXT = dict(title="PE", x_title="dimension", y_title="position", value_title="value")
ROTATION_TEXT = RotationText("Each pair turned", "q before", "k before", "q at m", "k at n", "dim 2i", "dim 2i + 1")


def validated(spec: dict) -> dict:
    """The spec checked against the Vega-Lite schema it names (the one Altair ships), and as JSON
    (no NaN: a missing value is null)."""
    assert spec["$schema"] == vl.SCHEMA_URL
    validate_jsonschema(spec, load_schema())
    json.dumps(spec, allow_nan=False)
    return spec


def test_the_heat_map_cells_are_the_matrix() -> None:
    matrix = np.arange(12, dtype=float).reshape(3, 4) - 5.5
    spec = matrix_heatmap_vega(matrix, **TEXT)
    validated(spec)
    cells = spec["datasets"]["matrix"]
    assert all(list(cell) == ["row", "col", "value"] for cell in cells)
    assert [(cell["row"], cell["col"]) for cell in cells] == [(i, j) for i in range(3) for j in range(4)]  # row by row
    grid = np.array([cell["value"] for cell in cells]).reshape(3, 4)
    np.testing.assert_array_equal(grid, matrix)
    assert all(type(cell["value"]) is float and float(np.float32(cell["value"])) == cell["value"] for cell in cells)
    rect, text = spec["layer"]
    colour = rect["encoding"]["color"]
    assert colour["scale"] == {"domain": [-5.5, 5.5], "reverse": True, "scheme": "redblue"}  # blue −, red +
    assert colour["title"] == "value" and rect["encoding"]["stroke"] == {**colour, "legend": None}
    assert spec["resolve"] == {"legend": {"stroke": "independent"}}  # the colour's gradient legend stays
    assert rect["encoding"]["x"]["title"] == "dimension" and rect["encoding"]["y"]["title"] == "position"
    assert [t.get("format") for t in rect["encoding"]["tooltip"]] == [None, None, ".4f"]
    assert text["mark"]["type"] == "text" and text["encoding"]["text"]["format"] == ".2f"
    assert spec["title"] == "PE" and spec["height"] == 420


def test_the_colour_range_can_be_shared_and_big_matrices_carry_no_numbers() -> None:
    rows = MAX_ANNOTATED_CELLS // 10 + 1
    spec = matrix_heatmap_vega(np.ones((rows, 10)), **TEXT, bound=3.0)
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect"]
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-3.0, 3.0]
    assert spec["layer"][0]["encoding"]["y"]["axis"]["labelOverlap"] is True  # 41 rows: labels thinned
    sequential = matrix_heatmap_vega(np.ones((2, 2)), **TEXT, symmetric=False)
    assert "domain" not in sequential["layer"][0]["encoding"]["color"]["scale"]


def test_labels_keep_their_order_and_are_plain_text() -> None:
    tokens = ["0·<b>x</b>", "1·%{y}", "2·巴黎", "3·*a*"]
    spec = matrix_heatmap_vega(np.eye(4), **TEXT, y_labels=tokens, x_labels=["0", "1", "2", "3"])
    plain = validated(spec)
    y = spec["layer"][0]["encoding"]["y"]
    assert y["sort"] == tokens and y["type"] == "ordinal"
    assert [row["row"] for row in plain["datasets"]["matrix"][::4]] == tokens  # as typed: Vega draws text
    assert spec["layer"][0]["encoding"]["x"]["axis"]["labelAngle"] == 0
    with pytest.raises(ValueError):
        matrix_heatmap_vega(np.eye(4), **TEXT, y_labels=tokens[:3])


def test_square_cells_and_a_range_from_finite_values() -> None:
    matrix = np.array([[np.nan, 2.0], [-4.0, np.inf]])
    spec = validated(matrix_heatmap_vega(matrix, **TEXT, cell_px=30))
    assert [cell["value"] for cell in spec["datasets"]["matrix"]] == [None, 2.0, -4.0, None]  # missing: null
    assert spec["width"] == {"step": 30} and spec["height"] == {"step": 30}
    assert spec["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-4.0, 4.0]
    assert matrix_heatmap_vega(np.zeros((2, 2)), **TEXT)["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-1.0, 1.0]


def test_presenter_mode_enlarges_the_heat_map() -> None:
    styled = style_vega(matrix_heatmap_vega(np.eye(3), **TEXT), presenter=True)
    assert styled["config"]["axis"]["labelFontSize"] >= 16
    assert styled["layer"][1]["mark"]["fontSize"] >= 16  # the numbers in the cells too


def panels(count: int, seed: int = 0) -> list[PairPanel]:
    rng = np.random.default_rng(seed)
    return [PairPanel(f"pair {i}: θ = {0.5 ** i:.3g}, (m − n)·θ = {30 * i:.1f}°", *(rng.normal(size=2) for _ in range(4)))
            for i in range(count)]


@pytest.mark.parametrize("count", [1, 2, 4])
def test_each_rope_picture_draws_its_four_vectors_at_their_true_angle(count: int) -> None:
    shown = panels(count)
    spec = rotation_panels_vega(shown, text=ROTATION_TEXT)
    plain = validated(spec)
    assert spec["columns"] == min(2, count) and len(spec["concat"]) == count
    rows = plain["datasets"]["rotation"]
    for index, (panel, picture) in enumerate(zip(shown, spec["concat"])):
        mine = {row["series"]: row for row in rows if row["panel"] == index}
        for attr, name in (("q", "q before"), ("k", "k before"), ("q_rotated", "q at m"), ("k_rotated", "k at n")):
            assert (mine[name]["x"], mine[name]["y"]) == tuple(float(c) for c in getattr(panel, attr))
        assert picture["transform"] == [{"filter": f"datum.panel == {index}"}]
        # Square, with the same range on both axes: one unit is as long across as up.
        assert picture["width"] == picture["height"]
        arrows, heads = picture["layer"]
        reach = 1.15 * max(np.linalg.norm(panel.q), np.linalg.norm(panel.k))
        for channel in ("x", "y"):
            assert heads["encoding"][channel]["scale"]["domain"] == pytest.approx([-reach, reach])
            assert arrows["encoding"][channel]["scale"] == heads["encoding"][channel]["scale"]
        assert arrows["encoding"]["x2"] == {"field": "x"} and arrows["encoding"]["y2"] == {"field": "y"}
        assert "".join(picture["title"]["text"].split("\n")) == panel.subtitle
        assert all(display_width(line) <= 24 for line in picture["title"]["text"].split("\n"))


def test_arrow_heads_point_along_their_arrows() -> None:
    """Vega turns a symbol clockwise from "up" on a screen whose y axis points down."""
    unit = [np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([0.0, -1.0]), np.array([-1.0, 1.0])]
    spec = rotation_panels_vega([PairPanel("p", *unit)], text=ROTATION_TEXT)
    angles = [row["angle"] for row in spec["datasets"]["rotation"]]
    assert angles == pytest.approx([90.0, 0.0, 180.0, 315.0])
    heads = spec["concat"][0]["layer"][1]
    assert heads["mark"]["shape"] == "triangle-up" and heads["encoding"]["angle"]["scale"] is None


def test_one_legend_tells_before_from_after() -> None:
    spec = rotation_panels_vega(panels(2), text=ROTATION_TEXT)
    encoding = spec["concat"][0]["layer"][0]["encoding"]
    names = ["q before", "k before", "q at m", "k at n"]
    assert encoding["color"]["scale"]["range"] == [Q_COLOUR, K_COLOUR, Q_COLOUR, K_COLOUR]
    assert encoding["opacity"] == {"condition": {"test": "datum.rotated", "value": 1.0}, "value": 0.5}  # before: faint
    rows = spec["datasets"]["rotation"]
    assert [row["rotated"] for row in rows[:4]] == [False, False, True, True]
    assert encoding["strokeDash"]["scale"]["range"] == [[6, 4], [6, 4], [1, 0], [1, 0]]  # before: dashed
    for channel in ("color", "strokeDash"):  # one field, one order, one legend
        assert encoding[channel]["scale"]["domain"] == names and encoding[channel]["sort"] == names
        assert encoding[channel]["legend"] == encoding["color"]["legend"]
    assert spec["title"] == "Each pair turned"
    assert math.isclose(spec["concat"][1]["width"], spec["concat"][0]["width"])


# --- big matrices: one image coloured on the server --------------------------------------------


def test_the_schemes_are_the_ones_the_served_vega_uses() -> None:
    """Our copy of Vega's palettes against the Vega bundled in the installed Streamlit."""
    import re
    from pathlib import Path

    import streamlit

    bundle = "".join(p.read_text(encoding="utf-8", errors="replace")
                     for p in (Path(streamlit.__file__).parent / "static" / "static" / "js").glob("embed.*.js"))
    assert re.search(r"redBlue:`" + SCHEME_STOPS["redblue"] + "`", bundle)
    assert re.search(r"blues:`" + SCHEME_STOPS["blues"] + "`", bundle)


def test_scheme_colours_hit_every_stop_and_interpolate_linearly_between() -> None:
    ramp = stops("redblue")
    assert len(ramp) == 11
    at_stops = scheme_colours(np.linspace(0, 1, 11), "redblue")
    np.testing.assert_array_equal(at_stops, ramp)
    halfway = scheme_colours(np.array([0.05]), "redblue")[0]
    np.testing.assert_array_equal(halfway, np.floor((ramp[0] + ramp[1]) / 2 + 0.5))
    np.testing.assert_array_equal(scheme_colours(np.array([-1.0, 2.0]), "redblue"), ramp[[0, -1]])  # clamped


def test_colour_positions_put_negative_blue_and_positive_red() -> None:
    t = colour_positions(np.array([-2.0, 0.0, 2.0]), symmetric=True, bound=2.0)
    np.testing.assert_allclose(t, [1.0, 0.5, 0.0])  # "redblue" reversed, as the rectangles' scale
    t = colour_positions(np.array([3.0, 5.0, 7.0]), symmetric=False, bound=1.0, low=0.12, high=1.0)
    np.testing.assert_allclose(t, [0.12, 0.56, 1.0])


def test_the_png_has_one_pixel_per_cell_and_grey_for_missing_values() -> None:
    import io

    from PIL import Image

    matrix = np.array([[-1.0, 0.0, 1.0], [np.nan, 0.5, -0.5]])
    image = np.asarray(Image.open(io.BytesIO(heat_png(matrix, symmetric=True, bound=1.0, scheme="redblue"))))
    assert image.shape == (2, 3, 3)
    assert tuple(image[0, 0]) == (0x13, 0x4B, 0x85) and tuple(image[0, 2]) == (0x8C, 0x0D, 0x25)
    assert tuple(image[1, 0]) == MISSING_RGB


def test_a_big_matrix_is_an_image_under_band_axes_and_a_legend() -> None:
    import base64
    import io

    from PIL import Image

    rows, cols = 40, RECT_MAX_CELLS // 40 + 1
    matrix = np.linspace(-2, 2, rows * cols).reshape(rows, cols)
    tokens = [f"{i}·<i>t</i>" for i in range(rows)]
    spec = matrix_heatmap_vega(matrix, **TEXT, y_labels=tokens, height=500)
    validated(spec)
    picture, x_axis, y_axis, legend = spec["layer"]
    assert picture["mark"]["type"] == "image" and picture["mark"]["smooth"] is False  # sharp cells
    assert picture["mark"]["width"] == {"expr": "width"} and picture["mark"]["height"] == {"expr": "height"}
    png = base64.b64decode(picture["data"]["values"][0]["url"].split(",", 1)[1])
    image = np.asarray(Image.open(io.BytesIO(png)))
    np.testing.assert_array_equal(image, scheme_colours(colour_positions(matrix, symmetric=True, bound=2.0), "redblue"))
    # The axes' bands are the image's rows and columns: no padding, in the matrix's order.
    for axis, field, names in ((x_axis["encoding"]["x"], "col", list(range(cols))), (y_axis["encoding"]["y"], "row", tokens)):
        assert axis["field"] == field and axis["sort"] == names and axis["type"] == "ordinal"
        assert axis["scale"] == {"paddingInner": 0, "paddingOuter": 0, "type": "band"}
    assert [d["row"] for d in y_axis["data"]["values"]] == tokens and x_axis["mark"]["opacity"] == 0
    assert legend["encoding"]["color"]["scale"] == {"domain": [-2.0, 2.0], "reverse": True, "scheme": "redblue"}
    assert legend["encoding"]["color"]["title"] == "value" and spec["height"] == 500
    assert spec["usermeta"]["embedOptions"] == {"renderer": "canvas"}
    # What a screen reader gets of the picture: each row's largest value (ui.charts.access).
    reading = spec["usermeta"]["tj_a11y"]
    assert [r["row"] for r in reading["rows"]] == tokens
    assert [r["value"] for r in reading["rows"]] == pytest.approx(matrix.max(axis=1))
    small = matrix_heatmap_vega(np.ones((8, 8)), **TEXT)
    assert small["layer"][0]["mark"]["type"] == "rect" and small["layer"][0]["encoding"]["tooltip"]


# --- the waves, RoPE's frequencies and the score by offset ------------------------------------------


WAVE_TEXT = dict(title="t", x_title="pos", y_title="PE", series_title="s", series_label="dim {dim} ({fn}, pair {k})",
                 period_title="period")


@pytest.mark.parametrize("n_pos", [40, 65])
def test_the_waves_are_the_tables_columns_sin_solid_cos_dashed(n_pos: int) -> None:
    table = np.sin(np.arange(n_pos)[:, None] / (10 ** (np.arange(8)[None, :] / 4)))
    table[3, 0] = np.nan
    spec = validated(waves(table, [0, 3], [6.28, 20.0, 63.0, 199.0], **WAVE_TEXT))
    rows = spec["datasets"][spec["data"]["name"]]
    order = ["dim 0 (sin, pair 0)", "dim 1 (cos, pair 0)", "dim 6 (sin, pair 3)", "dim 7 (cos, pair 3)"]
    for series, dim in zip(order, (0, 1, 6, 7)):
        mine = [row for row in rows if row["series"] == series]
        assert [row["position"] for row in mine] == list(range(n_pos))
        assert [row["value"] for row in mine] == [None if np.isnan(v) else v for v in table[:, dim].tolist()]
        assert {row["fn"] for row in mine} == {"sin" if dim % 2 == 0 else "cos"}
        assert {row["period"] for row in mine} == {"6.3" if dim < 2 else "199.0"}
    encoding = spec["encoding"]
    assert encoding["color"]["sort"] == order and encoding["color"]["title"] == "s"
    assert encoding["strokeDash"]["scale"] == {"domain": ["sin", "cos"], "range": [[1, 0], [6, 4]]}
    assert encoding["y"]["scale"]["domain"] == [-1.05, 1.05]
    assert [t["title"] for t in encoding["tooltip"]] == ["s", "pos", "PE", "period"]
    assert spec["mark"]["point"] is (n_pos <= 64)  # dots only while they stay apart
    assert spec["title"] == "t" and spec["height"] == 320


def test_the_frequencies_are_a_log_axis_over_the_pairs() -> None:
    spec = validated(frequency_chart([1.0, 0.1, 0.01], [6.28, 62.8, 628.3], title="t", x_title="pair", y_title="θ",
                                     period_title="period"))
    assert spec["datasets"][spec["data"]["name"]] == [{"pair": 0, "theta": 1.0, "period": 6.28},
                                                      {"pair": 1, "theta": 0.1, "period": 62.8},
                                                      {"pair": 2, "theta": 0.01, "period": 628.3}]
    encoding = spec["encoding"]
    assert encoding["y"]["scale"] == {"type": "log"}
    assert encoding["x"]["scale"] == {"domain": [0, 2], "nice": False} and encoding["x"]["axis"] == {"tickMinStep": 1}
    assert [t.get("format") for t in encoding["tooltip"]] == [None, ".6f", ",.1f"]
    single = validated(frequency_chart([1.0], [6.28], title="t", x_title="pair", y_title="θ", period_title="p"))
    assert single["encoding"]["x"]["scale"]["domain"] == [0, 1]  # one pair: the axis still has a length


def test_each_query_position_is_its_own_line_thick_first() -> None:
    scores = np.array([[1.0, 0.5, np.nan], [0.9, 0.4, 0.2], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    spec = validated(score_by_offset(scores, [5, 9, 11, 12], title="t", x_title="Δ", y_title="q·k", series_title="m",
                                     series_label="m = {m}"))
    order = ["m = 5", "m = 9", "m = 11", "m = 12"]
    assert len(spec["layer"]) == 4
    for index, (layer, label) in enumerate(zip(spec["layer"], order)):
        rows = spec["datasets"][layer["data"]["name"]]
        expected = [(delta, value) for delta, value in enumerate(scores[index].tolist()) if not np.isnan(value)]
        assert [(row["offset"], row["score"]) for row in rows] == expected  # the missing offset is left out
        assert {row["series"] for row in rows} == {label}
        width, dash, point = LINE_STYLES[index % len(LINE_STYLES)]
        assert layer["mark"] == {"type": "line", "point": {"size": point}, "strokeDash": dash, "strokeWidth": width}
        colour = layer["encoding"]["color"]
        assert colour["scale"] == {"domain": order, "range": list(SERIES_COLOURS)} and colour["sort"] == order
    assert spec["title"] == "t" and spec["height"] == 320
