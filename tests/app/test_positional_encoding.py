"""AppTest: the Positional-encoding page renders in both languages, shows the seeds' row, reacts."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import APP, assert_clean

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


def table_with(at: AppTest, column: str):
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a column {column!r}")


def plotly_title(spec: dict) -> str:
    """A Plotly title as one line (the theme breaks long titles with <br> for phones)."""
    return spec["layout"].get("title", {}).get("text", "").replace("<br>", "")


def plotly_titles(at: AppTest) -> list[str]:
    return [plotly_title(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]


def plotly_by_title(at: AppTest, start: str) -> dict:
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if plotly_title(spec).startswith(start):
            return spec
    raise AssertionError(f"no Plotly chart titled {start!r}: {plotly_titles(at)}")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_renders_with_the_seed_row(lang: str) -> None:
    at = open_positional(lang)
    assert_clean(at)
    assert at.title[0].value == ("Positional encoding: how a model knows word order" if lang == "en"
                                 else "位置编码：模型如何知道词序")
    row = "PE(pos = 3) with d = 8" if lang == "en" else "d = 8 时 PE(pos = 3)"
    assert any(m.value.startswith(row) and SEED_ROW in m.value for m in at.markdown)
    value = "value" if lang == "en" else "数值"
    assert list(table_with(at, value)[value]) == ["0.141", "−0.990", "0.296", "0.955", "0.030", "1.000", "0.003",
                                                  "1.000"]


def test_chinese_page_reacts_to_its_widgets() -> None:
    at = open_positional("zh")
    at.slider(key="pe_d_model").set_value(16).run()
    assert_clean(at)
    assert len(table_with(at, "公式")) == 16
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
    assert len(table) == 128
    assert table["formula"].iloc[2] == "sin(3 / 1.155)"  # 10000^(2/128)
    heat = plotly_by_title(at, "Positional encoding: 64 positions × 128 dimensions")
    assert len(heat["data"][0]["x"]) == 128
    row = next(m.value for m in at.markdown if m.value.startswith("PE(pos = 3)"))
    assert "with d = 128" in row and SEED_ROW not in row and row.endswith(", …]**")


def test_base_changes_the_frequencies() -> None:
    at = open_positional()
    at.select_slider(key="pe_base").set_value(100).run()
    table = table_with(at, "formula")
    assert list(table["formula"][::2]) == ["sin(3 / 1)", "sin(3 / 3.162)", "sin(3 / 10)", "sin(3 / 31.62)"]


def test_relative_position_check() -> None:
    at = open_positional()
    check = table_with(at, "M_2·PE(3)")
    assert list(check["M_2·PE(3)"]) == list(check["PE(5)"])
    error = next(m for m in at.metric if "M_k" in m.label)
    assert float(error.value) < 1e-12
    matrix = plotly_by_title(at, "M_2 (8 × 8)")
    assert len(matrix["data"][0]["x"]) == 8
    # The seeds' example: from pos 5, offset 3 lands on pos 8.
    at.number_input(key="pe_position").set_value(5).run()
    at.number_input(key="pe_offset").set_value(3).run()
    check = table_with(at, "M_3·PE(5)")
    assert list(check["M_3·PE(5)"]) == list(check["PE(8)"])


def test_offset_before_the_start_is_explained() -> None:
    at = open_positional()
    at.number_input(key="pe_offset").set_value(-10).run()
    assert not at.exception
    assert any("before the first position" in w.value for w in at.warning)


def test_classic_adds_its_sinusoidal_table() -> None:
    at = open_positional(model="classic")
    titles = plotly_titles(at)
    assert {"Token embeddings (what the token is)", "Positional encodings (where it is)",
            "Sum = block input (both at once)"} <= set(titles)
    assert any("classic model adds the sinusoidal table" in i.value for i in at.info)
    assert any(c.value.startswith("It equals the formula of section 1") for c in at.caption)
    assert plotly_by_title(at, "The classic model's positional table")


def test_modern_uses_rope_and_shows_its_frequencies() -> None:
    at = open_positional(model="modern")
    assert_clean(at)
    assert any("uses RoPE: nothing is added" in i.value for i in at.info)
    assert any("real" in s.value and "rotation frequencies" in s.value for s in at.success)
    titles = plotly_titles(at)
    assert "Positional encodings (where it is)" not in titles
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
    panels = plotly_by_title(at, "Each pair of q turned by m·θ (m = 30)")
    assert "(m − n)·θ = 171.9°" in json.dumps(panels["layout"]["annotations"], ensure_ascii=False)


def test_the_three_prompt_heatmaps_share_one_colour_scale() -> None:
    at = open_positional(model="classic")
    assert_clean(at)
    ranges = set()
    for title in ("Token embeddings (what the token is)", "Positional encodings (where it is)",
                  "Sum = block input (both at once)"):
        heat = plotly_by_title(at, title)["data"][0]
        assert heat["zmin"] == -heat["zmax"]
        ranges.add((heat["zmin"], heat["zmax"]))
    assert len(ranges) == 1, ranges  # the same colour is the same number in all three
