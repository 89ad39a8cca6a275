"""Chart builders shared by several pages."""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ui.charts import vl
from ui.charts.vl import CELL_TEXT_LIMIT, CJK_FONT, SEQUENTIAL_BLUES  # noqa: F401  (re-exported)
from ui.presenter import PRESENTER_KEY, presenter_on  # noqa: F401  (re-exported: pages import them from here)


def heatmap(
    matrix: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_title: str,
    scheme: str = "blues",
    diverging: bool = False,
    value_format: str = ".3f",
    show_values: bool = False,
    cell_size: int | None = None,
) -> dict[str, Any]:
    """A labelled matrix. NaN or ±inf cells (e.g. masked scores) are drawn grey.

    Example: heatmap(np.eye(2), ["a", "b"], ["a", "b"], title="I", x_title="k", y_title="q", value_title="w")
    """
    matrix = np.asarray(matrix, dtype=float)
    n_rows, n_cols = matrix.shape
    if len(row_labels) != n_rows or len(col_labels) != n_cols:
        raise ValueError(f"labels {len(row_labels)}×{len(col_labels)} do not fit matrix {n_rows}×{n_cols}")
    cells = matrix.tolist()
    rows = [{"row": r, "col": c, "value": vl.json_number(cells[i][j]), "shown": _cell_text(cells[i][j], value_format)}
            for i, r in enumerate(row_labels) for j, c in enumerate(col_labels)]
    finite = matrix[np.isfinite(matrix)]
    if diverging:
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        scale: dict[str, Any] = {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    else:  # the default blues start light, not white: 0 stays visible on the dark theme
        scale = {"scheme": dict(vl.SEQUENTIAL_BLUES) if scheme == "blues" else scheme}
    x = vl.field("col", "nominal", axis={"labelAngle": -45, "labelLimit": 120, "labelOverlap": n_cols > 32},
                 sort=list(col_labels), title=x_title)
    y = vl.field("row", "nominal", axis={"labelLimit": 160, "labelOverlap": n_rows > 32}, sort=list(row_labels),
                 title=y_title)
    colour = {"condition": {"test": "isValid(datum.value)",
                            **vl.field("value", "quantitative", scale=scale, title=value_title)},
              "value": "#9e9e9e"}
    layers = [{"mark": {"type": "rect"}, "encoding": {
        "color": colour, "tooltip": [vl.tooltip("row", y_title), vl.tooltip("col", x_title),
                                     vl.tooltip("shown", value_title)], "x": x, "y": y}}]
    if show_values:
        layers.append({"mark": {"type": "text", "fontSize": 11}, "encoding": {
            "color": {"value": "#111111"}, "text": vl.field("shown", "nominal"), "x": x, "y": y}})
    # Steps, not pixels: a layered chart with a pixel size collapses in Streamlit 1.67.
    size = {"step": cell_size} if cell_size else None
    out = vl.spec({"layer": layers}, {vl.TABLE: rows}, title=title, height=size, width=size, data=vl.TABLE,
                  autosized=False)
    out["config"] = {"view": dict(vl.VIEW)}  # the theme's font comes with ``vega``
    return out


def _cell_text(value: float, value_format: str) -> str:
    """A cell's text: the number, or −∞ / ∞ / — where there is none."""
    if math.isfinite(value):
        return format(value, value_format)
    return "−∞" if value < 0 else "∞" if value > 0 else "—"


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    x_title: str,
    y_title: str,
    value_format: str = ".3f",
    highlight: Sequence[bool] | None = None,
    horizontal: bool = True,
) -> dict[str, Any]:
    """Bars in the given order, optionally highlighting some (e.g. tokens that survive top-k).

    Example: bar_chart(["a", "b"], [0.7, 0.3], title="p", x_title="p", y_title="token", highlight=[True, False])
    """
    shown = [format(float(v), value_format) for v in values]
    marks = list(highlight) if highlight is not None else [True] * len(shown)
    rows = [{"label": label, "value": vl.json_number(v), "shown": text, "highlight": bool(h)}
            for label, v, text, h in zip(labels, values, shown, marks)]
    label_axis = {"axis": {"labelLimit": 160}, "field": "label", "sort": list(labels),
                  "title": y_title if horizontal else x_title, "type": "nominal"}
    value_axis = {"field": "value", "title": x_title if horizontal else y_title, "type": "quantitative"}
    spec: dict[str, Any] = {
        "config": {"view": {"continuousWidth": 300, "continuousHeight": 300}},
        "data": {"name": "table"},
        "mark": {"type": "bar"},
        "encoding": {
            "opacity": {"condition": {"test": "datum.highlight", "value": 1.0}, "value": 0.3},
            "tooltip": [{"field": "label", "type": "nominal"},
                        {"field": "shown", "title": x_title if horizontal else y_title, "type": "nominal"}],
            "x": value_axis if horizontal else label_axis,
            "y": label_axis if horizontal else value_axis,
        },
    }
    if horizontal:  # 24 px a bar: at Vega's 20 every other label was hidden as overlapping
        spec["height"] = {"step": 24}
    spec["title"] = title
    spec["$schema"] = vl.SCHEMA_URL
    spec["datasets"] = {"table": rows}
    return spec


