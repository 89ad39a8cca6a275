"""The app's colours in both themes, the CSS that applies them, and the page's ``lang``.

Streamlit draws several texts in fixed greys or faded with opacity, which fail WCAG 2.1 AA
contrast (captions and the sidebar's section labels 2.5–3.9:1, chart axis and legend text
#808495 3.7:1), and writes white on the primary colour, which in dark mode must be light to read
*as* text on the dark background (slider values, the selected tab). One set of colours per
theme lives here; ``.streamlit/config.toml`` holds the same values (tests/unit/test_contrast.py
checks that the two agree and every pair used for text reaches 4.5:1, chart marks 3:1).

The CSS picks a theme's colour with ``light-dark()``: Streamlit sets ``color-scheme`` on its
app container to the theme in use (light or dark, whatever the student picked), so one static
style sheet serves both themes and no server round trip is needed when the theme changes.

Example::

    contrast(LIGHT.muted_text, LIGHT.secondary_background)  # -> 5.67
    page_css()  # the static style sheet (no user text ever enters it)
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class ThemeColours:
    """One theme's colours, as ``#rrggbb``."""

    background: str  # the page (config.toml: backgroundColor)
    secondary_background: str  # the sidebar, inputs, chips (secondaryBackgroundColor)
    text: str  # body text (textColor)
    primary: str  # buttons, slider values, the selected tab (primaryColor); text on both backgrounds
    on_primary: str  # text written on the primary colour (primary buttons, multiselect chips)
    muted_text: str  # captions, sidebar section labels, chart axis/legend text, slider ends


# Light: Streamlit's own light greys, a primary blue dark enough for white text on it and for
# being text on the sidebar's grey, and captions darker than Streamlit's #828180.
LIGHT = ThemeColours(
    background="#ffffff",
    secondary_background="#f0f2f6",
    text="#31333f",
    primary="#2a64c9",
    on_primary="#ffffff",
    muted_text="#5c5f6b",
)
# Dark: the primary stays the light blue a dark page needs for its text uses; what is written
# on it is then the dark background colour (7.9:1), not white (2.4:1).
DARK = ThemeColours(
    background="#0e1117",
    secondary_background="#262730",
    text="#fafafa",
    primary="#7aa7ff",
    on_primary="#0e1117",
    muted_text="#b5b8c2",
)
THEMES = {"light": LIGHT, "dark": DARK}

TEXT_CONTRAST = 4.5  # WCAG 2.1 AA 1.4.3, normal-size text
MARK_CONTRAST = 3.0  # WCAG 2.1 AA 1.4.11, graphics that carry meaning (chart marks, control borders)


