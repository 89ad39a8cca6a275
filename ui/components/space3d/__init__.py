"""A 3-D point space the student can turn: a Streamlit components-v2 component (canvas 2-D).

Used for the embedding map (Embeddings, Training) and the similarity lab's arrows. Plotly's
3-D scatter needs WebGL, which a classroom machine without a GPU draws in software (the
Embeddings page's first drawing took seconds); this component sorts about a thousand dots by
depth and paints them on a canvas in milliseconds. Python builds the data
(``ui.charts.space3d``, once per input, shared read-only); the browser keeps each map's
rotation, zoom and hidden legend groups across reruns, and shows or hides a group without
a round trip; the embedding map's own toggles (hide the uncategorised tokens, which PCA fit)
answer there too, their durable values kept by ``knob_state.ts`` (sessionStorage, the address bar). The
component sends nothing back, so no value from the browser is read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from ui.charts.space3d import SpaceLabels
from ui.i18n import t
from ui.presenter import presenter_on

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.space3d"

_mount = st.components.v2.component(
    COMPONENT_NAME,
    js=(BUILD / "space3d.js").read_text(encoding="utf-8"),
    css=(BUILD / "space3d.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)


def space_labels() -> SpaceLabels:
    """The component's own words in the session's language."""
    return SpaceLabels(
        token=t("embeddings.axis.token"), id=t("embeddings.lookup.col_id"), group=t("embeddings.map.category"),
        vector=t("embeddings.axis.vector"), reset=t("space3d.reset"), zoom_in=t("space3d.zoom_in"),
        zoom_out=t("space3d.zoom_out"), hint=t("space3d.hint"), legend=t("space3d.legend"),
    )


def cached(builder: Any, args: tuple = (), kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``builder(*args, **kwargs)`` (a ``ui.charts.space3d`` builder), built once per input and
    shared read-only by every session."""
    from serving.registry import memo

    @memo(maxsize=64)  # bounded by bytes too (serving.registry)
    def build(builder: Any, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        return builder(*args, **kwargs)

    return build(builder, tuple(args), dict(kwargs or {}))


def space3d(data: Mapping[str, Any], *, key: str, views: Mapping[str, Any] | None = None) -> None:
    """Draw one 3-D space; ``key`` names it (its rotation survives reruns under that key).

    The canvas is named by a one-sentence summary and followed by its numbers as a table.
    ``views`` (the embedding map's display toggles, answered in the browser): ``knobs`` (``only``
    and ``fit``: knob_state.ts's KnobSpec {name, value, default} of their ``ui.state`` flags, as
    0 / 1), ``only_label``, ``fit_label``, ``fit_help``, ``other_group`` (the group "only
    categories" hides) and ``fits`` (per fit: key = the fit knob's value, label, axes, x, y, z of
    every point in ``data``'s order, caption).
    """
    from ui.chart_table import show_chart_table
    from ui.charts.space3d import space_facts, space_summary
    from ui.i18n import current_language

    summary = space_summary(data, current_language())
    _mount(key=key, data={**data, "views": views, "summary": summary, "presenter": presenter_on()},
           width="stretch", height="content")
    show_chart_table(space_facts(data), summary)
