"""What a screen reader says about a chart: its name, a one-sentence summary for this prompt,
and its numbers as a table.

Read from the finished Vega-Lite spec itself, so every builder gets it without a line of its
own: the chart's name is its title; the value is the quantitative field the chart encodes (a
heat map's colour, a bar's length, a line's height), the labels are the other encoded fields
(token, query/key, series); the summary names the row with the largest value, with the text
its tooltip shows ("Highest weight: query 它, key 苹果 (0.620)"); the table's columns are the
tooltip's (the exact values a sighted student reads on hover), else the encoded fields.

A builder whose numbers are not in a dataset (the all-heads grid drawn as one image) or that
knows a better reading puts ``usermeta["tj_a11y"]`` in its spec (``hint``): rows of its own,
which field is the value and which label it; ``vega`` removes it before the spec is sent.

Pure: no Streamlit. ``ui.chart_table`` draws the result, ``ui.charts.common.vega`` sets the
summary as the spec's ``description`` (Vega writes it into the chart's ``aria-label``).

Example:
    facts = chart_facts(spec)  # ChartFacts(name="p(next)", value_title="p", best=[("token", "cat")], ...)
    summary_sentence(facts, "en") -> "p(next). Highest p: token cat (0.700)."
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HINT_KEY = "tj_a11y"  # usermeta key a builder may fill (see ``hint``)
ITEMS_IN_SUMMARY = 24  # a list summary names this many things, then says how many more
TABLE_ROW_LIMIT = 200  # rows written into the table: a 48 × 48 heat map would be 2,304 (the note says so)
_VALUE_CHANNELS = ("color", "x", "y", "theta", "size")
_LABEL_CHANNELS = ("y", "x", "color", "row", "column", "facet", "detail", "shape", "strokeDash")
_SUB_VIEWS = ("layer", "hconcat", "vconcat", "concat")


@dataclass(frozen=True)
class ChartFacts:
    """What the summary and the table of one chart say (all text already as shown)."""

    name: str  # the chart's title, on one line
    value_title: str = ""  # what the value is ("weight", "p")
    best: tuple[tuple[str, str], ...] = ()  # (label title, label) of the row with the largest value
    best_value: str = ""  # that value as the chart writes it
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()  # at most TABLE_ROW_LIMIT
    total_rows: int = 0
    items: tuple[str, ...] = ()  # a chart of things, not of amounts (token chips): what it shows, in order
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def hint(rows: Sequence[Mapping[str, Any]], *, value: str, value_title: str,
         labels: Sequence[tuple[str, str]], shown: str | None = None, summary_only: bool = False,
         items: str | None = None) -> dict[str, Any]:
    """A builder's own reading of its chart, for ``usermeta["tj_a11y"]``: ``rows`` (plain
    dicts), the ``value`` field (largest = the one the summary names), ``labels`` as
    (field, title) pairs and ``shown``, the field with the value's text (else it is formatted).
    ``summary_only``: these rows make the summary (e.g. the last query's row of an attention
    map), the table still shows every number the chart draws. ``items`` names a field whose
    values the summary lists in order instead (a chart of things, e.g. token chips).

    Example: hint([{"head": "L0 H1", "w": 0.6}], value="w", value_title="weight", labels=[("head", "head")])
    """
    def plain(item: Any) -> Any:  # numpy scalars as Python numbers: the hint is plain JSON
        return item.item() if hasattr(item, "item") and not isinstance(item, (str, bytes)) else item

    return {"rows": [{k: plain(v) for k, v in row.items()} for row in rows], "value": value, "value_title": value_title,
            "labels": [list(pair) for pair in labels], "shown": shown, "summary_only": bool(summary_only),
            "items": items}


def title_text(title: Any) -> str:
    """A Vega-Lite title (a string, lines, or ``{"text": ...}``) as one line of text.

    Example: title_text({"text": ["Attention of", "layer 0"]}) -> "Attention of layer 0"
    """
    if isinstance(title, Mapping):
        title = title.get("text", "")
    if isinstance(title, (list, tuple)):
        title = " ".join(str(line) for line in title)
    if not isinstance(title, str):
        return ""
    return " ".join(title.replace("\n", " ").split())


def _column_title(channel: Mapping[str, Any]) -> str:
    title = channel.get("title")
    text = title_text(title) if title is not None else ""
    return text or str(channel.get("field", ""))  # a blank axis title (" ") still names its column


def _encoded_field(channel: Any) -> tuple[str, str, Mapping[str, Any]] | None:
    """(field, type, the channel dict) of a channel on a field, a condition's field included."""
    if not isinstance(channel, Mapping):
        return None
    if isinstance(channel.get("field"), str):
        return channel["field"], str(channel.get("type", "")), channel
    condition = channel.get("condition")
    if isinstance(condition, Mapping) and isinstance(condition.get("field"), str):
        return condition["field"], str(condition.get("type", "")), condition
    return None


