"""WCAG 2.1 AA contrast in both themes: text 4.5:1, meaningful marks 3:1.

Reads the colours where they are set: ``.streamlit/config.toml`` (Streamlit's theme), ``ui.theme``
(the style sheet that lifts Streamlit's low-contrast texts, chart axis and legend text included)
and the components' CSS variables (``ui/components/frontend/src/*.css``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from ui import theme
from ui.theme import DARK, LIGHT, MARK_CONTRAST, TEXT_CONTRAST, ThemeColours, contrast

ROOT = Path(__file__).resolve().parents[2]
COMPONENT_CSS = ROOT / "ui" / "components" / "frontend" / "src"
THEMES = {"light": LIGHT, "dark": DARK}


def test_contrast_ratio_matches_the_wcag_reference_values() -> None:
    assert contrast("#ffffff", "#000000") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic just-fails grey
    assert contrast("#2f6fdb", "#2f6fdb") == pytest.approx(1.0)
    assert contrast("#7aa7ff", "#ffffff") == pytest.approx(2.39, abs=0.01)  # the old dark primary under white text


@pytest.mark.parametrize("name", sorted(THEMES))
def test_config_toml_holds_the_same_theme_colours(name: str) -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    section = config["theme"][name]
    colours = THEMES[name]
    assert {k: v.lower() for k, v in section.items() if k.endswith("Color")} == {
        "primaryColor": colours.primary,
        "backgroundColor": colours.background,
        "secondaryBackgroundColor": colours.secondary_background,
        "textColor": colours.text,
    }


@pytest.mark.parametrize("name", sorted(THEMES))
def test_every_text_colour_reads_on_both_backgrounds(name: str) -> None:
    c = THEMES[name]
    for fg in (c.text, c.muted_text, c.primary):  # the primary is text too: slider values, the selected tab
        for bg in (c.background, c.secondary_background):
            assert contrast(fg, bg) >= TEXT_CONTRAST, (name, fg, bg, round(contrast(fg, bg), 2))
    assert contrast(c.on_primary, c.primary) >= TEXT_CONTRAST, (name, round(contrast(c.on_primary, c.primary), 2))


def _light_dark(css: str) -> set[tuple[str, str]]:
    return set(re.findall(r"light-dark\((#[0-9a-f]{6}), (#[0-9a-f]{6})\)", css))


def test_the_page_css_recolours_captions_chart_text_and_text_on_the_primary() -> None:
    css = theme.page_css()
    muted = (LIGHT.muted_text, DARK.muted_text)
    body_text = (LIGHT.text, DARK.text)
    assert _light_dark(css) == {muted, body_text, (LIGHT.on_primary, DARK.on_primary)}
    blocks = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", css))
    selectors_for = {}
    for selectors, body in blocks.items():
        selectors_for.setdefault(body.strip(), []).extend(s.strip() for s in selectors.split(","))
    chart_rules = selectors_for[f"fill: light-dark({muted[0]}, {muted[1]});"]
    for role in ("axis-label", "axis-title", "legend-label", "legend-title", "title-subtitle"):
        assert f'[data-testid="stVegaLiteChart"] .role-{role} text' in chart_rules
    assert selectors_for[f"fill: light-dark({body_text[0]}, {body_text[1]});"] == ['[data-testid="stVegaLiteChart"] .role-title-text text']
    caption_rules = selectors_for[f"color: light-dark({muted[0]}, {muted[1]});"]
    assert '[data-testid="stCaptionContainer"]' in caption_rules
    # Streamlit 1.67 also fades a caption with opacity 0.6 (2.5:1 on the sidebar): undone
    assert '[data-testid="stCaptionContainer"]' in selectors_for["opacity: 1;"]
    assert "<" not in css and "{{" not in css


# ---- chart text as drawn: the config ui.charts writes into every spec, per theme ---------------

# Vega-Lite properties that colour a chart's own text (axes, legends, facet headers, titles).
_TEXT_COLOUR_KEYS = ("labelColor", "titleColor", "subtitleColor")
_TEXT_BLOCKS = ("axis", "axisX", "axisY", "axisBand", "axisDiscrete", "axisQuantitative", "legend", "header", "title")


def _text_colours(node: object, path: str = "") -> list[tuple[str, str]]:
    """Every (where, colour) of chart text in a spec: the config's text blocks, and any axis,
    legend, header or title a builder wrote itself (datasets skipped)."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}"
            if key in ("datasets", "data", "values"):
                continue
            if key in _TEXT_COLOUR_KEYS or (key == "color" and path.rsplit(".", 1)[-1] in ("title", "header")):
                found.append((where, value))
            found += _text_colours(value, where)
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += _text_colours(item, f"{path}[{index}]")
    return found