# --- one theme for every chart: readable defaults, larger fonts in presenter mode ---------------
#
# Chart builders stay pure and cached (shared by every session); the font sizes are applied
# when a chart is drawn, from the session's presenter switch, by ``vega`` / ``vega_cached``
# below. Every page draws its charts through them (the custom components size their own text).



@dataclass(frozen=True)
class Fonts:
    """Pixel sizes for one theme."""

    axis_label: int  # tick labels, token labels on axes
    axis_title: int
    title: int  # chart titles and subplot titles
    legend_label: int
    legend_title: int
    mark_text: int  # text written on marks (token labels on cells, values beside bars)


# Readable from the back of a room at 1366×768: a little above Streamlit's 12 / 14 px.
DEFAULT_FONTS = Fonts(axis_label=13, axis_title=14, title=16, legend_label=13, legend_title=14, mark_text=12)
PRESENTER_FONTS = Fonts(axis_label=16, axis_title=18, title=20, legend_label=16, legend_title=18, mark_text=16)

def fonts(presenter: bool | None = None) -> Fonts:
    return PRESENTER_FONTS if (presenter_on() if presenter is None else presenter) else DEFAULT_FONTS


def current_theme() -> str:
    """The student's theme ("light" or "dark") as the browser reported it for this run; "light"
    outside a run or when the browser has not said."""
    from ui.theme import THEMES

    try:
        import streamlit as st

        kind = st.context.theme.type
    except Exception:  # noqa: BLE001  (no script run: a test, a worker thread)
        kind = None
    return kind if kind in THEMES else "light"


def chart_text_colours(theme: str = "light") -> dict[str, dict[str, str]]:
    """The theme's text colours for a chart's axes, legends, facet headers and title.

    Streamlit's own chart theme writes axis and legend text in #808495 (3.7:1 on white); a
    chart drawn on a canvas cannot be recoloured by the page's CSS, so the colours travel in
    the spec: the theme's muted text for labels, its body text for the title (4.5:1 or more on
    the theme's background: tests/unit/test_contrast.py). No single grey reads 4.5:1 on both
    white and #0e1117, hence one set per theme.

    Example: chart_text_colours("dark")["axis"]["labelColor"] -> '#b5b8c2'
    """
    from ui.theme import THEMES

    colours = THEMES[theme]
    muted = colours.muted_text
    return {"axis": {"labelColor": muted, "titleColor": muted}, "header": {"labelColor": muted, "titleColor": muted},
            "legend": {"labelColor": muted, "titleColor": muted},
            "title": {"color": colours.text, "subtitleColor": muted}}


