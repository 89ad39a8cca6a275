"""ui.charts.common's theme: readable defaults, presenter mode's larger fonts, one drawing path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

from ui.charts.attention import attention_heatmap, head_grid_figure, spec_of
from ui.charts.common import (
    DEFAULT_FONTS,
    PRESENTER_FONTS,
    style_plotly,
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


def test_style_plotly_sizes_titles_axes_and_subplot_titles() -> None:
    fig = head_grid_figure(np.tril(np.ones((2, 2, 3, 3))) / 3, ["a", "b", "c"], ["L0 H0", "L0 H1", "L1 H0", "L1 H1"],
                           title="t", x_title="k", y_title="q", value_title="w", layer_names=["L0", "L1"])
    on = style_plotly(fig, presenter=True)
    assert on.layout.font.size >= 16 and on.layout.title.font.size >= 18
    assert all(a.font.size >= 16 for a in on.layout.annotations)
    assert fig.layout.annotations[0].font.size == 11  # the original is not changed
    off = style_plotly(go.Figure(go.Heatmap(z=[[1.0]], texttemplate="%{z}", textfont={"size": 10})), presenter=False)
    assert off.data[0].textfont.size == 10 and off.layout.font.size == DEFAULT_FONTS.axis_label


def test_pages_draw_every_chart_through_the_theme() -> None:
    direct = re.compile(r"\bst\.(altair_chart|plotly_chart|vega_lite_chart)\(")
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    offenders = [f"{path.name}:{n}" for path in files
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if direct.search(line)]
    assert not offenders, f"draw charts with ui.charts.common.vega/altair/plotly: {offenders}"


def test_long_vega_titles_wrap_into_lines_that_fit_a_phone() -> None:
    from core.bpe_view import display_width
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
