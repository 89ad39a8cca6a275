"""An Altair chart's Vega-Lite spec with its data frames handed over untouched.

Only for the chart modules still written with Altair (training, vectors, positional); every
other builder returns a Vega-Lite dict (``ui.charts.vl``), which ``chart_spec`` passes through.

Altair refuses data frames of more than 5,000 rows when it writes a spec (``MaxRowsError``),
to protect notebooks that embed data as JSON. We never embed: Streamlit sends every dataset
to the browser as Arrow (compact typed columns). So ``chart_spec`` lifts the limit
deliberately and only for our charts — without touching Altair's process-wide
``data_transformers`` registry, which concurrent sessions share: each data frame is swapped
for a named reference while the spec is written, then returned under ``datasets``.
A 71-token prompt (5,041 heatmap cells) or a foreign model's 1,024 positions therefore draw
like a short prompt; what a chart sends is kept small by its builder (numeric columns, few
strings), not by a row count.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

_CHILDREN = ("layer", "hconcat", "vconcat", "concat", "spec")


def _charts(node: Any) -> list[Any]:
    """The chart and every sub-chart below it (layers, concatenations, a facet's spec)."""
    found, stack = [], [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
            continue
        if not hasattr(item, "_kwds"):
            continue
        found.append(item)
        for name in _CHILDREN:
            child = item._kwds.get(name, alt.Undefined)
            if child is not alt.Undefined:
                stack.append(child)
    return found


def chart_spec(chart: alt.TopLevelMixin | dict[str, Any], *, validate: bool = True) -> dict[str, Any]:
    """The chart's Vega-Lite dict; its data frames (any number of rows) under ``datasets``.
    A dict (a finished spec) is returned as it is.

    Example: st.vega_lite_chart(chart_spec(alt.Chart(big_frame).mark_rect()...))
    """
    if isinstance(chart, dict):
        return chart
    swapped: list[tuple[Any, Any]] = []
    datasets: dict[str, pd.DataFrame] = {}
    names: dict[int, str] = {}
    try:
        for sub in _charts(chart):
            data = sub._kwds.get("data", alt.Undefined)
            if isinstance(data, pd.DataFrame):
                name = names.setdefault(id(data), f"tj-data-{len(names)}")
                datasets[name] = data
                swapped.append((sub, data))
                sub._kwds["data"] = alt.NamedData(name=name)
        spec = chart.to_dict(validate=validate)
    finally:
        for sub, data in swapped:
            sub._kwds["data"] = data
    inline = spec.get("datasets", {})
    spec["datasets"] = {**{k: pd.DataFrame.from_records(v) for k, v in inline.items()}, **datasets}
    return spec
