"""A Vega-Lite spec that stays the same while a control moves: what changes travels as data.

Streamlit's browser side keeps a chart's Vega view as long as the chart's spec (without its
datasets) is byte-identical to the previous run's: then it only swaps the changed datasets into
the existing view (``view.data(name, rows)``) and redraws. Any change to the spec text — a title
saying "T = 0.85", a parameter ``current = 12`` — makes it compile the Vega-Lite spec again and
build a new view (several times the cost of a data swap on a slow laptop, per chart and move).

``live_spec`` moves the two things our charts change per move out of the spec: the top-level
title text and the values of top-level parameters. They ride on the first row of one of the
chart's own datasets (extra columns ``__tj_title``, ``__tj_param_<name>``; the other rows leave
them empty) and the spec reads them with a Vega expression, ``data('<dataset>')[0]``. The
student sees exactly the same chart: the same title (lines included), the same parameter
values. ``resolve_live`` is the inverse (tests, tools): the plain spec back.

Example: live = live_spec(spec); st.vega_lite_chart(live)  # spec text the same for every T
"""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any

import pandas as pd

TITLE_FIELD = "__tj_title"
PARAM_PREFIX = "__tj_param_"
_LIVE_MARK = "__tj_live"  # usermeta key: which dataset carries the values (for resolve_live)


def _row0(dataset: str) -> str:
    return f"(data({json.dumps(dataset)})[0] || {{}})"


def _rows(data: Any) -> int:
    """How many rows a dataset has (0 for anything that is not a table of rows)."""
    if isinstance(data, pd.DataFrame):
        return len(data)
    if _is_arrow(data):
        return data.num_rows
    if isinstance(data, list) and all(isinstance(row, dict) for row in data):
        return len(data)
    return 0


def _carrier(spec: dict[str, Any]) -> str | None:
    """The dataset that carries the values: the smallest one with rows (the new columns cost a
    cell per row; the first such in the spec's order among equals)."""
    sizes = [(_rows(data), index, name) for index, (name, data) in enumerate((spec.get("datasets") or {}).items())]
    sizes = [entry for entry in sizes if entry[0] > 0]
    return min(sizes)[2] if sizes else None


def _is_arrow(data: Any) -> bool:
    return type(data).__name__ == "Table" and type(data).__module__.startswith("pyarrow")


_CARRIED: dict[tuple[int, tuple[tuple[str, Any], ...]], tuple[Any, Any]] = {}
_CARRIED_LOCK = threading.Lock()


def _carried(data: Any, values: dict[str, Any]) -> Any:
    """``_with_values``, remembered while ``data`` lives (a weak reference): a chart a rerun
    draws again unchanged (a shared, memoised spec) gets the same object back, so its Arrow
    bytes are not made again (``ui.charts.common.arrow_bytes``). Plain lists of rows cannot be
    weakly referenced; they are copied every time (they were converted every time anyway)."""
    key = (id(data), tuple(sorted((k, (type(v).__name__, v)) for k, v in values.items())))
    with _CARRIED_LOCK:
        hit = _CARRIED.get(key)
    if hit is not None and hit[0]() is data:
        return hit[1]
    out = _with_values(data, values)
    try:
        ref = weakref.ref(data, lambda _ref, key=key: _CARRIED.pop(key, None))
    except TypeError:
        return out
    with _CARRIED_LOCK:
        _CARRIED[key] = (ref, out)
    return out


