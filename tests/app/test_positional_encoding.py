"""AppTest: the Positional-encoding page renders in both languages, shows the seeds' row, reacts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean, chart_title
from core.lessons import positional
from tests.app.lesson_components import lesson_components
from ui.i18n import load_strings

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


# Sections 1-3 are drawn in the browser (ui.components.lessons): AppTest sees the data each view
# is sent; the numbers it draws are compared with core.lessons.positional in Chromium
# (tests/e2e/test_positional_encoding.py), where the seeds' row and the M_k check are asserted.
VIEWS = ("pe_table", "pe_vector", "pe_relative")
DEFAULT_KNOBS = {"pe_d_model": 8, "pe_positions": 64, "pe_base": 10000, "pe_pairs": None, "pe_position": 3,
                 "pe_offset": 2}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_with_the_seed_row(lang: str) -> None:
    at = open_positional(lang)
    assert_clean(at)
    assert at.title[0].value == ("Positional encoding: how a model knows word order" if lang == "en"
                                 else "位置编码：模型如何知道词序")
    views = lesson_components(at)
    assert set(VIEWS) <= set(views)
    for key in VIEWS:
        data = views[key]
        assert data["view"] == key.removeprefix("pe_")
        assert data["knobs"] == DEFAULT_KNOBS  # the seeds' d = 8, pos = 3 row
        assert not [v for v in data["labels"].values() if "⟦" in v], key
    row = views["pe_vector"]["labels"]["row"]
    assert row == ("PE(pos = {pos}) with d = {d}: **{row}**" if lang == "en" else load_strings("zh")["positional_encoding.vec.row"])


def test_chinese_page_reacts_to_its_widgets() -> None:
    at = open_positional("zh")
    labels = lesson_components(at)["pe_table"]["labels"]
    assert labels["d_model"] == load_strings("zh")["positional_encoding.sin.d_model"]
    assert labels["numbers"] == "显示数值"


def test_defaults_and_widgets() -> None:
    at = open_positional()
    limits = lesson_components(at)["pe_table"]["limits"]
    assert limits["d_model"] == [4, 512, 2] and limits["bases"][2] == 10000
    assert limits["position"] == [0, 100_000] and limits["offset"] == [-1000, 1000]
    rope = lesson_components(at)["pe_rope"]
    assert rope["knobs"] == {"pe_rope_layer": 0, "pe_rope_head": 0, "pe_rope_m": 5, "pe_rope_n": 2, "pe_rope_pairs": None}
    for key in ("pe_d_model", "pe_positions", "pe_base", "pe_position", "pe_offset", "pe_rope_m", "pe_rope_n"):
        assert not any(getattr(w, "key", None) == key for w in [*at.slider, *at.number_input, *at.select_slider])


def test_a_durable_value_and_a_link_reach_the_browser() -> None:
    """A value kept in the session (another page visit, a link read once) is what the views start from."""
    at = open_positional()
    at.session_state["kept.pe_d_model"] = 128
    at.session_state["kept.pe_base"] = 100
    at.session_state["kept.pe_pairs"] = [1, 5]
    at.run()
    assert_clean(at)
    for key in VIEWS:
        knobs = lesson_components(at)[key]["knobs"]
        assert (knobs["pe_d_model"], knobs["pe_base"], knobs["pe_pairs"]) == (128, 100, [1, 5])
    link = AppTest.from_file(APP, default_timeout=120)
    link.query_params["pe_d_model"] = "64"
    link.query_params["pe_position"] = "17"
    link.session_state["lang"] = "en"
    link.run()
    link.switch_page(f"pages/{PAGE}.py")
    link.run()
    knobs = lesson_components(link)["pe_vector"]["knobs"]
    assert (knobs["pe_d_model"], knobs["pe_position"]) == (64, 17)


@pytest.mark.parametrize(("name", "bad"), [("pe_d_model", 7), ("pe_d_model", "x"), ("pe_base", 12345),
                                           ("pe_position", -1), ("pe_offset", 10**9), ("pe_pairs", [1, 1])])
def test_bad_values_fall_back_to_the_default(name: str, bad: object) -> None:
    at = open_positional()
    at.session_state[f"kept.{name}"] = bad
    at.run()
    assert not at.exception
    assert lesson_components(at)["pe_table"]["knobs"][name] == DEFAULT_KNOBS[name]
    assert at.toast, "the fallback is said in the page's language"


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
    # Every layer's and head's q and k are sent once; the page's own rotation agrees with the
    # model's hook_rot_q for each of them.
    rope = lesson_components(at)["pe_rope"]
    assert (rope["layers"], rope["heads"]) == (4, 4) and len(rope["qk"]) == 16
    assert all(entry["diff"] < 1e-4 for entry in rope["qk"].values())
    assert rope["theta"] == pytest.approx(list(positional.rope_frequencies(32)), rel=1e-6)


def test_rope_demo_without_rope_uses_the_seeds_random_q_and_k() -> None:
    """The classic model: random q and k from the sidebar's seed; that q·k depends only on the
    offset and the panels' angles are checked in Chromium (tests/e2e/test_lesson_knobs.py)."""
    at = open_positional()
    rope = lesson_components(at)["pe_rope"]
    q, k = positional.demo_query_key(32, seed=0)
    assert rope["layers"] == 0 and rope["qk"]["0,0"]["diff"] is None
    np.testing.assert_array_equal(rope["qk"]["0,0"]["q"], q)
    np.testing.assert_array_equal(rope["qk"]["0,0"]["k"], k)


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