def _views(node: Mapping[str, Any], data: Any = None) -> list[tuple[Mapping[str, Any], Any]]:
    """Every (view with an encoding, its data: a dataset name or inline rows), depth first."""
    own = node.get("data")
    if isinstance(own, Mapping):
        data = own.get("name") if "name" in own else own.get("values", data)
    found: list[tuple[Mapping[str, Any], Any]] = []
    if isinstance(node.get("encoding"), Mapping):
        found.append((node, data))
    for key in _SUB_VIEWS:
        for child in node.get(key) or []:
            if isinstance(child, Mapping):
                found.extend(_views(child, data))
    if isinstance(node.get("spec"), Mapping):
        found.extend(_views(node["spec"], data))
    return found


class _Rows:
    """A dataset (row dicts, a pandas data frame, an Arrow table) read without copying it whole:
    a column to find the largest value, and the few rows the summary and table need (a data
    frame of 25,000 cells is not turned into 25,000 dicts on every draw)."""

    def __init__(self, data: Any) -> None:
        self._frame = None
        self._list: list[Mapping[str, Any]] = []
        if isinstance(data, list):
            self._list = [row for row in data if isinstance(row, Mapping)]
        elif hasattr(data, "columns") and hasattr(data, "iloc"):  # pandas
            self._frame = data
        elif callable(getattr(data, "to_pylist", None)):  # pyarrow
            self._list = data.to_pylist()

    def __len__(self) -> int:
        return len(self._frame) if self._frame is not None else len(self._list)

    def column(self, name: str) -> list[Any]:
        if self._frame is not None:
            return self._frame[name].tolist() if name in self._frame.columns else [None] * len(self._frame)
        return [row.get(name) for row in self._list]

    def row(self, index: int) -> Mapping[str, Any]:
        if self._frame is not None:
            return self._frame.iloc[index].to_dict()
        return self._list[index]

    def head(self, fields: Sequence[str], n: int) -> list[tuple[Any, ...]]:
        """The first ``n`` rows' values of ``fields`` (column by column: no dict per row)."""
        if self._frame is not None:
            count = min(n, len(self._frame))
            columns = [self._frame[f].to_numpy()[:count].tolist() if f in self._frame.columns else [None] * count
                       for f in fields]
            return list(zip(*columns)) if columns else [()] * count
        return [tuple(row.get(f) for f in fields) for row in self._list[:n]]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def cell_text(value: Any) -> str:
    """A table cell as text: numbers to four significant digits, nothing for a missing value.

    Example: cell_text(0.123456) -> "0.1235"; cell_text(None) -> ""
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return format(value, ".4g")
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return cell_text(value.item())
    return str(value)


@dataclass(frozen=True)
class _Reading:
    rows: _Rows
    value: str
    value_title: str
    labels: list[tuple[str, str]]
    shown: str | None
    columns: list[tuple[str, str]]  # (field, title) of the table


def _reading_of_view(view: Mapping[str, Any], rows: _Rows) -> _Reading | None:
    encoding = view["encoding"]
    fields = {name: _encoded_field(encoding.get(name)) for name in set(_VALUE_CHANNELS) | set(_LABEL_CHANNELS)}
    x, y = fields.get("x"), fields.get("y")
    value_channel = None
    colour = fields.get("color")
    if colour and colour[1] == "quantitative":
        value_channel = "color"
    elif x and x[1] == "quantitative" and not (y and y[1] == "quantitative"):
        value_channel = "x"
    elif y and y[1] == "quantitative":
        value_channel = "y"
    elif fields.get("theta") and fields["theta"][1] == "quantitative":
        value_channel = "theta"
    if value_channel is None:
        return None
    value_field, _, value_spec = fields[value_channel]
    if not any(_number(value) is not None for value in rows.column(value_field)):
        return None
    value_title = _column_title(value_spec)
    labels = []
    for name in _LABEL_CHANNELS:
        entry = fields.get(name)
        if entry and name != value_channel and entry[0] != value_field and entry[0] not in {f for f, _ in labels}:
            labels.append((entry[0], _column_title(entry[2])))
    tips = encoding.get("tooltip")
    tips = [tips] if isinstance(tips, Mapping) else [tip for tip in tips or [] if isinstance(tip, Mapping)]
    # A tooltip line without a title borrows its axis' title (never the bare field name).
    axis_titles = {f: title for f, title in labels} | {value_field: value_title}
    tip_columns = [(tip["field"], _column_title(tip) if tip.get("title")
                    else axis_titles.get(tip["field"], tip["field"]))
                   for tip in tips if isinstance(tip.get("field"), str)]
    shown = next((f for f, title in tip_columns if title == value_title and f != value_field), None)
    if tip_columns:  # a tooltip's titles name what the fields are better than the axes do
        named = dict(tip_columns)
        labels = [(f, title) for f, title in tip_columns if f not in (value_field, shown)] or labels
        columns = tip_columns
        if value_field not in named and shown is None:
            columns = columns + [(value_field, value_title)]
    else:
        columns = labels + [(value_field, value_title)]
    return _Reading(rows, value_field, value_title, labels, shown, columns)


def _given(spec: Mapping[str, Any]) -> tuple[_Reading | None, bool]:
    """The builder's hint as a reading, and whether it is for the summary only."""
    usermeta = spec.get("usermeta")
    given = usermeta.get(HINT_KEY) if isinstance(usermeta, Mapping) else None
    if not isinstance(given, Mapping):
        return None, False
    labels = [(str(f), str(title)) for f, title in given.get("labels", [])]
    value, value_title = str(given["value"]), str(given.get("value_title", ""))
    # A list of things (``items``) has no amount column: its labels are the table.
    columns = labels if given.get("items") else labels + [(given.get("shown") or value, value_title)]
    reading = _Reading(_Rows(list(given.get("rows", []))), value, value_title, labels, given.get("shown"), columns)
    return reading, bool(given.get("summary_only"))