def vega_config(presenter: bool = False, theme: str = "light") -> dict[str, Any]:
    """The Vega-Lite ``config`` block for a theme (merged over Streamlit's own theme)."""
    f = fonts(presenter)
    colours = chart_text_colours(theme)
    return {
        "font": CJK_FONT,
        # Streamlit's theme cuts every axis label at 100 px ("MHA（40 个…"); Vega's own 180 px
        # (more for the presenter's larger letters). A dense axis sets its own limit.
        "axis": {"labelFontSize": f.axis_label, "titleFontSize": f.axis_title,
                 "labelLimit": 230 if presenter else 180, **colours["axis"]},
        "header": {"labelFontSize": f.axis_label, "titleFontSize": f.axis_title, **colours["header"]},
        "legend": {"labelFontSize": f.legend_label, "titleFontSize": f.legend_title, **colours["legend"]},
        "title": {"fontSize": f.title, **colours["title"]},
        "lineBreak": "\n",  # a long title is cut into lines at "\n" (wrap_title)
        "text": {"fontSize": f.mark_text},
    }


# Explicit sizes inside a spec (e.g. a dense axis at 9 px) win over the config; presenter mode
# raises each to its theme's minimum.
_VEGA_MINIMUM = {"labelFontSize": "axis_label", "titleFontSize": "axis_title", "fontSize": "mark_text"}
_SKIP = frozenset({"datasets", "data", "values"})


def _raise_sizes(node: Any, f: Fonts) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in _SKIP:
                out[key] = value
            elif key in _VEGA_MINIMUM and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = max(value, getattr(f, _VEGA_MINIMUM[key]))
            else:
                out[key] = _raise_sizes(value, f)
        return out
    if isinstance(node, list):
        return [_raise_sizes(item, f) for item in node]
    return node


TITLE_LINE_COLUMNS = 34  # a Vega title is cut to the plot's width ("…"): ~34 columns fit a phone
_NO_LINE_START = frozenset("，。、：；！？）)]】》,.:;!?")
_GLUED_OPERATORS = frozenset(("=", "≈", "×", "+", "−", "-", "<", ">", "≤", "≥", "→"))  # "T = 2.50" stays whole


# A short CJK run set off by spaces ("离 布鲁塞尔 − 比利时 + 日本") is a token or a word the
# title quotes: it stays on one line ("比利 / 时" would read as two words).
_SPACED_CJK_RUN = re.compile(r"(?:(?<= )|^)[\u3400-\u9fff\uf900-\ufaff]{2,8}(?= |$)")


def _glued_positions(text: str) -> frozenset[int]:
    """Indexes of characters that continue a space-delimited CJK run (never a line start)."""
    if " " not in text:
        return frozenset()
    return frozenset(i for m in _SPACED_CJK_RUN.finditer(text) for i in range(m.start() + 1, m.end()))


def _title_units(text: str, keep_runs: bool = True) -> list[str]:
    """Pieces a title may break between: a Latin word with its trailing spaces, one CJK
    character, or a short CJK run set off by spaces (with any closing punctuation that must
    not start a line; an opening bracket or an operator such as "=" stays with what follows
    it)."""
    from core.text.bpe_view import display_width

    glued = _glued_positions(text) if keep_runs else frozenset()
    units: list[str] = []
    for index, ch in enumerate(text):
        if units and (index in glued or ch in _NO_LINE_START or ch == " " or units[-1][-1] in "（(【《“"
                      or ch in _GLUED_OPERATORS or units[-1].rstrip()[-1:] in _GLUED_OPERATORS
                      or (display_width(ch) == 1 and not units[-1].endswith(" ") and display_width(units[-1][-1]) == 1)):
            units[-1] += ch
        else:
            units.append(ch)
    return units


