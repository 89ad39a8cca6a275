"""Token chips and the token-count curve, as Vega-Lite specs (no HTML, so user text is inert).

A chip is a coloured rectangle (``mark_rect``) with its token written on it (``mark_text``).
The same token always gets the same colour (a hash of its text picks from 48 light colours;
``chip_colors`` keeps two different tokens on one chart apart), so "est" in *newest* and in
*widest* visibly match, and different tokens never look alike among the first 48.

Speed: a page re-renders these on every step of a "play" animation. So each chart's *shape* is
built once (cached per set of titles) with named data and parameters, and every call only fills
in the data, the title and the parameter values of a shallow copy. Draw the returned dict with
``ui.charts.common.vega``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from core.text.bpe_view import display_width, layout_chips
from ui.charts import access, vl
from ui.charts.common import wrap_title
from ui.charts.vl import CJK_FONT

# Light fills keep the dark chip text readable in both the light and the dark theme. 48 hues
# (golden-angle steps, two lightness levels): a token's hash picks its preferred colour, and
# ``chip_colors`` moves a token that would share a colour on screen to the next free one.
def _light_palette(n: int = 48) -> tuple[str, ...]:
    import colorsys

    out = []
    for i in range(n):
        hue = (i * 0.618033988749895) % 1.0
        light, sat = (0.80, 0.70) if i % 2 == 0 else (0.70, 0.55)
        r, g, b = colorsys.hls_to_rgb(hue, light, sat)
        out.append(f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}")
    return tuple(out)


CHIP_PALETTE: tuple[str, ...] = _light_palette()
CHIP_TEXT_COLOR = "#1b1b1b"
HIGHLIGHT_STROKE = "#e8590c"  # orange: visible on white and on Streamlit's dark background
ROW_HEIGHT_PX = 34
MIN_LINE_WIDTH = 12.0  # character columns: a short word's chips do not stretch across the page
MAX_LINE_WIDTH = 60.0  # longer rows wrap, so chips stay wide enough to read their text
MAX_CHIP_COLUMNS = 24  # a longer token is shortened on its chip ("…"); the tooltip shows more
MAX_TOOLTIP_CHARS = 200
_CHIPS, _CURVE = "chips", "curve"  # dataset names inside the specs
Spec = dict[str, Any]


def chip_color(key: str) -> str:
    """A stable light colour for a token, the same on every rerun and every step.

    Example: chip_color("est") == chip_color("est")  # True
    """
    return CHIP_PALETTE[zlib.crc32(key.encode("utf-8")) % len(CHIP_PALETTE)]


def chip_colors(keys: Sequence[str]) -> dict[str, str]:
    """Colours for the tokens of one chart: each its hashed colour unless an earlier token on
    screen already has it, then the next free one. So the first ``len(CHIP_PALETTE)`` distinct
    tokens never share a colour, and a token keeps its colour as long as nothing before it
    claims that colour.

    Example: len(set(chip_colors(["a", "b", "c"]).values())) -> 3
    """
    colors: dict[str, str] = {}
    used: set[int] = set()
    size = len(CHIP_PALETTE)
    for key in keys:
        if key in colors:
            continue
        index = zlib.crc32(key.encode("utf-8")) % size
        if len(used) < size:
            while index in used:
                index = (index + 1) % size
        used.add(index)
        colors[key] = CHIP_PALETTE[index]
    return colors


@dataclass(frozen=True)
class Chip:
    """One token to draw.

    ``group`` is the row label (a word with its frequency, or a line of text); ``label`` the
    text on the chip; ``key`` decides the colour; ``details`` are extra tooltip values in the
    order of the chart's ``detail_titles``; ``highlight`` draws an orange outline.
    """

    group: str
    label: str
    key: str
    details: tuple[str, ...] = field(default_factory=tuple)
    highlight: bool = False


def shorten(label: str, columns: int = MAX_CHIP_COLUMNS) -> str:
    """Cut a label to at most ``columns`` screen columns, marking the cut with "…".

    Example: shorten("abcdef", 4) -> 'abc…'
    """
    if display_width(label) <= columns:
        return label
    out, used = [], 0
    for ch in label:
        w = display_width(ch)
        if used + w > columns - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def chip_records(chips: Sequence[Chip], line_width: float | None = None,
                 min_line_width: float = MIN_LINE_WIDTH) -> tuple[list[dict[str, Any]], float]:
    """Lay the chips out, one group after another, wrapping inside a group.

    Returns one record per chip and the line width used (in character columns). A wrapped
    group's continuation rows are labelled with invisible, unique em-space strings.

    Example: chip_records([Chip("low ×5", "low", "low")])[0][0]["row"] -> 'low ×5'
    """
    groups: dict[str, list[Chip]] = {}
    for chip in chips:
        groups.setdefault(chip.group, []).append(chip)
    if line_width is None:
        widest = max((sum(display_width(shorten(c.label)) + 1.4 for c in members) for members in groups.values()),
                     default=0.0)
        line_width = min(max(min_line_width, widest), max(MAX_LINE_WIDTH, min_line_width))
    colors = chip_colors([chip.key for chip in chips])
    records: list[dict[str, Any]] = []
    order = 0
    blanks = 0
    for group, members in groups.items():
        shown = [shorten(c.label) for c in members]
        places = layout_chips(shown, line_width=line_width)
        labels = [group]
        for _ in range(max(p.row for p in places)):
            blanks += 1
            labels.append("\u2003" * blanks)
        for index, (chip, place, short) in enumerate(zip(members, places, shown)):
            records.append({
                "row": labels[place.row],
                "order": order + place.row,
                "x0": place.x0,
                "x1": place.x1,
                "mid": (place.x0 + place.x1) / 2,
                "label": short,
                "full": chip.label[:MAX_TOOLTIP_CHARS] + ("…" if len(chip.label) > MAX_TOOLTIP_CHARS else ""),
                "fill": colors[chip.key],
                "stroke": HIGHLIGHT_STROKE if chip.highlight else "#ffffff",
                "stroke_width": 3.0 if chip.highlight else 1.0,
                "position": index,
                **{f"detail_{i}": value for i, value in enumerate(chip.details)},
            })
        order += len(labels)
    return records, float(line_width)


Y_TITLE_COLUMNS = 10  # a level y title above the row labels: lines of about this many columns
Y_TITLE_LINE_PX = 22  # its line height (room for the presenter's 18 px letters)


def y_title_lines(title: str) -> list[str]:
    """A chip chart's y title as short lines, written level above the row labels.

    Example: y_title_lines("Word") -> ['Word']; len(y_title_lines("Word × how often it occurs")) -> 3
    """
    return [line.strip() for line in wrap_title(title, Y_TITLE_COLUMNS).split("\n")]


@lru_cache(maxsize=64)
def _chips_template(x_title: str, y_title: str, token_title: str, detail_titles: tuple[str, ...]) -> Spec:
    """``token_chips``' spec without its data, title and width: a chip (rect) with its text on it."""
    x_scale = {"domainMax": {"expr": "line_width"}, "domainMin": 0, "nice": False, "zero": True}
    # The y title is written level, in short lines above the row labels (right-aligned with
    # them): a chart of one to a few rows is too flat for a rotated title (it was cut, and a
    # one-character "词" lay on its side), and beside the labels it took the chips' width.
    lines = y_title_lines(y_title)
    y_axis = {"domain": False, "labelFont": CJK_FONT, "labelFontSize": 12, "labelLimit": 220, "ticks": False,
              "titleAlign": "right", "titleAnchor": "end", "titleAngle": 0, "titleBaseline": "top",
              "titleLineHeight": Y_TITLE_LINE_PX, "titleX": 0,
              "titleY": -(len(lines) * Y_TITLE_LINE_PX + 4)}  # the last line ends 4 px above row 1

    def y() -> Spec:  # a fresh copy per layer
        return vl.field("row", "nominal", axis=dict(y_axis), sort={"field": "order", "op": "min"}, title=list(lines))

    def tooltip() -> list[Spec]:
        return [vl.tooltip("full", token_title)] + [vl.tooltip(f"detail_{i}", name)
                                                     for i, name in enumerate(detail_titles)]

    rects = {"mark": {"type": "rect", "cornerRadius": 5, "height": ROW_HEIGHT_PX - 8}, "encoding": {
        "fill": vl.field("fill", "nominal", scale=None), "stroke": vl.field("stroke", "nominal", scale=None),
        "strokeWidth": vl.field("stroke_width", "quantitative", scale=None), "tooltip": tooltip(),
        "x": vl.field("x0", "quantitative", axis={"domain": False, "grid": False, "labels": False, "ticks": False},
                      scale=dict(x_scale), title=x_title),
        "x2": {"field": "x1"}, "y": y()}}
    text = {"mark": {"type": "text", "color": CHIP_TEXT_COLOR, "font": CJK_FONT, "fontSize": 14}, "encoding": {
        "text": vl.field("label", "nominal"), "tooltip": tooltip(),
        "x": vl.field("mid", "quantitative", scale=dict(x_scale)), "y": y()}}
    # A step (px per row), not a fixed height: Streamlit 1.67 collapses a discrete axis whose
    # chart has a numeric height (all rows drawn on top of each other).
    return {"config": {"view": dict(vl.VIEW)}, "layer": [rects, text], "data": {"name": _CHIPS},
            "height": {"step": ROW_HEIGHT_PX}, "params": [{"name": "line_width", "value": MIN_LINE_WIDTH}],
            "title": "", "$schema": vl.SCHEMA_URL}