def relative_luminance(colour: str) -> float:
    """WCAG 2.1 relative luminance of ``#rrggbb``.

    Example: relative_luminance("#ffffff") -> 1.0
    """
    value = colour.lstrip("#")
    if len(value) != 6:
        raise ValueError(f"expected #rrggbb, got {colour!r}")
    channels = [int(value[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2.1 contrast ratio of two colours (1 to 21, order does not matter).

    Example: round(contrast("#ffffff", "#000000"), 1) -> 21.0
    """
    high, low = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _pick(field: str) -> str:
    """``light-dark(<light>, <dark>)`` for one colour of the palette."""
    return f"light-dark({getattr(LIGHT, field)}, {getattr(DARK, field)})"


# Vega's SVG gives axis, legend and title text a fill attribute; a style rule wins over it.
# Only these roles are recoloured: text marks on cells keep the colour their builder chose.
# The spec carries the same colours for the theme the browser reported on the last run
# (ui.charts.common.chart_text_colours: a canvas chart has no SVG to restyle); the rule keeps an
# SVG chart right at once when the student switches theme, before any rerun.
CHART_TEXT_ROLES = ("axis-label", "axis-title", "legend-label", "legend-title", "title-subtitle")
CHART_TITLE_ROLES = ("title-text",)  # in the body text colour


def page_css() -> str:
    """The style sheet that lifts Streamlit's low-contrast texts (static: no user text in it)."""
    muted, on_primary, text = _pick("muted_text"), _pick("on_primary"), _pick("text")
    chart_text = ",\n".join(f'[data-testid="stVegaLiteChart"] .role-{role} text' for role in CHART_TEXT_ROLES)
    chart_titles = ",\n".join(f'[data-testid="stVegaLiteChart"] .role-{role} text' for role in CHART_TITLE_ROLES)
    return f"""
[data-testid="stCaptionContainer"] {{ opacity: 1; }}
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p,
[data-testid="stSliderTickBarMin"], [data-testid="stSliderTickBarMax"],
[data-testid="InputInstructions"], [data-testid="stWidgetLabel"] [data-testid="stTooltipIcon"] {{ color: {muted}; }}
{chart_text} {{ fill: {muted}; }}
{chart_titles} {{ fill: {text}; }}
[data-testid^="stBaseButton-primary"]:not(:disabled), [data-testid^="stBaseButton-primary"]:not(:disabled) p,
[data-baseweb="tag"], [data-baseweb="tag"] span {{ color: {on_primary}; }}
"""


# Language codes for ``<html lang>``: a screen reader picks its voice from it (BCP 47).
HTML_LANG = {"en": "en", "zh": "zh-Hans"}

# Streamlit's own controls whose built-in English text the app cannot change: on a page in
# another language each gets our translated name (aria-label). The skip link also shows the
# translated text (CSS below); the file uploader's English text is hidden on 中文 pages
# (ui.page), which otherwise leaves its button with no name at all.
CHROME_LABELS = {
    '[data-testid="stSkipToContent"]': "a11y.skip_to_content",
    '[data-testid="stFileUploaderDropzone"] button': "a11y.upload",
}

# Runs in the app's own document (st.html's public ``unsafe_allow_javascript``). Its only values
# are a code from HTML_LANG and our own translated labels, all written as JSON: no user text.
# Streamlit draws its controls after this script and again on every rerun, so a single observer
# (replaced when the script runs again) labels them whenever the page changes.
_LANG_SCRIPT = """<script>
(function () {{
  var doc = document;
  doc.documentElement.setAttribute("lang", {code});
  var labels = {labels};
  var apply = function () {{
    Object.keys(labels).forEach(function (selector) {{
      doc.querySelectorAll(selector).forEach(function (el) {{
        var want = labels[selector];
        if (want) {{
          if (el.getAttribute("aria-label") !== want) {{ el.setAttribute("aria-label", want); el.setAttribute("data-tj-label", ""); }}
        }} else if (el.hasAttribute("data-tj-label")) {{
          el.removeAttribute("aria-label"); el.removeAttribute("data-tj-label");
        }}
      }});
    }});
  }};
  if (window.__tjChromeLabels) window.__tjChromeLabels.disconnect();
  var pending = false;
  window.__tjChromeLabels = new MutationObserver(function () {{
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {{ pending = false; apply(); }});
  }});
  window.__tjChromeLabels.observe(doc.body, {{childList: true, subtree: true}});
  apply();
}})();
</script>"""


def html_lang(lang: str) -> str:
    """The ``<html lang>`` value for one of the app's languages (English for an unknown one).

    Example: html_lang("zh") -> 'zh-Hans'
    """
    return HTML_LANG.get(lang, "en")


def _css_string(text: str) -> str:
    """A CSS string literal of our own text (quotes, backslashes and line ends escaped)."""
    return '"' + "".join(ch if ch.isalnum() or ch in " ·…-" or ord(ch) > 127 else f"\\{ord(ch):x} " for ch in text) + '"'


def translated_chrome_css(skip_label: str) -> str:
    """Streamlit's skip link with our translated text in place of its built-in English one."""
    return (f'[data-testid="stSkipToContent"] {{ font-size: 0 !important; }}\n'
            f'[data-testid="stSkipToContent"]::after {{ content: {_css_string(skip_label)}; font-size: 1rem; }}\n')


def _js(value: object) -> str:
    """A JavaScript literal (JSON) that cannot end the script element it sits in."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


LANG_CONTAINER_KEY = "tj_html_lang"  # its container (st-key-…) is hidden: the script draws nothing


def frame_document(body: str, lang: str, title: str) -> str:
    """A whole HTML document for ``st.iframe``: a frame's page needs its own language and title
    (a screen reader announces both). ``body`` is the app's own markup; ``title`` is escaped.

    Example: frame_document("<p>hi</p>", "zh", "链接").startswith('<!DOCTYPE html><html lang="zh-Hans">') -> True
    """
    from html import escape

    return (f'<!DOCTYPE html><html lang="{html_lang(lang)}"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title></head><body>{body}</body></html>")


def chrome_labels(lang: str) -> dict[str, str]:
    """Selector -> translated name for Streamlit's controls ('' on English pages: their own text).

    Example: chrome_labels("zh")['[data-testid="stSkipToContent"]'] -> '跳到主要内容'
    """
    from ui.i18n import translate

    return {selector: "" if lang == "en" else translate(key, lang) for selector, key in CHROME_LABELS.items()}


def apply(lang: str) -> None:
    """Add the contrast style sheet, set ``<html lang>`` to the page's language and name
    Streamlit's English-only controls in it."""
    labels = chrome_labels(lang)
    skip = labels['[data-testid="stSkipToContent"]']
    css = page_css() + (translated_chrome_css(skip) if skip else "")
    st.html(f'<style>{css} [class*="st-key-{LANG_CONTAINER_KEY}"] {{ display: none; }}</style>')
    # A key per language: a language switch mounts a new element, whose script then runs (an
    # element whose body merely changes does not run its script again).
    with st.container(key=f"{LANG_CONTAINER_KEY}_{lang}"):
        st.html(_LANG_SCRIPT.format(code=_js(html_lang(lang)), labels=_js(labels)), unsafe_allow_javascript=True)
