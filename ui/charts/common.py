"""Chart builders shared by several pages."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

CJK_FONT = "Noto Sans CJK SC, Noto Sans SC, PingFang SC, Microsoft YaHei, sans-serif"


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
) -> alt.Chart:
    """A labelled matrix. NaN or ±inf cells (e.g. masked scores) are drawn grey.

    Example: heatmap(np.eye(2), ["a", "b"], ["a", "b"], title="I", x_title="k", y_title="q", value_title="w")
    """
    matrix = np.asarray(matrix, dtype=float)
    rows, cols = matrix.shape
    if len(row_labels) != rows or len(col_labels) != cols:
        raise ValueError(f"labels {len(row_labels)}×{len(col_labels)} do not fit matrix {rows}×{cols}")
    ii, jj = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    values = matrix.ravel()
    finite = np.isfinite(values)
    frame = pd.DataFrame({
        "row": [row_labels[i] for i in ii.ravel()],
        "col": [col_labels[j] for j in jj.ravel()],
        "value": np.where(finite, values, np.nan),
        "shown": [format(v, value_format) if f else ("−∞" if v < 0 else "∞" if v > 0 else "—")
                  for v, f in zip(values, finite)],
    })
    if diverging:
        bound = float(np.nanmax(np.abs(frame["value"]))) if finite.any() else 1.0
        scale = alt.Scale(scheme="redblue", domain=[-bound, bound], reverse=True)
    else:
        scale = alt.Scale(scheme=scheme)
    x = alt.X("col:N", sort=list(col_labels), title=x_title, axis=alt.Axis(labelAngle=-45, labelLimit=120, labelOverlap=cols > 32))
    y = alt.Y("row:N", sort=list(row_labels), title=y_title, axis=alt.Axis(labelLimit=160, labelOverlap=rows > 32))
    base = alt.Chart(frame)
    rects = base.mark_rect().encode(
        x=x, y=y,
        color=alt.condition("isValid(datum.value)", alt.Color("value:Q", scale=scale, title=value_title),
                            alt.value("#9e9e9e")),
        tooltip=[alt.Tooltip("row:N", title=y_title), alt.Tooltip("col:N", title=x_title),
                 alt.Tooltip("shown:N", title=value_title)],
    )
    layers: list[alt.Chart] = [rects]
    if show_values:
        layers.append(base.mark_text(fontSize=11).encode(x=x, y=y, text="shown:N",
                                                        color=alt.value("#111111")))
    chart = alt.layer(*layers).properties(title=title)
    if cell_size:
        # alt.Step, not pixels: a layered chart with a pixel size collapses in Streamlit 1.67.
        chart = chart.properties(width=alt.Step(cell_size), height=alt.Step(cell_size))
    return chart


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
) -> alt.Chart:
    """Bars in the given order, optionally highlighting some (e.g. tokens that survive top-k)."""
    frame = pd.DataFrame({"label": list(labels), "value": list(values)})
    frame["shown"] = [format(v, value_format) for v in frame["value"]]
    frame["highlight"] = list(highlight) if highlight is not None else [True] * len(frame)
    label_enc = alt.Y if horizontal else alt.X
    value_enc = alt.X if horizontal else alt.Y
    chart = alt.Chart(frame).mark_bar().encode(
        label_enc("label:N", sort=list(labels), title=y_title if horizontal else x_title,
                  axis=alt.Axis(labelLimit=160)),
        value_enc("value:Q", title=x_title if horizontal else y_title),
        opacity=alt.condition("datum.highlight", alt.value(1.0), alt.value(0.3)),
        tooltip=[alt.Tooltip("label:N"), alt.Tooltip("shown:N", title=x_title if horizontal else y_title)],
    )
    return chart.properties(title=title)