def token_chips(
    chips: Sequence[Chip],
    *,
    title: str,
    x_title: str,
    y_title: str,
    token_title: str,
    detail_titles: Sequence[str] = (),
    line_width: float | None = None,
    min_line_width: float = MIN_LINE_WIDTH,
) -> Spec:
    """Rows of coloured token chips (a Vega-Lite spec); hover a chip for its exact details.

    ``line_width`` (character columns) wraps long rows; without it the widest row sets the
    width, but never less than ``min_line_width`` (so a wide container keeps chips small).

    Example: token_chips([Chip("low ×5", "low", "low")], title="t", x_title="x", y_title="y", token_title="token")
    """
    if not chips:
        raise ValueError("no chips to draw")
    records, width = chip_records(chips, line_width, min_line_width)
    spec = dict(_chips_template(x_title, y_title, token_title, tuple(detail_titles)))
    spec["title"] = wrap_title(title)  # a phone shows a long title whole, on two lines
    spec["params"] = [{"name": "line_width", "value": width}]
    spec["datasets"] = {_CHIPS: records}
    # For a screen reader: the chips in order (the summary lists them), their details as a table.
    spec["usermeta"] = {access.HINT_KEY: access.hint(
        [{"full": r["full"], "position": r["position"], **{k: v for k, v in r.items() if k.startswith("detail_")}}
         for r in records], value="position", value_title="", items="full",
        labels=[("full", token_title)] + [(f"detail_{i}", name) for i, name in enumerate(detail_titles)])}
    return spec