def _with_values(data: Any, values: dict[str, Any]) -> Any:
    """A copy of a dataset with ``values`` as new columns, set on the first row only."""
    if _is_arrow(data):
        import pyarrow as pa

        for key, value in values.items():
            data = data.append_column(key, pa.array([value] + [None] * (data.num_rows - 1)))
        return data
    if isinstance(data, pd.DataFrame):
        out = data.copy(deep=False)
        for key, value in values.items():
            column = pd.Series([None] * len(out), index=out.index, dtype=object)
            column.iloc[0] = value
            out[key] = column
        return out
    return [{**data[0], **values}, *data[1:]]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def live_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with its title text and top-level parameter values read from its data.

    Only what is safe to move is moved: a string title (or a title dict's string/list ``text``)
    and parameters that are plain values (numbers, strings, booleans; not selections, not
    bound widgets). A spec without a dataset with rows is returned unchanged. The input is not
    changed; datasets keep their names and order.
    """
    dataset = _carrier(spec)
    if dataset is None:
        return spec
    row = _row0(dataset)
    values: dict[str, Any] = {}
    out = dict(spec)
    title = spec.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    if isinstance(text, (str, list)) and text:
        read = f"{row}[{json.dumps(TITLE_FIELD)}]"
        if isinstance(text, list):  # lines: carried as one string, split again by the expression
            values[TITLE_FIELD] = "\n".join(str(line) for line in text)
            expr = f"split({read} || '', '\\n')"
        else:
            values[TITLE_FIELD] = text
            expr = f"{read} || ''"
        out["title"] = {**(title if isinstance(title, dict) else {}), "text": {"expr": expr}}
    params = []
    for param in spec.get("params") or []:
        plain = (isinstance(param, dict) and set(param) == {"name", "value"}
                 and isinstance(param["name"], str) and (_is_number(param["value"]) or isinstance(param["value"], (str, bool))))
        if not plain:
            params.append(param)
            continue
        field = PARAM_PREFIX + param["name"]
        values[field] = param["value"]
        params.append({"name": param["name"], "expr": f"{row}[{json.dumps(field)}]"})
    if "params" in spec:
        out["params"] = params
    if not values:
        return spec
    datasets = dict(spec["datasets"])
    datasets[dataset] = _carried(datasets[dataset], values)
    out["datasets"] = datasets
    out["usermeta"] = {**(spec.get("usermeta") or {}),
                       _LIVE_MARK: {"dataset": dataset, "title_lines": isinstance(text, list)}}
    return out


def is_live(spec: dict[str, Any]) -> bool:
    """Was ``spec`` made by ``live_spec`` (its title or parameters read from its data)?"""
    return isinstance(spec.get("usermeta"), dict) and _LIVE_MARK in spec["usermeta"]


def _first_row(data: Any) -> dict[str, Any]:
    if _is_arrow(data):
        return data.slice(0, 1).to_pylist()[0]
    if isinstance(data, pd.DataFrame):
        return {k: v for k, v in data.iloc[0].to_dict().items()}
    return dict(data[0])


def resolve_live(spec: dict[str, Any], datasets: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plain spec of a ``live_spec``: title and parameter values written back, the carrier
    columns dropped. ``datasets`` (name -> rows or data frame) default to ``spec["datasets"]``;
    tests pass the ones Streamlit sent as Arrow. A spec that is not live is returned unchanged.
    """
    if not is_live(spec):
        return spec
    mark = spec["usermeta"][_LIVE_MARK]
    dataset, lines = mark["dataset"], mark["title_lines"]
    datasets = spec.get("datasets") if datasets is None else datasets
    first = _first_row(datasets[dataset])
    out = dict(spec)
    usermeta = {k: v for k, v in spec["usermeta"].items() if k != _LIVE_MARK}
    if usermeta:
        out["usermeta"] = usermeta
    else:
        out.pop("usermeta")
    title = spec.get("title")
    if isinstance(title, dict) and isinstance(title.get("text"), dict) and TITLE_FIELD in first:
        text = first[TITLE_FIELD]
        rest = {k: v for k, v in title.items() if k != "text"}
        out["title"] = {**rest, "text": text.split("\n") if lines else text} if rest else (
            text.split("\n") if lines else text)
    if "params" in spec:
        out["params"] = [
            {"name": p["name"], "value": _plain(first[PARAM_PREFIX + p["name"]])}
            if isinstance(p, dict) and set(p) == {"name", "expr"} and PARAM_PREFIX + p["name"] in first else p
            for p in spec["params"]
        ]
    if datasets is not None:
        cleaned = {}
        for name, data in datasets.items():
            if name == dataset:
                drop = [k for k in first if k == TITLE_FIELD or k.startswith(PARAM_PREFIX)]
                if _is_arrow(data):
                    data = data.drop_columns(drop)
                elif isinstance(data, pd.DataFrame):
                    data = data.drop(columns=drop)
                else:
                    data = [{k: v for k, v in row.items() if k not in drop} for row in data]
            cleaned[name] = data
        out["datasets"] = cleaned
    return out


def _plain(value: Any) -> Any:
    """A numpy scalar (from a data frame's row) as the Python value the spec had."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value
