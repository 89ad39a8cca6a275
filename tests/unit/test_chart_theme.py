"""ui.charts.common's theme: readable defaults, presenter mode's larger fonts, one drawing path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ui.charts.attention import attention_heatmap, head_grid_spec, spec_of
from ui.charts.common import (
    DEFAULT_FONTS,
    PRESENTER_FONTS,
    style_vega,
)
from ui.charts.output import top_tokens_chart

ROOT = Path(__file__).resolve().parents[2]


def _sizes(node, key: str) -> list[float]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "datasets":
                continue
            if k == key and isinstance(v, (int, float)):
                out.append(v)
            else:
                out.extend(_sizes(v, key))
    elif isinstance(node, list):
        for item in node:
            out.extend(_sizes(item, key))
    return out


def test_presenter_sizes_meet_the_projector_minimums() -> None:
    assert PRESENTER_FONTS.axis_label >= 16 and PRESENTER_FONTS.axis_title >= 18 and PRESENTER_FONTS.title >= 18
    assert PRESENTER_FONTS.mark_text >= 16  # token labels written on cells
    assert DEFAULT_FONTS.axis_label >= 13 and DEFAULT_FONTS.title >= 16  # readable at 1366×768 too


def test_style_vega_raises_every_explicit_size_in_presenter_mode() -> None:
    # A dense attention heatmap sets 9-12 px labels itself; presenter mode lifts them all.
    spec = spec_of(attention_heatmap(np.tril(np.ones((30, 30))) / np.arange(1, 31)[:, None], [f"t{i}" for i in range(30)],
                                     title="t", x_title="k", y_title="q", value_title="w", masked_text="m"))
    on = style_vega(spec, presenter=True)
    assert min(_sizes(on, "labelFontSize")) >= 16 and min(_sizes(on, "titleFontSize")) >= 18
    assert on["config"]["title"]["fontSize"] >= 18 and on["config"]["axis"]["labelFontSize"] >= 16
    off = style_vega(spec, presenter=False)
    assert off["config"]["axis"]["labelFontSize"] == DEFAULT_FONTS.axis_label
    assert 9 in _sizes(off, "labelFontSize")  # a deliberate dense size stays by default
    assert spec.get("config", {}).get("axis", {}).get("labelFontSize") != PRESENTER_FONTS.axis_label  # not mutated


def test_style_vega_keeps_the_data_and_text_marks_grow() -> None:
    spec = top_tokens_chart(["a", "b"], [0.6, 0.3], "rest", 0.1, title="t", x_title="p", y_title="token",
                            kind_title="k", kind_top="top", kind_tail="tail")
    on = style_vega(spec, presenter=True)
    assert on["datasets"] is spec["datasets"]
    assert on["config"]["text"]["fontSize"] >= 16


def test_pages_draw_every_chart_through_the_theme() -> None:
    direct = re.compile(r"\bst\.(altair_chart|plotly_chart|vega_lite_chart|pydeck_chart)\(")
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui" / "sections").glob("*.py"))]
    offenders = [f"{path.name}:{n}" for path in files
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if direct.search(line)]
    assert not offenders, f"draw charts with ui.charts.common.vega / vega_cached: {offenders}"


def test_long_vega_titles_wrap_into_lines_that_fit_a_phone() -> None:
    from core.text.bpe_view import display_width
    from ui.charts.common import TITLE_LINE_COLUMNS, style_vega, wrap_title

    assert wrap_title("Chips") == "Chips"
    zh = "经过 n 层后的梯度系数（共 48 层，对数坐标）"
    lines = wrap_title(zh).split("\n")
    assert len(lines) == 2 and "".join(lines) == zh  # nothing lost or added
    assert all(display_width(line.rstrip()) <= TITLE_LINE_COLUMNS for line in lines)
    assert lines[1].startswith("（")  # an opening bracket stays with what follows it
    en = "The corpus after 10 merges (same colour = same token)"
    assert "\n" in wrap_title(en) and wrap_title(en).replace("\n", "") == en
    assert all(not line.startswith(" ") for line in wrap_title(en).split("\n"))  # words never cut
    styled = style_vega({"mark": "bar", "title": wrap_title(en)}, presenter=False)
    assert styled["config"]["lineBreak"] == "\n"  # Vega draws each line


def test_a_token_set_off_by_spaces_in_a_chinese_title_is_never_cut() -> None:
    """The Embeddings analogy title quotes tokens between spaces: "比利 / 时" would read as two
    words, so a short spaced CJK run stays on one line; a plain CJK sentence still breaks
    anywhere (between characters)."""
    from ui.charts.common import wrap_title

    title = "离 布鲁塞尔 − 比利时 + 日本 最近的词元"
    lines = wrap_title(title).split("\n")
    assert "".join(lines) == title and len(lines) == 2
    for token in ("布鲁塞尔", "比利时", "日本"):
        assert any(token in line for line in lines), (token, lines)
    sentence = "温度越高，分布越平坦，越容易抽到概率较低的词元，这就是采样"
    assert len(wrap_title(sentence).split("\n")) == 2


def test_every_chart_drawn_gets_its_long_titles_wrapped() -> None:
    """The wrapping happens where every chart is drawn (style_vega), for every page, in both
    themes, on concatenated sub-charts too, and never changes the cached spec."""
    from ui.charts.common import style_vega, wrap_title

    long_en = "Attention of layer 0, head 1: who each token looks at (rows sum to 1)"
    long_zh = "第 0 层第 1 个头的注意力：每个词元看向谁（每行加起来是 1）"
    spec = {"mark": "bar", "title": long_en,
            "hconcat": [{"mark": "bar", "title": {"text": long_zh, "anchor": "start"}}, {"mark": "bar", "title": "short"}]}
    for presenter in (False, True):
        styled = style_vega(spec, presenter=presenter)
        assert styled["title"] == wrap_title(long_en) and "\n" in styled["title"]
        sub = styled["hconcat"][0]["title"]
        assert sub["text"] == wrap_title(long_zh) and "\n" in sub["text"] and sub["anchor"] == "start"
        assert styled["hconcat"][1]["title"] == "short"
        assert styled["title"].replace("\n", "") == long_en  # nothing lost
    assert spec["title"] == long_en and spec["hconcat"][0]["title"]["text"] == long_zh  # original untouched
    already = "line one\nline two"
    assert style_vega({"mark": "bar", "title": already}, presenter=False)["title"] == already  # not wrapped twice


def test_axis_labels_are_not_cut_at_streamlits_100_px() -> None:
    """Streamlit's chart theme sets axis labelLimit 100 px, which cut "MHA（40 个 KV 头）" to
    "MHA（40 个…"; our config (which Streamlit merges over its theme) allows more."""
    import json

    from ui.charts.output import kv_variants_chart

    spec = kv_variants_chart(["MHA（40 个 KV 头）", "GQA（8 个 KV 头）", "MQA（1 个 KV 头）"], [9_830_000_000, 1_970_000_000, 245_760_000],
                             ["9.83 GB", "1.97 GB", "245.76 MB"], ["a", "b", "c"], title="t", x_title="GB", y_title="结构",
                             detail_title="d")
    for presenter in (False, True):
        styled = style_vega(spec, presenter=presenter)
        assert styled["config"]["axis"]["labelLimit"] >= 180
    assert '"labelLimit": 400' in json.dumps(spec, default=str)  # its own axis: never cut


def test_text_in_grid_cells_is_cut_to_the_cell_width() -> None:
    """The logit-lens grids wrote "␣capital" across three 33 px cells on a phone: the text
    limit follows the cell's width on screen (Vega's bandwidth of the x scale)."""
    from ui.charts import block
    from ui.charts.common import CELL_TEXT_LIMIT
    from ui.charts.output import logit_lens_chart

    words = np.array([["␣capital", "␣France"], ["␣of", "␣is"]])
    lens = block.heat(np.eye(2), ("embedding", "after layer 0"), ("0·The", "1·␣capital"), title="t", x_title="x",
                      y_title="y", value_title="v", text=words)
    ranks = logit_lens_chart(["a", "b"], [["x", "y"], ["z", "w"]], np.eye(2), title="t", x_title="x", y_title="y",
                             value_title="v", token_title="k")
    for spec in (lens, ranks):
        [text] = [layer["mark"] for layer in spec["layer"] if layer["mark"]["type"] == "text"]
        assert text["limit"] == {"expr": CELL_TEXT_LIMIT} and "bandwidth('x')" in CELL_TEXT_LIMIT


def test_short_chinese_y_titles_are_written_level() -> None:
    """"层", "头", "词元" rotated by 90° read as stray glyphs; longer or Latin titles stay rotated."""
    spec = {"layer": [{"mark": "rect", "encoding": {"y": {"field": "row", "type": "nominal", "title": "头"},
                                                     "x": {"field": "c", "type": "nominal", "title": "头"}}},
                      {"mark": "text", "encoding": {"y": {"field": "row", "type": "nominal", "title": "词元",
                                                          "axis": {"labelLimit": 99}}}}]}
    styled = style_vega(spec, presenter=False)
    first, second = (layer["encoding"] for layer in styled["layer"])
    assert first["y"]["axis"]["titleAngle"] == 0 and "axis" not in first["x"]
    assert second["y"]["axis"] == {"labelLimit": 99, "titleAngle": 0, "titleAlign": "right", "titleBaseline": "middle"}
    assert "axis" not in spec["layer"][0]["encoding"]["y"]  # the cached spec is not changed
    for title in ("Head", "注意力结构", "Layer"):
        kept = style_vega({"mark": "bar", "encoding": {"y": {"field": "a", "type": "nominal", "title": title}}}, presenter=False)
        assert "axis" not in kept["encoding"]["y"]


def test_long_axis_titles_are_cut_into_lines_no_longer_than_a_phone_axis() -> None:
    """"Tokens of the word, in reading order (width ∝ characters)" was cut at the axis' end on a
    phone: long x/y titles become lines (Vega draws a list of strings as lines)."""
    from core.text.bpe_view import display_width
    from ui.charts.common import AXIS_TITLE_COLUMNS

    long = "Tokens of the word, in reading order (width ∝ characters)"
    spec = {"layer": [{"mark": "rect", "encoding": {"x": {"field": "a", "type": "quantitative", "title": long},
                                                     "y": {"field": "b", "type": "nominal", "title": "Word"}}}]}
    styled = style_vega(spec, presenter=False)
    enc = styled["layer"][0]["encoding"]
    assert isinstance(enc["x"]["title"], list) and "".join(enc["x"]["title"]) == long
    assert all(display_width(line.rstrip()) <= AXIS_TITLE_COLUMNS for line in enc["x"]["title"])
    assert enc["y"]["title"] == "Word" and spec["layer"][0]["encoding"]["x"]["title"] == long


@pytest.mark.parametrize("presenter", [False, True])
def test_the_head_grid_names_heads_and_layers_with_themed_axis_labels(presenter: bool) -> None:
    """The all-heads grid names its columns (heads) and rows (layers) with axis labels, not
    text marks: Streamlit colours them for the dark theme and presenter mode enlarges them."""
    spec = head_grid_spec(np.tril(np.ones((2, 3, 4, 4))) / 4, list("abcd"),
                          [f"L{layer} H{head}" for layer in range(2) for head in range(3)],
                          title="2 layers × 3 heads: Attention weight", x_title="key", y_title="query",
                          value_title="Attention weight", layer_names=["Layer 0", "Layer 1"],
                          head_names=["H0", "H1", "H2"], head_title="Head")
    styled = style_vega(spec, presenter=presenter)
    assert styled["config"]["axis"]["labelFontSize"] == (PRESENTER_FONTS if presenter else DEFAULT_FONTS).axis_label
    assert styled["config"]["legend"]["titleFontSize"] == (PRESENTER_FONTS if presenter else DEFAULT_FONTS).legend_title
    assert not [layer for layer in styled["layer"] if layer["mark"]["type"] == "text"]
    assert "\n" in styled["title"]  # wrapped on a phone
