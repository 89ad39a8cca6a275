"""Vega-Lite dict helpers: the one way every chart of the app is written.

A chart is a plain Vega-Lite dict with its data attached (``datasets``); the builders in
``ui.charts`` assemble it from the small pieces below, and ``ui.charts.common.vega`` themes and
draws it. No Altair and no pandas here: a spec is plain data, cheap to build, hash and cache,
and ``tests/unit/test_chart_schema.py`` checks every builder's output against the Vega-Lite
JSON schema that ships with Altair (the version ``SCHEMA_URL`` names).

Example:
    rows = [{"label": "a", "value": json_number(0.5)}]
    name = dataset_name(rows)
    chart = spec({"mark": {"type": "bar"}, "encoding": {"x": field("value", "quantitative", title="p"),
                  "y": field("label", "nominal", title="token")}}, {name: rows}, title="T", height=80, data=name)
"""

from __future__ import annotations

import hashlib
import io
import math
import pickle
from collections.abc import Sequence
from typing import Any

Spec = dict[str, Any]  # a finished Vega-Lite spec (or a part of one)
Rows = list[dict[str, Any]]  # one dataset: a row dict per mark

# The Vega-Lite version the specs are written for: the one the installed Altair (Streamlit's own
# dependency) writes and validates against (a test checks that the two agree).
SCHEMA_URL = "https://vega.github.io/schema/vega-lite/v6.4.1.json"

# Chinese glyphs first, so a 中文 label never falls back to a box; Latin text reads the same.
CJK_FONT = "Noto Sans CJK SC, Noto Sans SC, PingFang SC, Microsoft YaHei, sans-serif"

# Vega-Lite's default view size, written into every top-level spec.
VIEW = {"continuousWidth": 300, "continuousHeight": 300}

# Text written in a grid cell is cut ("…") to the cell's width on screen, so narrow cells on a
# phone (a long prompt, the logit lens at 390 px) never write over their neighbours; hover
# shows the whole token.
CELL_TEXT_LIMIT = "max(12, bandwidth('x') - 4)"

# Sequential colour scales start at a light blue, not white: a zero cell stays visible (and is
# not a glaring white block) on Streamlit's dark background.
SEQUENTIAL_BLUES = {"name": "blues", "extent": [0.12, 1.0]}

TABLE = "table"  # the dataset name of a chart that reads one fixed-name dataset


def field(name: str, kind: str, **extra: Any) -> Spec:
    """An encoding channel on a data field (``kind``: nominal, ordinal, quantitative, temporal).

    Example: field("value", "quantitative", title="p") -> {"field": "value", "type": "quantitative", "title": "p"}
    """
    return {"field": name, "type": kind, **extra}


def tooltip(name: str, title: str | None, kind: str = "nominal", **extra: Any) -> Spec:
    """One tooltip line: a field shown under ``title`` (values are usually pre-formatted text).

    Example: tooltip("shown", "p") -> {"field": "shown", "title": "p", "type": "nominal"}
    """
    return {"field": name, "title": title, "type": kind, **extra}


def legend(direction: str = "horizontal", **extra: Any) -> Spec:
    """A legend under the plot (on the right it covers value labels and squeezes a phone's plot).

    Example: legend(labelLimit=260, columns=2) -> {"orient": "bottom", "direction": "horizontal", ...}
    """
    return {"orient": "bottom", "direction": direction, **extra}


def legend_below() -> Spec:
    """A vertical legend under the plot, with room for long translated labels and titles.

    Example: legend_below()["labelLimit"] -> 480
    """
    return {"direction": "vertical", "labelLimit": 480, "orient": "bottom", "titleLimit": 480}


def scale(domain: Sequence[Any], colors: Sequence[str]) -> Spec:
    """A categorical colour scale: each domain value gets the colour at its place.

    Example: scale(["top", "rest"], ["#2f6fdb", "#c9a227"]) -> {"domain": ["top", "rest"], "range": [...]}
    """
    return {"domain": list(domain), "range": list(colors)}


