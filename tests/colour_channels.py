"""Never colour alone (WCAG 1.4.1): find the categories a Vega-Lite chart tells apart by colour only.

A ``color`` encoding on a nominal field names categories (series, groups, states). A student who
cannot tell the hues apart needs the same field on a second channel: a dash pattern or a shape,
a text mark that writes it (a direct label), a facet, or the position itself (an axis labelled
with that field). ``colour_alone`` lists each place where none of these carries the field.
Used by the unit tests on the builders and the app test on every chart the pages draw.
"""

from __future__ import annotations

from typing import Any

# Channels that carry a field by something other than hue.
SECOND_CHANNELS = ("strokeDash", "shape", "row", "column", "facet")
POSITION_CHANNELS = ("x", "y")
_CONCATS = ("hconcat", "vconcat", "concat")


def _channel_fields(channel: Any) -> list[Any]:
    """The fields a channel definition encodes (a conditional definition's too; none for a value)."""
    if isinstance(channel, list):
        return [f for item in channel for f in _channel_fields(item)]
    if not isinstance(channel, dict):
        return []
    found = [channel["field"]] if "field" in channel else []
    condition = channel.get("condition")
    if isinstance(condition, dict):
        found += _channel_fields(condition)
    return found


def _nominal_colour_field(encoding: dict[str, Any]) -> Any:
    colour = encoding.get("color")
    if not isinstance(colour, dict):
        return None
    for definition in (colour, colour.get("condition")):
        if isinstance(definition, dict) and "field" in definition and definition.get("type") == "nominal":
            return definition["field"]
    return None


def _mark_type(node: dict[str, Any]) -> str:
    mark = node.get("mark")
    return mark.get("type", "") if isinstance(mark, dict) else str(mark or "")


def _carried(field: Any, encoding: dict[str, Any], text_fields: set[Any], facet_fields: set[Any]) -> bool:
    if field in facet_fields or field in text_fields:
        return True
    for name in SECOND_CHANNELS:
        if field in _channel_fields(encoding.get(name)):
            return True
    for name in POSITION_CHANNELS:  # the category on a labelled axis
        channel = encoding.get(name)
        if isinstance(channel, dict) and channel.get("field") == field and channel.get("axis", {}) is not None:
            return True
    return False


def _records(data: Any) -> list[dict[str, Any]]:
    """A dataset's rows (a list of dicts, or a data frame)."""
    if hasattr(data, "to_dict"):
        return data.to_dict(orient="records")
    return [row for row in data if isinstance(row, dict)] if isinstance(data, list) else []


def colour_alone(spec: dict[str, Any], where: str = "chart") -> list[str]:
    """Each nominal colour field of ``spec`` that no second channel carries, as "where: field".

    Example: colour_alone({"mark": "bar", "encoding": {"color": {"field": "s", "type": "nominal"}}})
        -> ["chart: 's' by colour alone"]
    """
    problems: list[str] = []
    datasets = [_records(data) for data in (spec.get("datasets") or {}).values()]

    def written_in(field: Any, text_field: Any) -> bool:
        """A text field that writes the category in each mark ("broad\n0.62" for "broad"), or a
        mark of its own for each category (masked "−∞", newest "●", visible none)."""
        rows = [row for rows in datasets for row in rows if field in row and text_field in row]
        if not rows:
            return False
        if all(str(row[field]) in str(row[text_field]) for row in rows):
            return True
        marks: dict[str, set[str]] = {}
        for row in rows:
            marks.setdefault(str(row[field]), set()).add(str(row[text_field]))
        distinct = [next(iter(m)) for m in marks.values() if len(m) == 1]
        return len(distinct) == len(marks) > 1 and len(set(distinct)) == len(distinct)

    def walk(node: Any, inherited: dict[str, Any], text_fields: set[Any], facet_fields: set[Any], place: str) -> None:
        if not isinstance(node, dict):
            return
        facets = set(facet_fields)
        facet = node.get("facet")
        if isinstance(facet, dict):
            facets.update(_channel_fields(facet) + [f for ch in ("row", "column") for f in _channel_fields(facet.get(ch))])
        encoding = {**inherited, **(node.get("encoding") or {})}
        for key in _CONCATS:
            for index, child in enumerate(node.get(key) or []):
                walk(child, {}, set(), facets, f"{place}.{key}[{index}]")
        if isinstance(node.get("spec"), dict):
            walk(node["spec"], encoding, text_fields, facets, f"{place}.spec")
        layers = node.get("layer")
        if isinstance(layers, list):
            # What one layer shows of a field, its siblings' marks share: a text layer writing
            # it (a direct label), symbols or dashes on it, or layers that split its categories
            # between different marks (bars for one, ticks for the other).
            carried = set(text_fields)
            children = [child for child in layers if isinstance(child, dict)]
            merged = [{**encoding, **(child.get("encoding") or {})} for child in children]
            for child, child_encoding in zip(children, merged):
                if _mark_type(child) == "text":
                    for text_field in _channel_fields(child_encoding.get("text")):
                        carried.add(text_field)
                        carried.update(f for e in merged for f in {_nominal_colour_field(e)} - {None}
                                       if written_in(f, text_field))
                for name in SECOND_CHANNELS:
                    carried.update(_channel_fields(child_encoding.get(name)))
            for field in {_nominal_colour_field(e) for e in merged} - {None}:
                split = [(_mark_type(c), repr(c.get("transform"))) for c, e in zip(children, merged)
                         if _nominal_colour_field(e) == field]
                marks = [mark for mark, _ in split]
                if len(split) > 1 and len(set(marks)) == len(marks) and all(f"datum.{field}" in t for _, t in split):
                    carried.add(field)
            for index, child in enumerate(layers):
                walk(child, encoding, carried, facets, f"{place}.layer[{index}]")
            return
        if "mark" not in node:
            return
        field = _nominal_colour_field(encoding)
        if field is None:
            return
        if _mark_type(node) == "text" and isinstance(encoding.get("color"), dict) \
                and encoding["color"].get("legend", {}) is None:
            return  # ink chosen to read on the cell below it: the words are the content, no key to match
        if not _carried(field, encoding, text_fields, facets):
            problems.append(f"{place}: {field!r} by colour alone")

    walk(spec, {}, set(), set(), where)
    return problems
