"""The sidebar's presenter switch enlarges the fonts of every chart and of the diagram."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter

from tests.app.components import component_data
from tests.app.conftest import assert_clean, open_page, overview_svg, spaces
from ui.diagram import DIAGRAM_PX, PRESENTER_DIAGRAM_PX


def _vega_configs(at) -> list[dict]:  # noqa: ANN001
    return [json.loads(c.proto.spec).get("config", {}) for c in at.get("vega_lite_chart")]


def _drawings(at) -> list[str]:  # noqa: ANN001
    """The SVG drawings on the page (laid out on the server, sent through Markdown)."""
    return [m.value for m in at.markdown if m.value.startswith("<svg")]


def _diagram_font_and_min_scale(at) -> tuple[int, float]:  # noqa: ANN001
    return _font_and_min_scale(overview_svg(at))


def _font_and_min_scale(svg: str) -> tuple[int, float]:
    """The boxes' font size and the smallest scale the drawing may shrink to."""
    root = ET.fromstring(svg)
    sizes = Counter(int(t.get("font-size")) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    style = dict(part.split(": ") for part in root.get("style").rstrip(";").split("; "))
    view_w = float(root.get("viewBox").split()[2])
    return sizes.most_common(1)[0][0], round(float(style["min-width"].removesuffix("px")) / view_w, 2)


def test_presenter_switch_enlarges_chart_and_diagram_fonts() -> None:
    at = open_page(None, "en")
    assert_clean(at)
    toggle = next(t for t in at.toggle if "Presenter" in t.label)
    assert toggle.value is False
    assert _diagram_font_and_min_scale(at) == (DIAGRAM_PX, 0.75)
    toggle.set_value(True).run()
    assert_clean(at)
    assert at.session_state["presenter"] is True
    assert _diagram_font_and_min_scale(at) == (PRESENTER_DIAGRAM_PX, 0.95)  # larger, and shrinks little
    at.switch_page("pages/logits_sampling.py").run()  # the choice is kept on every page
    assert_clean(at)
    configs = _vega_configs(at)
    assert configs and all(c["axis"]["labelFontSize"] >= 16 and c["axis"]["titleFontSize"] >= 18
                           and c["title"]["fontSize"] >= 18 for c in configs)
    at.switch_page("pages/embeddings.py").run()
    assert spaces(at) and all(space["presenter"] is True for space in spaces(at).values())
    at.switch_page("pages/multi_head_attention.py").run()  # the grid of every head is the browser's too
    configs = _vega_configs(at)
    assert configs and all(c["axis"]["labelFontSize"] >= 16 for c in configs)
    # the picked head's heatmap is drawn in the browser (ui.components.mha_heads): told to present
    assert component_data(at, "mha_heads")["presenter"] is True


def test_default_charts_use_the_readable_default_theme() -> None:
    at = open_page("logits_sampling", "en")
    assert all(c["axis"]["labelFontSize"] == 13 and c["title"]["fontSize"] == 16 for c in _vega_configs(at))


def test_presenter_mode_enlarges_the_block_page_drawings_and_the_overview_diagram() -> None:
    at = open_page("transformer_block", "en")
    assert_clean(at)
    assert [_font_and_min_scale(svg) for svg in _drawings(at)] == [(DIAGRAM_PX, 0.75)] * 3
    at.session_state["presenter"] = True
    at.run()
    assert_clean(at)
    assert [_font_and_min_scale(svg) for svg in _drawings(at)] == [(PRESENTER_DIAGRAM_PX, 0.95)] * 3
    at.switch_page("app.py").run()  # the Overview diagram: larger text that shrinks little
    assert _diagram_font_and_min_scale(at) == (PRESENTER_DIAGRAM_PX, 0.95)
