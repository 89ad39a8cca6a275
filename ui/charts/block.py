"""Charts of the two block pages (transformer block, whole model), as finished Vega-Lite dicts.

Every builder takes plain arrays and already-translated strings and returns a spec dict with a
title, axis titles and tooltips that carry the exact values; token labels arrive made visible
and unique. Builders are memoised process-wide (``serving.registry.memo``: same inputs -> the same
read-only dict, nothing pickled), so a rerun that changes nothing in a chart costs a lookup.
Draw them with ``ui.charts.common.vega`` (it themes a copy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ui.charts import palettes, vl
from ui.charts.vl import CELL_TEXT_LIMIT, field as _field, legend as _legend, tooltip as _tip
from serving.registry import memo

Spec = dict[str, Any]
# Okabe–Ito (ui.charts.palettes): apart for colour-blind eyes; lines also differ by dash.
KIND_COLORS = {"embed": palettes.REDDISH_PURPLE, "head": palettes.BLUE, "attn_bias": palettes.SKY_BLUE,
               "mlp": palettes.VERMILLION, "norm_bias": palettes.NEUTRAL_GREY}
SERIES_COLORS = list(palettes.SERIES)


def _spec(body: Spec, datasets: dict[str, vl.Rows], title: str, height: int, data: str | None = None) -> Spec:
    return vl.spec(body, datasets, title=title, height=height, data=data)


@memo(maxsize=256)
def bars(labels: Sequence[str], values: Sequence[float], *, title: str, value_title: str, label_title: str,
         colors: Sequence[str] | None = None, color_title: str | None = None, color_labels: Sequence[str] | None = None,
         value_format: str = ".4f", height: int | None = None, color_domain: Sequence[str] | None = None) -> Spec:
    """Horizontal bars in the given order; optional colour groups (``color_labels``) with a legend,
    in the order of ``color_domain`` (default: as they first appear; ``colors`` in that order)."""
    records = [{"label": str(lab), "value": vl.json_number(v), "shown": format(float(v), value_format)}
               for lab, v in zip(labels, values)]
    encoding: dict[str, Any] = {
        "tooltip": [_tip("label", label_title), _tip("shown", value_title)],
        "x": _field("value", "quantitative", title=value_title),
        "y": _field("label", "nominal", axis={"labelLimit": 180}, sort=list(labels), title=label_title),
    }
    if color_labels is not None:
        for row, group in zip(records, color_labels):
            row["group"] = group
        domain = list(color_domain) if color_domain is not None else list(dict.fromkeys(color_labels))
        palette = list(colors) if colors is not None else SERIES_COLORS[: len(domain)]
        encoding["color"] = _field("group", "nominal", legend=_legend(labelLimit=260, columns=2),
                                   scale={"domain": domain, "range": palette}, title=color_title)
        encoding["tooltip"].append(_tip("group", color_title))
    name = vl.dataset_name(records)
    bar = {"mark": {"type": "bar"}, "encoding": encoding}
    # Colour groups: each bar also ends in its group's symbol (never colour alone).
    body = {"layer": [bar, vl.bar_symbols(encoding, "group", domain)]} if color_labels is not None else bar
    return _spec(body, {name: records}, title, height or max(120, 22 * len(records)), data=name)


@memo(maxsize=256)
def grouped_bars(categories: Sequence[str], series: Sequence[str], values: np.ndarray, *, title: str, x_title: str,
                 y_title: str, series_title: str, value_format: str = ".3f", height: int = 260) -> Spec:
    """values [series, category]: one bar per (category, series), side by side, each ending in
    its series' symbol (never colour alone; the legend shows colour and symbol together)."""
    values = np.asarray(values, dtype=float)
    records = [{"cat": c, "series": s, "value": vl.json_number(values[i, j]), "shown": format(float(values[i, j]), value_format)}
               for i, s in enumerate(series) for j, c in enumerate(categories)]
    encoding = {
        "color": _field("series", "nominal", legend=_legend(labelLimit=260, columns=2),
                        scale={"domain": list(series), "range": SERIES_COLORS[: len(series)]}, sort=list(series),
                        title=series_title),
        "tooltip": [_tip("cat", x_title), _tip("series", series_title), _tip("shown", y_title)],
        "x": _field("cat", "nominal", axis={"labelAngle": -40, "labelLimit": 120}, sort=list(categories), title=x_title),
        "xOffset": _field("series", "nominal", sort=list(series)),
        "y": _field("value", "quantitative", title=y_title),
    }
    name = vl.dataset_name(records)
    layers = [{"mark": {"type": "bar"}, "encoding": encoding}, vl.bar_symbols(encoding, "series", list(series))]
    return _spec({"layer": layers}, {name: records}, title, height, data=name)