@lru_cache(maxsize=2048)
def wrap_title(text: str, columns: int = TITLE_LINE_COLUMNS) -> str:
    """A long chart title cut into balanced lines of at most ~``columns`` screen columns, joined
    by "\\n" (the theme's ``lineBreak``), so a phone shows all of it instead of cutting it with
    "…". Spaces stay at the ends of lines: the text without the "\\n"s is the original. Every
    chart drawn through ``vega`` gets its titles wrapped (``style_vega``); tests that look a
    chart up by its title text compare it with the "\\n"s removed.

    Example: wrap_title("short") -> 'short'; wrap_title("word " * 20).count("\n") -> 2
    """
    from core.text.bpe_view import display_width

    total = display_width(text)
    if total <= columns:
        return text
    lines_needed = -(-total // columns)
    for keep_runs in (True, False):  # a spaced CJK run that cannot fit a line is cut after all
        units = _title_units(text, keep_runs)
        balanced = _fill(units, min(columns, -(-total // lines_needed) + 2))
        # A long unbreakable piece can make balanced lines need one more line than full ones.
        lines = balanced if len(balanced) <= lines_needed else _fill(units, columns)
        if all(display_width(line.rstrip()) <= columns for line in lines):
            break
    return "\n".join(lines)


def _fill(units: Sequence[str], width: int) -> list[str]:
    """Units packed greedily into lines of at most ``width`` columns (a longer unit alone)."""
    from core.text.bpe_view import display_width

    lines: list[str] = [""]
    for unit in units:
        if lines[-1] and display_width((lines[-1] + unit).rstrip()) > width:
            lines.append("")
        lines[-1] += unit
    return [line for line in lines if line]


def _wrapped(title: Any) -> Any:
    """A title (a string or ``{"text": ...}``) with long text wrapped; a title that already
    has line breaks (a builder wrapped it, or a list of lines) is left as it is."""
    if isinstance(title, str):
        return title if "\n" in title else wrap_title(title)
    if isinstance(title, dict) and isinstance(title.get("text"), str) and "\n" not in title["text"]:
        return {**title, "text": wrap_title(title["text"])}
    return title


_AXIS_CHANNELS = ("x", "y")
AXIS_TITLE_COLUMNS = 26  # an axis title may not be longer than its axis: ~170 px of a phone's plot
_SUB_CHARTS = ("layer", "hconcat", "vconcat", "concat", "spec")


def _wrapped_axes(encoding: Any) -> Any:
    """An encoding whose long x/y axis titles are cut into lines (a list of strings: Vega draws
    one line each), so a phone does not cut them at the axis' length."""
    if not isinstance(encoding, dict):
        return encoding
    from core.text.bpe_view import display_width

    out = encoding
    for channel in _AXIS_CHANNELS:
        field = encoding.get(channel)
        title = field.get("title") if isinstance(field, dict) else None
        if isinstance(title, str) and "\n" not in title:
            lines = wrap_title(title, AXIS_TITLE_COLUMNS)
            if "\n" in lines:
                out = {**out, channel: {**field, "title": lines.split("\n")}}
            elif (channel == "y" and display_width(title) <= 4 and any(display_width(ch) == 2 for ch in title)
                  and isinstance(field.get("axis", {}), dict) and "titleAngle" not in field.get("axis", {})):
                # A one- or two-character Chinese y title ("层", "头", "词元") turned on its side
                # reads as a stray glyph: it is written level beside the labels.
                axis = {**field.get("axis", {}), "titleAngle": 0, "titleAlign": "right", "titleBaseline": "middle"}
                out = {**out, channel: {**field, "axis": axis}}
    return out


def wrap_titles(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with its title, the titles of its sub-charts (layers, concatenations, a facet's
    spec) and long x/y axis titles wrapped for a phone (``wrap_title``). Only what changes is
    copied; the cached original is never changed.

    Example: wrap_titles({"title": "word " * 20})["title"].count("\n") -> 2
    """
    out = spec
    if "title" in spec:
        title = _wrapped(spec["title"])
        if title is not spec["title"] and title != spec["title"]:
            out = {**out, "title": title}
    if "encoding" in spec:
        encoding = _wrapped_axes(spec["encoding"])
        if encoding is not spec["encoding"]:
            out = {**out, "encoding": encoding}
    for key in _SUB_CHARTS:
        children = spec.get(key)
        if isinstance(children, list):
            wrapped = [wrap_titles(child) if isinstance(child, dict) else child for child in children]
            if any(a is not b for a, b in zip(wrapped, children)):
                out = {**out, key: wrapped}
        elif isinstance(children, dict):
            child = wrap_titles(children)
            if child is not children:
                out = {**out, key: child}
    return out


def style_vega(spec: dict[str, Any], presenter: bool | None = None, theme: str | None = None) -> dict[str, Any]:
    """A themed copy of a Vega-Lite spec (the cached original is never changed): font sizes for
    the presenter switch, text colours for ``theme`` (default: the student's, ``current_theme``).

    Example: style_vega({"mark": "bar"}, presenter=True)["config"]["axis"]["labelFontSize"] -> 16
    """
    from ui.charts.access import without_hint

    on = presenter_on() if presenter is None else presenter
    f = fonts(on)
    spec = wrap_titles(without_hint(spec))  # a long title shows whole on a phone, on two or three lines
    # (the builders' screen-reader hint is read on the server, ``chart_summary``: not sent)
    styled = _raise_sizes({k: v for k, v in spec.items() if k != "datasets"}, f) if on else dict(spec)
    if "datasets" in spec:
        styled["datasets"] = spec["datasets"]
    config = dict(spec.get("config", {}))
    for key, value in vega_config(on, theme or current_theme()).items():
        if isinstance(value, dict):
            merged = dict(config.get(key, {}))
            for sub, size in value.items():
                merged[sub] = max(size, merged.get(sub, 0)) if on and isinstance(size, int) else merged.get(sub, size)
            config[key] = merged
        else:
            config.setdefault(key, value)
    styled["config"] = config
    return styled


def vega(spec: dict[str, Any], *, live: bool = False, **kwargs: Any) -> Any:
    """Draw a Vega-Lite spec (a dict from a ``ui.charts`` builder) with the session's theme.

    Takes ``st.vega_lite_chart``'s keyword arguments (``width``, ``key``, ``on_select``, ...)
    and returns what it returns (the selection state when ``on_select`` is given).

    ``live=True`` for a chart that a control redraws: its title and parameter values travel
    in its data (``ui.charts.live``), so the spec text stays the same from move to move and the
    browser swaps the data into the chart it has instead of building a new one.
    """
    import streamlit as st

    from ui.chart_table import show_chart_table
    from ui.i18n import current_language, translate

    lang = current_language()
    facts, summary = chart_summary(spec, lang)
    styled = style_vega(spec)
    # Vega writes the description into the chart's aria-label (its name for a screen reader).
    # A live chart keeps a fixed one: its spec text must stay the same from move to move (the
    # summary of this move is in the text under it).
    styled["description"] = translate("charts.a11y.live_name", lang) if live else summary
    if live:
        from ui.charts.live import live_spec

        styled = live_spec(styled)
    if styled.get("datasets"):
        styled["datasets"] = {name: arrow_bytes(data) for name, data in styled["datasets"].items()}
    drawn = st.vega_lite_chart(styled, **kwargs)
    show_chart_table(facts, summary)
    return drawn


_SUMMARIES: dict[tuple[int, str], tuple[dict[str, Any], Any, str]] = {}
_SUMMARIES_LIMIT = 64  # the entries hold their specs: few, so an evicted shared spec is not kept long


def chart_summary(spec: dict[str, Any], lang: str) -> tuple[Any, str]:
    """A chart's facts (``ui.charts.access``) and its one-sentence summary in ``lang``.

    Remembered per spec object (specs are shared and memoised: an unchanged chart costs a
    lookup); the entry holds the spec, so its id cannot be reused while it is remembered.

    Example: chart_summary(bar_chart(["a"], [1.0], title="p", x_title="p", y_title="t"), "en")[1]
        -> "p. Highest p: t a (1.000)."
    """
    from ui.charts.access import chart_facts, summary_sentence

    key = (id(spec), lang)
    with _ARROW_LOCK:
        hit = _SUMMARIES.get(key)
    if hit is not None and hit[0] is spec:
        return hit[1], hit[2]
    facts = chart_facts(spec)
    summary = summary_sentence(facts, lang)
    with _ARROW_LOCK:
        if len(_SUMMARIES) >= _SUMMARIES_LIMIT:
            _SUMMARIES.pop(next(iter(_SUMMARIES)))
        _SUMMARIES[key] = (spec, facts, summary)
    return facts, summary


_ARROW: dict[int, tuple[Any, bytes]] = {}
_ARROW_LOCK = threading.Lock()


def arrow_bytes(data: Any) -> Any:
    """A chart dataset as the Arrow IPC bytes Streamlit sends, converted once per shared object.

    Streamlit converts every dataset (records or a DataFrame) to Arrow on every rerun; for a
    dataset that is the same object rerun after rerun (a shared, memoised spec) the bytes are
    remembered for as long as that object lives (a weak reference), so a slider elsewhere
    costs a lookup. Objects that cannot be weakly referenced (plain lists) are converted
    every time, exactly as before. GeoJSON-like dicts and bytes pass through unchanged.
    """
    if isinstance(data, (bytes, bytearray, dict)):
        return data
    from streamlit import dataframe_util

    key = id(data)
    with _ARROW_LOCK:
        hit = _ARROW.get(key)
    if hit is not None and hit[0]() is data:
        return hit[1]
    table = _rows_table(data)
    converted = dataframe_util.convert_anything_to_arrow_bytes(data if table is None else table)
    try:
        ref = weakref.ref(data, lambda _ref, key=key: _ARROW.pop(key, None))
    except TypeError:
        return converted
    with _ARROW_LOCK:
        _ARROW[key] = (ref, converted)
    return converted


def _rows_table(data: Any) -> Any:
    """A dataset of row dicts (what the dict chart builders write) as an Arrow table, column by
    column, or None for anything else (Streamlit converts that as before).

    Streamlit converts a list of rows through a pandas data frame: 1 ms for a small chart, 6 ms
    for the 48 × 48 causal mask, on every draw. Arrow reads the rows directly in a tenth of that;
    the columns are the first row's (a later row may lack one: null, as the data frame had NaN
    or None) and get the same types (text, float64, int64, bool). Rows with keys the first row
    lacks, or values Arrow cannot type, go the old way.
    """
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        return None
    columns = data[0].keys()
    if not all(type(row) is dict and row.keys() <= columns for row in data):
        return None
    import pyarrow as pa

    try:  # column by column: several times faster than pa.Table.from_pylist on thousands of rows
        return pa.table({name: [row.get(name) for row in data] for name in columns})
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def vega_cached(builder: Any, args: tuple = (), kwargs: dict[str, Any] | None = None, **chart_kwargs: Any) -> Any:
    """``vega(builder(*args, **kwargs))`` with the chart's spec built once per input.

    The spec is kept (shared, read-only) and a rerun that draws the same chart costs a lookup
    instead of a rebuild. ``chart_kwargs`` go to ``st.vega_lite_chart``.

    Example: draw.vega_cached(head_picker, (layers, heads, labels, scores), dict(title="t", ...), key="pick")
    """
    return vega(vega_spec_cached(builder, args, kwargs), **chart_kwargs)


def vega_spec_cached(builder: Any, args: tuple = (), kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Vega-Lite spec of ``builder(*args, **kwargs)``, built once per input and shared read-only."""
    from serving.registry import memo

    @memo(maxsize=256)  # bounded by bytes too (serving.registry)
    def build(builder: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        return builder(*args, **kwargs)

    return build(builder, tuple(args), dict(kwargs or {}))