def dashes(domain: Sequence[Any], title: Any, legend_spec: Spec | None = None) -> Spec:
    """A ``strokeDash`` channel on the ``series`` field: each line its own dash pattern, so lines
    tell themselves apart without colour (the legend merges with the colour legend when its
    title and legend settings are the same).

    Example: dashes(["a", "b"], "series")["scale"]["range"] -> [[1, 0], [6, 3]]
    """
    from ui.charts.palettes import DASHES

    patterns = [list(DASHES[i % len(DASHES)]) for i in range(len(domain))]
    channel: Spec = {"field": "series", "type": "nominal", "sort": list(domain), "title": title,
                     "scale": {"domain": list(domain), "range": patterns}}
    if legend_spec is not None:
        channel["legend"] = legend_spec
    return channel


def shapes(name: str, domain: Sequence[Any], title: Any, legend_spec: Spec | None = None) -> Spec:
    """A ``shape`` channel on field ``name``: each category its own symbol, so marks tell
    themselves apart without colour (the legend merges with the colour legend when the domain,
    title and legend settings are the same; ``legend_spec=None`` keeps Vega's default legend).

    Example: shapes("series", ["a", "b"], "s")["scale"]["range"] -> ["circle", "square"]
    """
    from ui.charts.palettes import SHAPES

    channel: Spec = {"field": name, "type": "nominal", "sort": list(domain), "title": title,
                     "scale": {"domain": list(domain), "range": [SHAPES[i % len(SHAPES)] for i in range(len(domain))]}}
    if legend_spec is not None:
        channel["legend"] = legend_spec
    return channel


def bar_symbols(bars: Spec, name: str, domain: Sequence[Any], at: Spec | None = None) -> Spec:
    """A layer of symbols for bars coloured by field ``name`` (never colour alone): one symbol
    per bar, in the bar's colour with a grey outline (it shows on the bar too), its shape
    telling the category; the legend shows each colour with its symbol. ``bars`` is the bar
    layer's encoding; ``at`` replaces position channels (default: the bar's end).

    Example: bar_symbols({"color": field("s", "nominal", title="s"), "x": field("v", "quantitative")}, "s", ["a"])["mark"]["type"]
        -> "point"
    """
    from ui.charts.palettes import SHAPE_OUTLINE

    colour = bars["color"]
    encoding = {key: value for key, value in bars.items() if key not in ("opacity", "strokeDash")}
    legend_spec = colour.get("legend", {})
    # The legend's symbols: the colour inside a thin outline (Streamlit's 2 px outline hid it).
    encoding["shape"] = shapes(name, domain, colour.get("title"),
                               None if legend_spec is None else {**legend_spec, "symbolStrokeWidth": 1})
    if legend_spec is None:
        encoding["shape"]["legend"] = None
    encoding.update(at or {})
    return {"mark": {"type": "point", "filled": True, "opacity": 1, "size": 70, "stroke": SHAPE_OUTLINE,
                     "strokeWidth": 1}, "encoding": encoding}


def condition(test: str, then: Any, otherwise: Any) -> Spec:
    """A value channel that is ``then`` where the Vega expression ``test`` holds, else ``otherwise``.

    Example: condition("datum.value > 0.5", "#ffffff", "#111111")
        -> {"condition": {"test": "datum.value > 0.5", "value": "#ffffff"}, "value": "#111111"}
    """
    return {"condition": {"test": test, "value": then}, "value": otherwise}


def json_number(value: Any) -> float | None:
    """A number as a JSON dataset can carry it: NaN and ±inf become null (the mark is left out).

    Example: json_number(float("nan")) -> None; json_number(2) -> 2.0
    """
    value = float(value)
    return value if math.isfinite(value) else None


def quoted(text: str) -> str:
    """``text`` as a string literal inside a Vega expression.

    Example: f"datum.series === {quoted('it\\'s')}" -> 'datum.series === "it\\'s"'
    """
    return repr(str(text))


