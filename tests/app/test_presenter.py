"""The sidebar's presenter switch enlarges the fonts of every chart and of the diagram."""

from __future__ import annotations

import json

from tests.app.conftest import assert_clean, open_page


def _vega_configs(at) -> list[dict]:  # noqa: ANN001
    return [json.loads(c.proto.spec).get("config", {}) for c in at.get("vega_lite_chart")]


def test_presenter_switch_enlarges_chart_and_diagram_fonts() -> None:
    at = open_page(None, "en")
    assert_clean(at)
    toggle = next(t for t in at.toggle if "Presenter" in t.label)
    assert toggle.value is False
    assert "fontsize=11" in at.get("graphviz_chart")[0].proto.spec
    toggle.set_value(True).run()
    assert_clean(at)
    assert at.session_state["presenter"] is True
    assert "fontsize=15" in at.get("graphviz_chart")[0].proto.spec
    at.switch_page("pages/logits_sampling.py").run()  # the choice is kept on every page
    assert_clean(at)
    configs = _vega_configs(at)
    assert configs and all(c["axis"]["labelFontSize"] >= 16 and c["axis"]["titleFontSize"] >= 18
                           and c["title"]["fontSize"] >= 18 for c in configs)
    at.switch_page("pages/positional_encoding.py").run()
    plots = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
    assert plots and all(p["font"]["size"] >= 16 for p in plots)


def test_default_charts_use_the_readable_default_theme() -> None:
    at = open_page("logits_sampling", "en")
    assert all(c["axis"]["labelFontSize"] == 13 and c["title"]["fontSize"] == 16 for c in _vega_configs(at))