def _drawn_charts() -> dict[str, dict]:
    """Real builders' specs (bars, lines, heat maps, a canvas chart, a concatenation)."""
    from tests.unit.test_chart_schema import BUILDERS
    from tests.unit.test_colour_not_alone import CATEGORICAL_BUILDERS
    from ui.charts import vectors

    charts = {name: build() for name, build in {**BUILDERS, **CATEGORICAL_BUILDERS}.items()}
    canvas = vectors.matrix_heatmap_vega(np.arange(12.0).reshape(3, 4) / 10, title="T", x_title="d", y_title="tok",
                                         value_title="v", y_labels=["a", "b", "c"])
    assert canvas["usermeta"]["embedOptions"]["renderer"] == "canvas"  # the CSS cannot reach this one's text
    return {**charts, "canvas heat map": canvas}


@pytest.mark.parametrize("name", sorted(THEMES))
def test_chart_text_reads_on_the_theme_background(name: str) -> None:
    """Axis labels and titles, legends, facet headers and chart titles, in the config ``vega``
    draws with (``style_vega``) for this theme: set (not Streamlit's grey #808495, 3.7:1 on
    white) and 4.5:1 or more on the theme's background, presenter mode too."""
    from ui.charts.common import style_vega

    background = THEMES[name].background
    checked = 0
    for chart, spec in _drawn_charts().items():
        for presenter in (False, True):
            styled = style_vega(spec, presenter=presenter, theme=name)
            config = styled["config"]
            for block in ("axis", "legend", "header"):
                assert {"labelColor", "titleColor"} <= set(config[block]), (chart, block, config[block])
            assert "color" in config["title"], (chart, config["title"])
            for where, colour in _text_colours(styled):
                ratio = contrast(colour, background)
                assert ratio >= TEXT_CONTRAST, (name, chart, where, colour, round(ratio, 2))
                checked += 1
    assert checked >= 7 * 2 * 20, checked  # every chart, both sizes, every text colour


def test_the_chart_text_colours_differ_by_theme_and_fail_on_the_other() -> None:
    """One grey cannot serve both themes: each theme's colours fail on the other's background
    (so a test that mixed them up would fail)."""
    from ui.charts.common import chart_text_colours

    light, dark = chart_text_colours("light"), chart_text_colours("dark")
    assert light["axis"]["labelColor"] == LIGHT.muted_text and dark["axis"]["labelColor"] == DARK.muted_text
    assert light["title"]["color"] == LIGHT.text and dark["title"]["color"] == DARK.text
    assert contrast(dark["axis"]["labelColor"], LIGHT.background) < TEXT_CONTRAST
    assert contrast(light["axis"]["labelColor"], DARK.background) < TEXT_CONTRAST
    assert contrast("#808495", LIGHT.background) < TEXT_CONTRAST  # Streamlit's own axis grey


def test_a_spec_drawn_outside_a_run_takes_the_light_theme() -> None:
    from ui.charts.common import current_theme, style_vega

    assert current_theme() == "light"
    assert style_vega({"mark": "bar"})["config"]["axis"]["labelColor"] == LIGHT.muted_text


