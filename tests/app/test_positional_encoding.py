"""AppTest: the Positional-encoding page renders in both languages, shows the seeds' row, reacts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from core.lessons import positional
from ui.charts.heat_image import colour_positions, scheme_colours
from tests.app.conftest import APP, assert_clean, chart_title, markdown_tables

PAGE = "positional_encoding"
SEED_ROW = "[0.141, −0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000]"


def open_positional(lang: str = "en", model: str = "classic") -> AppTest:
    """Start from app.py with the durable language and model set, then switch to the page."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["lang"] = lang
    at.session_state["model"] = model
    at.run()
    at.switch_page(f"pages/{PAGE}.py")
    at.run()
    return at


def table_with(at: AppTest, column: str) -> dict[str, list[str]]:
    """The Markdown table that has ``column``, as column -> cells (as shown)."""
    for rows in markdown_tables(at):
        if rows and column in rows[0]:
            return {name: [row[name] for row in rows] for name in rows[0]}
    raise AssertionError(f"no table with a column {column!r}")


def heatmaps(at: AppTest) -> dict[str, pd.DataFrame]:
    """Every Vega heat map (``matrix_heatmap_vega``) by its title: its cells (row, col, value)."""
    out = {}
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        if [layer.get("mark", {}).get("type") for layer in spec.get("layer", [])][:1] == ["rect"]:
            out[chart_title(spec)] = convert_arrow_bytes_to_pandas_df(element.proto.datasets[0].data.data)
    return out


def heat_image(at: AppTest, start: str) -> np.ndarray:
    """A big heat map's cells as the colours of its image (rows, columns, RGB)."""
    import base64
    import io

    from PIL import Image

    [picture] = [layer for layer in heatmap_spec(at, start)["layer"] if layer["mark"]["type"] == "image"]
    url = picture["data"]["values"][0]["url"]
    assert url.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB"))


def heatmap_spec(at: AppTest, start: str) -> dict:
    for element in at.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        if chart_title(spec).startswith(start):
            return spec
    raise AssertionError(f"no chart titled {start!r}: {list(heatmaps(at))}")