@memo(maxsize=128)
def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str, x_title: str, y_title: str,
          series_title: str, log_y: bool = False, marker_x: float | None = None, value_format: str = ".4f",
          height: int = 280, x_format: str = ".2f") -> Spec:
    """One line per series over x; an optional vertical marker with each series' value at marker_x."""
    records = [{"x": vl.json_number(xv), "y": vl.json_number(yv), "series": name, "shown": format(float(yv), value_format),
                "x_shown": format(float(xv), x_format)}
               for name, ys in series.items() for xv, yv in zip(x, ys)]
    names = list(series)
    line = {"type": "line", "point": True} if len(x) <= 60 else {"type": "line", "point": False}
    encoding = {
        "color": _field("series", "nominal", legend=_legend(labelLimit=300, columns=2),
                        scale={"domain": names, "range": SERIES_COLORS[: len(names)]}, sort=names, title=series_title),
        "strokeDash": vl.dashes(names, series_title, _legend(labelLimit=300, columns=2)),  # not colour alone
        "tooltip": [_tip("series", series_title), _tip("x_shown", x_title), _tip("shown", y_title)],
        "x": _field("x", "quantitative", title=x_title),
        "y": _field("y", "quantitative", scale={"type": "log"} if log_y else {"zero": False}, title=y_title),
    }
    name = vl.dataset_name(records)
    if marker_x is None:  # one layer: its data is the chart's
        return _spec({"layer": [{"mark": line, "encoding": encoding}]}, {name: records}, title, height, data=name)
    marker = [{"x": float(marker_x)}]
    marker_name = vl.dataset_name(marker)
    layers = [{"data": {"name": name}, "mark": line, "encoding": encoding},
              {"data": {"name": marker_name}, "mark": {"type": "rule", "color": "#868e96", "strokeDash": [4, 3]},
               "encoding": {"x": _field("x", "quantitative")}}]
    return _spec({"layer": layers}, {name: records, marker_name: marker}, title, height)


@memo(maxsize=128)
def heat(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *, title: str, x_title: str,
         y_title: str, value_title: str, diverging: bool = False, value_format: str = ".3f",
         text: np.ndarray | None = None, text_title: str | None = None, height: int | None = None) -> Spec:
    """A labelled matrix [row, col]; ``text`` (same shape, strings) is written in the cells and the tooltip."""
    m = np.asarray(matrix, dtype=float)
    records = []
    for i, r in enumerate(row_labels):
        for j, c in enumerate(col_labels):
            row = {"row": r, "col": c, "value": vl.json_number(m[i, j]), "shown": format(float(m[i, j]), value_format)}
            if text is not None:
                row["text"] = str(text[i][j])
            records.append(row)
    if diverging:
        bound = float(np.max(np.abs(m))) or 1.0
        scale: dict[str, Any] = {"domain": [-bound, bound], "reverse": True, "scheme": "redblue"}
    else:
        scale = {"scheme": "blues"}
    x = _field("col", "nominal", axis={"labelAngle": -45, "labelLimit": 120}, sort=list(col_labels), title=x_title)
    y = _field("row", "nominal", axis={"labelLimit": 180}, sort=list(row_labels), title=y_title)  # "layer 2 after attention"
    tooltip = [_tip("row", y_title), _tip("col", x_title), _tip("shown", value_title)]
    if text is not None:
        tooltip.insert(2, _tip("text", text_title or ""))
    legend = _legend(titleLimit=400, gradientLength=220)
    layers: list[dict[str, Any]] = [{"mark": {"type": "rect"}, "encoding": {
        "color": _field("value", "quantitative", legend=legend, scale=scale, title=value_title),
        "tooltip": tooltip, "x": x, "y": y}}]
    if text is not None:
        lo, hi = float(np.min(m)), float(np.max(m))
        dark_above = (lo + hi) / 2 if not diverging else float(np.max(np.abs(m))) / 2
        light = f"abs(datum.value) > {dark_above!r}" if diverging else f"datum.value > {dark_above!r}"
        layers.append({"mark": {"type": "text", "fontSize": 11, "limit": {"expr": CELL_TEXT_LIMIT}}, "encoding": {
            "color": {"condition": {"test": light, "value": "#ffffff"}, "value": "#111111"},
            "text": _field("text", "nominal"), "tooltip": tooltip, "x": x, "y": y}})
    name = vl.dataset_name(records)
    return _spec({"layer": layers}, {name: records}, title, height or max(160, 26 * len(row_labels) + 20), data=name)