def test_a_frame_document_has_the_pages_language_and_an_escaped_title() -> None:
    doc = theme.frame_document("<p>x</p>", "zh", "a <b> & c")
    assert doc.startswith('<!DOCTYPE html><html lang="zh-Hans">')
    assert "<title>a &lt;b&gt; &amp; c</title>" in doc and doc.endswith("<body><p>x</p></body></html>")


def test_html_lang_follows_the_page_language() -> None:
    assert theme.html_lang("zh") == "zh-Hans"
    assert theme.html_lang("en") == "en"
    assert theme.html_lang("<script>") == "en"
    from ui.i18n import LANGUAGES

    assert set(theme.HTML_LANG) == set(LANGUAGES)


# ---- the components' own CSS --------------------------------------------------------------------

def _mix(a: str, b: str, share_a: float) -> str:
    """CSS ``color-mix(in srgb, a share_a, b)``: a straight mix of the encoded channels."""
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x * share_a + y * (1 - share_a)):02x}" for x, y in zip(ca, cb))


def _css(name: str) -> str:
    return (COMPONENT_CSS / name).read_text(encoding="utf-8")


def _variables(css: str, selector: str) -> dict[str, str]:
    match = re.search(re.escape(selector) + r"\s*\{([^}]*)\}", css)
    assert match, selector
    return dict(re.findall(r"(--[\w-]+):\s*([^;]+);", re.sub(r"/\*.*?\*/", "", match.group(1), flags=re.S)))


def _muted(c: ThemeColours, declared: str) -> str:
    found = re.fullmatch(r"color-mix\(in srgb, var\(--fg\) (\d+)%, var\(--bg2\)\)", declared.strip())
    assert found, declared
    return _mix(c.text, c.secondary_background, int(found.group(1)) / 100)


@pytest.mark.parametrize("sheet, root", [("journey.css", ".tj"), ("space3d.css", ".s3")])
def test_component_muted_text_reads_on_both_backgrounds_in_both_themes(sheet: str, root: str) -> None:
    declared = _variables(_css(sheet), root)["--muted"]
    for name, c in THEMES.items():
        muted = _muted(c, declared)
        for bg in (c.background, c.secondary_background):
            assert contrast(muted, bg) >= TEXT_CONTRAST, (sheet, name, muted, bg)


def test_journey_marks_reach_three_to_one_and_text_on_the_accent_reads() -> None:
    css = _css("journey.css")
    light, dark = _variables(css, ".tj"), _variables(css, ".tj.dark")
    for var in ("--blue", "--orange"):
        for name, colours in (("light", light), ("dark", {**light, **dark})):
            bg = THEMES[name].background
            assert contrast(colours[var], bg) >= MARK_CONTRAST, (var, name, colours[var])
    assert re.search(r"\.tj-mlp\s*\{\s*fill:\s*var\(--orange\)", css)
    # the selected head: text in the background colour on the primary (white on #7aa7ff is 2.4:1)
    assert re.search(r"\.tj-head\.on\s*\{[^}]*background:\s*var\(--accent\);\s*color:\s*var\(--bg\)", css)
    for c in THEMES.values():
        assert contrast(c.background, c.primary) >= TEXT_CONTRAST


# Opacity below 1 fades text under 4.5:1; only these (not text, or disabled controls) may use it.
ALLOWED_OPACITY = {".tj-btn:disabled", ".s3-item.off .s3-swatch", ".tj-bar-row.cut .tj-bar"}


@pytest.mark.parametrize("sheet", ["journey.css", "space3d.css"])
def test_no_component_text_is_faded_with_opacity(sheet: str) -> None:
    css = re.sub(r"/\*.*?\*/", "", _css(sheet), flags=re.S)
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        value = re.search(r"(?<![\w-])opacity:\s*([\d.]+)", body)
        if value and float(value.group(1)) < 1:
            assert selectors.strip() in ALLOWED_OPACITY, (sheet, selectors.strip(), value.group(1))