def dataset_name(rows: Rows) -> str:
    """A dataset's name from its content: equal rows, equal name; other rows, another name.

    Digested as pickle without its memo (equal rows give equal bytes whichever objects hold
    them) rather than as sorted JSON: a tenth of the time for a 480-row heat map.

    Example: dataset_name([{"a": 1}]) == dataset_name([{"a": 1}]) != dataset_name([{"a": 2}])
    """
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: the same rows give the same bytes whichever objects hold them
    pickler.dump(rows)
    return "data-" + hashlib.blake2b(buffer.getbuffer(), digest_size=16).hexdigest()


def autosize(fixed_size: bool = False) -> Spec:
    """Streamlit's default autosize "fit" squeezes the plot so that title, axes and legend fit in
    the given height, which flattens charts with long labels to nothing. "fit-x" fills the width
    and leaves ``height`` as the plot's own height; "pad" keeps both as given.

    Example: autosize() -> {"contains": "padding", "type": "fit-x"}
    """
    return {"contains": "padding", "type": "pad" if fixed_size else "fit-x"}


def base_config(font: bool = True) -> Spec:
    """The ``config`` every top-level spec starts from (the theme is merged over it when drawn).

    Example: base_config()["font"] -> CJK_FONT
    """
    config: Spec = {"view": dict(VIEW)}
    if font:
        config["font"] = CJK_FONT
    return config


def spec(body: Spec, datasets: dict[str, Rows], *, title: Any, height: Any = None, data: str | None = None,
         width: Any = None, fixed_size: bool = False, autosized: bool = True) -> Spec:
    """A top-level chart: base config, ``data`` (a dataset name read by the body), the body (mark
    and encoding, or ``layer``/``hconcat``/...), autosize, the plot's size, title, schema, data.

    ``height``/``width`` are pixels or ``{"step": n}``; None leaves Vega-Lite's default.

    Example: spec({"mark": {"type": "bar"}, "encoding": {}}, {"t": []}, title="T", height=80, data="t")["data"]
        -> {"name": "t"}
    """
    out: Spec = {"config": base_config()}
    if data is not None:
        out["data"] = {"name": data}
    out.update(body)
    if autosized:
        out["autosize"] = autosize(fixed_size)
    if height is not None:
        out["height"] = height
    out["title"] = title
    if width is not None:
        out["width"] = width
    out["$schema"] = SCHEMA_URL
    out["datasets"] = datasets
    return out


def hconcat(charts: Sequence[Spec], *, title: Any, spacing: int | None = None,
            independent: Sequence[str] = ()) -> Spec:
    """Finished charts side by side as one chart: each keeps its own data (renamed ``<name>-<i>``
    so that two charts' datasets never collide), its size and title; ``independent`` channels
    (e.g. ``("color",)``) get a scale per chart.

    Example: hconcat([left, right], title="weights and shift", spacing=24, independent=("color",))
    """
    datasets: dict[str, Rows] = {}
    children = []
    for i, chart in enumerate(charts):
        names = {name: f"{name}-{i}" for name in chart.get("datasets") or {}}
        datasets.update({names[name]: rows for name, rows in (chart.get("datasets") or {}).items()})
        child = {k: v for k, v in chart.items() if k not in ("config", "$schema", "datasets", "autosize")}
        if "data" in child:
            child["data"] = {"name": names[child["data"]["name"]]}
        if "layer" in child:
            child["layer"] = [{**layer, "data": {"name": names[layer["data"]["name"]]}} if "name" in layer.get("data", {})
                              else layer for layer in child["layer"]]
        children.append(child)
    out: Spec = {"config": {"view": dict(VIEW)}, "hconcat": children}
    if independent:
        out["resolve"] = {"scale": {channel: "independent" for channel in independent}}
    if spacing is not None:
        out["spacing"] = spacing
    out["title"] = title
    out["$schema"] = SCHEMA_URL
    out["datasets"] = datasets
    return out
