"""WCAG 2.1 AA contrast in both themes: text 4.5:1, meaningful marks 3:1.

Reads the colours where they are set: ``.streamlit/config.toml`` (Streamlit's theme), ``ui.theme``
(the style sheet that lifts Streamlit's low-contrast texts, chart axis and legend text included)
and the components' CSS variables (``ui/components/frontend/src/*.css``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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
    assert _light_dark(css) == {muted, (LIGHT.on_primary, DARK.on_primary)}
    blocks = dict(re.findall(r"([^{}]+)\{([^{}]*)\}", css))
    selectors_for = {}
    for selectors, body in blocks.items():
        selectors_for.setdefault(body.strip(), []).extend(s.strip() for s in selectors.split(","))
    chart_rules = selectors_for[f"fill: light-dark({muted[0]}, {muted[1]});"]
    for role in ("axis-label", "axis-title", "legend-label", "legend-title"):
        assert f'[data-testid="stVegaLiteChart"] .role-{role} text' in chart_rules
    caption_rules = selectors_for[f"color: light-dark({muted[0]}, {muted[1]});"]
    assert '[data-testid="stCaptionContainer"]' in caption_rules
    # Streamlit 1.67 also fades a caption with opacity 0.6 (2.5:1 on the sidebar): undone
    assert '[data-testid="stCaptionContainer"]' in selectors_for["opacity: 1;"]
    assert "<" not in css and "{{" not in css


def test_the_chart_theme_sets_no_text_colour_of_its_own() -> None:
    """Axis and legend text take the page CSS's colour; a colour in the Vega config would be one
    colour for both themes (no grey reads 4.5:1 on both white and #0e1117)."""
    from ui.charts.common import vega_config

    for presenter in (False, True):
        flat = repr(vega_config(presenter))
        assert "Color" not in flat and "fill" not in flat


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