def _reading(spec: Mapping[str, Any]) -> _Reading | None:
    """The chart's own reading: the first view that encodes a number present in its data."""
    datasets = spec.get("datasets") or {}
    for view, data in _views(spec):
        rows = _Rows(datasets.get(data) if isinstance(data, str) else data)
        if len(rows):
            reading = _reading_of_view(view, rows)
            if reading is not None:
                return reading
    return None


def chart_facts(spec: Mapping[str, Any]) -> ChartFacts:
    """The name, the largest value with its labels, and the table of a Vega-Lite spec.

    Example: chart_facts(bar_chart(["a", "b"], [0.7, 0.3], title="p", x_title="p", y_title="token")).best
        -> (("token", "a"),)
    """
    name = title_text(spec.get("title"))
    usermeta = spec.get("usermeta")
    items_field = (usermeta.get(HINT_KEY) or {}).get("items") if isinstance(usermeta, Mapping) else None
    given, summary_only = _given(spec)
    reading = given or _reading(spec)
    if reading is None:
        return ChartFacts(name=name)
    table = (_reading(spec) or reading) if summary_only else reading
    best_row, best_value = None, -math.inf
    for index, value in enumerate(reading.rows.column(reading.value)):
        number = _number(value)
        if number is not None and number > best_value:
            best_row, best_value = index, number
    best_row = reading.rows.row(best_row) if best_row is not None else None
    best: tuple[tuple[str, str], ...] = ()
    shown = ""
    if best_row is not None:
        best = tuple((title, cell_text(best_row.get(f))) for f, title in reading.labels if cell_text(best_row.get(f)))
        shown = cell_text(best_row.get(reading.shown)) if reading.shown else ""
        shown = shown or format(best_value, ".3g")
    headers = tuple(title for _, title in table.columns)
    fields = [f for f, _ in table.columns]
    rows = tuple(tuple(cell_text(value) for value in row) for row in table.rows.head(fields, TABLE_ROW_LIMIT))
    items = tuple(cell_text(value) for value in reading.rows.column(items_field)) if items_field else ()
    return ChartFacts(name=name, value_title=reading.value_title, best=best, best_value=shown, headers=headers,
                      rows=rows, total_rows=len(table.rows), items=items)


# The sentences in both languages: charts are built without a session, so the language is an
# argument (``translate`` reads the same strings files as ``t``).
def summary_sentence(facts: ChartFacts, lang: str) -> str:
    """One sentence for a screen reader: the chart's name and its largest value with its labels.

    Example: summary_sentence(ChartFacts("p", "p", (("token", "cat"),), "0.700"), "en")
        -> "p. Highest p: token cat (0.700)."
    """
    from ui.i18n import translate

    if facts.items:
        listed = translate("charts.a11y.label_sep", lang).join(facts.items[:ITEMS_IN_SUMMARY])
        more = translate("charts.a11y.list_more", lang, k=len(facts.items) - ITEMS_IN_SUMMARY) \
            if len(facts.items) > ITEMS_IN_SUMMARY else ""
        return translate("charts.a11y.list", lang, name=facts.name or translate("charts.a11y.chart", lang),
                         count=len(facts.items), items=listed, more=more)
    if not facts.best_value:
        return translate("charts.a11y.no_values", lang, name=facts.name or translate("charts.a11y.chart", lang))
    where = translate("charts.a11y.label_sep", lang).join(
        label if label.casefold().startswith(title.casefold()) else  # "layer 3", not "layer layer 3"
        translate("charts.a11y.label", lang, title=title, label=label) for title, label in facts.best)
    return translate("charts.a11y.highest", lang, name=facts.name or translate("charts.a11y.chart", lang),
                     what=facts.value_title, where=where, value=facts.best_value)


def without_hint(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec without the builder's ``tj_a11y`` hint (the browser does not need it)."""
    usermeta = spec.get("usermeta")
    if not isinstance(usermeta, Mapping) or HINT_KEY not in usermeta:
        return spec
    rest = {k: v for k, v in usermeta.items() if k != HINT_KEY}
    out = {k: v for k, v in spec.items() if k != "usermeta"}
    if rest:
        out["usermeta"] = rest
    return out