def heatmap_by_title(at: AppTest, start: str) -> pd.DataFrame:
    for title, cells in heatmaps(at).items():
        if title.startswith(start):
            return cells
    raise AssertionError(f"no heat map titled {start!r}: {list(heatmaps(at))}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_with_the_seed_row(lang: str) -> None:
    at = open_positional(lang)
    assert_clean(at)
    assert at.title[0].value == ("Positional encoding: how a model knows word order" if lang == "en"
                                 else "位置编码：模型如何知道词序")
    row = "PE(pos = 3) with d = 8" if lang == "en" else "d = 8 时 PE(pos = 3)"
    assert any(m.value.startswith(row) and SEED_ROW in m.value for m in at.markdown)
    value = "value" if lang == "en" else "数值"
    assert table_with(at, value)[value] == ["0.141", "−0.990", "0.296", "0.955", "0.030", "1.000", "0.003",
                                                  "1.000"]


def test_chinese_page_reacts_to_its_widgets() -> None:
    at = open_positional("zh")
    at.slider(key="pe_d_model").set_value(16).run()
    assert_clean(at)
    assert len(table_with(at, "公式")["公式"]) == 16
    assert any(m.value.startswith("d = 16 时 PE(pos = 3)") for m in at.markdown)


def test_defaults_and_widgets() -> None:
    at = open_positional()
    assert at.slider(key="pe_d_model").value == 8
    assert at.slider(key="pe_d_model").min == 4 and at.slider(key="pe_d_model").max == 512
    assert at.select_slider(key="pe_base").value == 10000
    assert at.number_input(key="pe_position").value == 3
    assert at.number_input(key="pe_offset").value == 2
    for key in ("pe_positions", "pe_rope_m", "pe_rope_n"):
        at.slider(key=key)


def test_changing_d_model_changes_table_and_heatmap() -> None:
    at = open_positional()
    at.slider(key="pe_d_model").set_value(128).run()
    assert not at.exception
    table = table_with(at, "formula")
    assert len(table["formula"]) == 128
    assert table["formula"][2] == "sin(3 / 1.155)"  # 10000^(2/128)
    image = heat_image(at, "Positional encoding: 64 positions × 128 dimensions")  # 8,192 cells: one image
    expected = scheme_colours(colour_positions(positional.sinusoidal_table(64, 128, 10000.0), symmetric=True,
                                               bound=1.0), "redblue")
    assert image.shape == (64, 128, 3) and np.abs(image.astype(int) - expected).max() <= 1  # float32 rounding
    row = next(m.value for m in at.markdown if m.value.startswith("PE(pos = 3)"))
    assert "with d = 128" in row and SEED_ROW not in row and row.endswith(", …]**")


def test_a_big_table_is_one_image_in_the_same_colours() -> None:
    at = open_positional()
    at.slider(key="pe_d_model").set_value(512).run()  # 64 × 512 cells > RECT_MAX_CELLS
    assert_clean(at)
    title = "Positional encoding: 64 positions × 512 dimensions (base 10,000)"
    assert title not in heatmaps(at)  # not one rectangle per cell
    image = heat_image(at, title)
    assert image.shape == (64, 512, 3)
    # Vega's "redblue" ends and middle (reversed: +1 red, 0 pale, −1 blue): sin 0 = 0, cos 0 = 1,
    # and sin(2·π/2 ... ) of the fastest pair at position 11 is close to −1.
    assert tuple(image[0, 0]) == (0xF2, 0xEF, 0xEE) and tuple(image[0, 1]) == (0x8C, 0x0D, 0x25)
    assert np.sin(11.0) < -0.99 and np.abs(image[11, 0].astype(int) - (0x13, 0x4B, 0x85)).max() <= 4
    assert not at.get("plotly_chart")
    at.slider(key="pe_d_model").set_value(8).run()  # and back: one rectangle per cell again
    assert "Positional encoding: 64 positions × 8 dimensions (base 10,000)" in heatmaps(at)


def test_base_changes_the_frequencies() -> None:
    at = open_positional()
    at.select_slider(key="pe_base").set_value(100).run()
    table = table_with(at, "formula")
    assert table["formula"][::2] == ["sin(3 / 1)", "sin(3 / 3.162)", "sin(3 / 10)", "sin(3 / 31.62)"]


def test_relative_position_check() -> None:
    at = open_positional()
    check = table_with(at, "M_2·PE(3)")
    assert check["M_2·PE(3)"] == check["PE(5)"]
    error = next(m for m in at.metric if "M_k" in m.label)
    assert float(error.value) < 1e-12
    matrix = heatmap_by_title(at, "M_2 (8 × 8)")
    assert sorted(set(matrix["col"])) == [str(i) for i in range(8)]
    # The rotation block of pair 0 for k = 2: [[cos 2, sin 2], [−sin 2, cos 2]].
    cell = {(r, c): v for r, c, v in matrix[["row", "col", "value"]].itertuples(index=False)}
    assert cell[("0", "0")] == pytest.approx(np.cos(2), abs=1e-6) and cell[("0", "1")] == pytest.approx(np.sin(2), abs=1e-6)
    assert cell[("1", "0")] == pytest.approx(-np.sin(2), abs=1e-6) and cell[("2", "5")] == 0
    assert [layer["mark"]["type"] for layer in heatmap_spec(at, "M_2 (8 × 8)")["layer"]] == ["rect", "text"]
    # The seeds' example: from pos 5, offset 3 lands on pos 8.
    at.number_input(key="pe_position").set_value(5).run()
    at.number_input(key="pe_offset").set_value(3).run()
    check = table_with(at, "M_3·PE(5)")
    assert check["M_3·PE(5)"] == check["PE(8)"]


def test_offset_before_the_start_is_explained() -> None:
    at = open_positional()
    at.number_input(key="pe_offset").set_value(-10).run()
    assert not at.exception
    assert any("before the first position" in w.value for w in at.warning)


def test_classic_adds_its_sinusoidal_table() -> None:
    at = open_positional(model="classic")
    titles = list(heatmaps(at))
    assert {"Token embeddings (what the token is)", "Positional encodings (where it is)",
            "Sum = block input (both at once)"} <= set(titles)
    assert any("classic model adds the sinusoidal table" in i.value for i in at.info)
    assert any(c.value.startswith("It equals the formula of section 1") for c in at.caption)
    image = heat_image(at, "The classic model's positional table")  # n_ctx × d_model, one pixel per cell
    assert image.shape == (128, 128, 3)
    assert (image[:, 1::2][0] == (0x8C, 0x0D, 0x25)).all()  # cos(0) = 1 in every odd dimension: red
    assert not at.get("plotly_chart")  # the default view loads no Plotly in the browser


def test_modern_uses_rope_and_shows_its_frequencies() -> None:
    at = open_positional(model="modern")
    assert_clean(at)
    assert any("uses RoPE: nothing is added" in i.value for i in at.info)
    assert any("real" in s.value and "rotation frequencies" in s.value for s in at.success)
    titles = list(heatmaps(at))
    assert "Token embeddings (what the token is)" in titles and "Positional encodings (where it is)" not in titles
    assert not at.get("plotly_chart")
    # The page's own rotation agrees with the model's hook_rot_q.
    caption = next(c.value for c in at.caption if "hook_rot_q" in c.value)
    assert float(caption.rsplit(" ", 1)[-1].rstrip(".")) < 1e-4


def test_rope_score_depends_only_on_the_offset() -> None:
    at = open_positional()
    caption = next(c.value for c in at.caption if "largest gap" in c.value)
    spread = float(caption.split("largest gap ")[1].split(")")[0])
    assert spread < 1e-9
    at.slider(key="pe_rope_m").set_value(30).run()
    at.slider(key="pe_rope_n").set_value(27).run()
    panels = heatmap_spec(at, "Each pair of q turned by m·θ (m = 30)")
    subtitles = [chart_title(picture) for picture in panels["concat"]]
    assert any("(m − n)·θ = 171.9°" in title for title in subtitles), subtitles


def test_the_three_prompt_heatmaps_share_one_colour_scale() -> None:
    at = open_positional(model="classic")
    assert_clean(at)
    ranges = set()
    for title in ("Token embeddings (what the token is)", "Positional encodings (where it is)",
                  "Sum = block input (both at once)"):
        domain = heatmap_spec(at, title)["layer"][0]["encoding"]["color"]["scale"]["domain"]
        assert domain[0] == -domain[1] and domain[1] > 0
        ranges.add(tuple(domain))
    assert len(ranges) == 1, ranges  # the same colour is the same number in all three