@memo(maxsize=128)
def stacked_share(labels: Sequence[str], values: Sequence[int], *, title: str, x_title: str, color_title: str,
                  bar_label: str, colors: Sequence[str] | None = None) -> Spec:
    """One horizontal bar split into components (parameters), each with its exact count and share,
    and its part's symbol in its middle (never colour alone)."""
    total = float(sum(values)) or 1.0
    starts = np.concatenate([[0], np.cumsum([int(v) for v in values])[:-1]]) if len(values) else []
    records = [{"part": part, "value": int(v), "bar": bar_label, "shown": f"{int(v):,}",
                "share": f"{100 * int(v) / total:.1f} %", "order": i, "middle": float(start) + int(v) / 2}
               for i, (part, v, start) in enumerate(zip(labels, values, starts))]
    encoding = {
        "color": _field("part", "nominal", legend=_legend(labelLimit=260, columns=2),
                        scale=vl.scale(labels, colors or SERIES_COLORS[: len(labels)]), sort=list(labels),
                        title=color_title),
        "order": _field("order", "quantitative"),
        "tooltip": [_tip("part", color_title), _tip("shown", x_title), _tip("share", "%")],
        "x": _field("value", "quantitative", stack="zero", title=x_title),
        "y": _field("bar", "nominal", title=None),
    }
    name = vl.dataset_name(records)
    symbols = vl.bar_symbols(encoding, "part", list(labels), at={"x": _field("middle", "quantitative")})
    symbols["encoding"].pop("order")
    return _spec({"layer": [{"mark": {"type": "bar"}, "encoding": encoding}, symbols]}, {name: records}, title, 70,
                 data=name)


ORDER_SUFFIX = "__order"  # a row's place on an axis, for ``stable``
BOUND_PARAM = "tj_bound"  # a diverging heat map's ±bound, for ``stable``


def stable(spec: Spec) -> Spec:
    """``spec`` (from ``bars``, ``grouped_bars``, ``lines`` or ``heat``) written so that another
    input of the same shape gives the same spec text, only other data; drawn with
    ``vega(..., live=True)``, which also moves the title into the data.

    Why: Streamlit's browser side keeps a chart's Vega view while the spec text stays the same
    and only swaps its data in; a new text compiles the spec and builds a new view. A picker that
    redraws several charts (Transformer block's layer) then pays that per chart. What changes
    with the input is moved out of the text: dataset names (named after their content) become
    ``rows0``, ``rows1`` …; an axis' order (a list of the labels) becomes a column holding each
    row's place (``<field>__order``), sorted by; a diverging scale's ±bound becomes a parameter.
    The student sees the same chart. The input is not changed. (A heat map with text in its cells
    keeps its ink threshold in the text: such a chart still changes its spec with its values.)
    """
    renamed = {name: f"rows{i}" for i, name in enumerate(spec.get("datasets") or {})}
    datasets = {renamed[name]: [dict(row) for row in rows] for name, rows in (spec.get("datasets") or {}).items()}
    out = {k: v for k, v in spec.items() if k not in ("datasets", "data", "layer", "encoding")}
    params = []

    def unit(node: Spec, rows: list[dict[str, Any]]) -> Spec:
        node = dict(node)
        if "data" in node:
            node["data"] = {"name": renamed[node["data"]["name"]]}
        encoding = {}
        for channel, enc in (node.get("encoding") or {}).items():
            if isinstance(enc, dict) and channel in ("x", "y") and isinstance(enc.get("sort"), list):
                place = {str(label): i for i, label in enumerate(enc["sort"])}
                key = enc["field"] + ORDER_SUFFIX
                for row in rows:
                    row[key] = place.get(str(row.get(enc["field"])), len(place))
                enc = {**enc, "sort": {"field": key, "op": "min"}}
            if isinstance(enc, dict) and isinstance((enc.get("scale") or {}).get("domain"), list) \
                    and enc["scale"].get("scheme") == "redblue":
                bound = float(enc["scale"]["domain"][1])
                if not any(p["name"] == BOUND_PARAM for p in params):
                    params.append({"name": BOUND_PARAM, "value": bound})
                scale = {k: v for k, v in enc["scale"].items() if k != "domain"}
                enc = {**enc, "scale": {**scale, "domainMin": {"expr": f"-{BOUND_PARAM}"},
                                        "domainMax": {"expr": BOUND_PARAM}}}
            encoding[channel] = enc
        if encoding:
            node["encoding"] = encoding
        return node

    top_rows = datasets[renamed[spec["data"]["name"]]] if "data" in spec else []
    if "data" in spec:
        out["data"] = {"name": renamed[spec["data"]["name"]]}
    if "encoding" in spec:
        out["encoding"] = unit({"encoding": spec["encoding"]}, top_rows)["encoding"]
    if "layer" in spec:
        out["layer"] = [unit(layer, datasets[renamed[layer["data"]["name"]]] if "data" in layer else top_rows)
                        for layer in spec["layer"]]
    if params:
        out["params"] = [*(spec.get("params") or []), *params]
    out["datasets"] = datasets
    return out