@lru_cache(maxsize=64)
def _curve_template(x_title: str, total_title: str, per_word_title: str, vocab_title: str, points: bool) -> Spec:
    """``token_count_curve``'s spec without its data, title and parameter values."""
    def tooltip() -> list[Spec]:  # a fresh copy per layer
        return [vl.tooltip("merges", x_title, "quantitative"), vl.tooltip("vocab", vocab_title, "quantitative"),
                vl.tooltip("total", total_title, "quantitative"),
                vl.tooltip("per_word", per_word_title, "quantitative", format=".2f")]

    def x() -> Spec:
        return vl.field("merges", "quantitative", axis={"format": "d", "tickMinStep": 1},
                        scale={"nice": False, "zero": True}, title=x_title)

    def total(**extra: Any) -> Spec:
        return vl.field("total", "quantitative", scale={"domainMax": {"expr": "top"}, "domainMin": 0}, **extra)

    now = [{"filter": "datum.merges == current"}]
    total_line = {"mark": {"type": "line", "point": points},
                  "encoding": {"tooltip": tooltip(), "x": x(), "y": total(title=total_title)}}
    rule = {"mark": {"type": "rule", "color": HIGHLIGHT_STROKE, "size": 2, "strokeDash": [4, 3]},
            "encoding": {"tooltip": tooltip(), "x": vl.field("merges", "quantitative")}, "transform": list(now)}
    dot = {"mark": {"type": "point", "color": HIGHLIGHT_STROKE, "filled": True, "size": 120},
           "encoding": {"tooltip": tooltip(), "x": vl.field("merges", "quantitative"), "y": total()},
           "transform": list(now)}
    # Tokens per word = total / words: the same line, read on a second (right) axis.
    per_word = {"mark": {"type": "line", "opacity": 0}, "encoding": {
        "x": x(), "y": vl.field("per_word", "quantitative", axis={"orient": "right"},
                                scale={"domainMax": {"expr": "top_per_word"}, "domainMin": 0}, title=per_word_title)}}
    return {"config": {"view": dict(vl.VIEW)}, "layer": [{"layer": [total_line, rule, dot]}, per_word],
            "data": {"name": _CURVE}, "height": 280,
            "params": [{"name": "current", "value": 0}, {"name": "top", "value": 1}, {"name": "top_per_word", "value": 1}],
            "resolve": {"scale": {"y": "independent"}}, "title": "", "$schema": vl.SCHEMA_URL}


def token_count_curve(
    merges: Sequence[int],
    totals: Sequence[int],
    *,
    words: int,
    vocab_sizes: Sequence[int],
    current: int,
    title: str,
    x_title: str,
    total_title: str,
    per_word_title: str,
    vocab_title: str,
) -> Spec:
    """Total tokens (left axis) and tokens per word (right axis) against merges learned.

    Tokens per word is total / words, so one line serves both axes; the two scales are
    aligned so it is the same line read in two units. A rule and a dot mark ``current``.

    Example: token_count_curve([0, 1], [74, 67], words=13, vocab_sizes=[11, 12], current=1, title="t",
             x_title="m", total_title="tok", per_word_title="tpw", vocab_title="v")
    """
    if not merges or not len(merges) == len(totals) == len(vocab_sizes):
        raise ValueError("merges, totals and vocab_sizes must be non-empty and of equal length")
    if words <= 0:
        raise ValueError(f"words must be positive, got {words}")
    records = [{"merges": int(m), "total": int(t), "per_word": t / words, "vocab": int(v)}
               for m, t, v in zip(merges, totals, vocab_sizes)]
    top = max(int(t) for t in totals) * 1.05
    spec = dict(_curve_template(x_title, total_title, per_word_title, vocab_title, len(records) <= 60))
    spec["title"] = wrap_title(title)  # a phone shows a long title whole, on two lines
    spec["params"] = [{"name": "current", "value": int(current)}, {"name": "top", "value": top},
                      {"name": "top_per_word", "value": top / words}]
    spec["datasets"] = {_CURVE: records}
    return spec
