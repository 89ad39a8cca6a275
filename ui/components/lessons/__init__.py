"""Lesson knobs answered in the browser: Streamlit components-v2 modules (bundled JS, no CDN).

The Positional-encoding page's sinusoidal sections and the Self-attention page's steps 3-6 and
softmax lab draw in the browser from data sent once: moving one of their knobs (d_model, the
base, a position, ÷√d_k, the causal mask, the followed query, the lab's scores) recomputes and
redraws there with zero websocket messages. The browser code is
``ui/components/frontend/src/{positional_view,attention_view}.ts`` with the math in
``src/lessons/`` (the same steps as ``core.lessons.positional`` and
``core.lessons.attention_math``; the e2e tests compare them on random cases).

What Python sends: the numbers the knobs do not change (Q, K, V, Q·Kᵀ), the knobs
(``knob_specs``: the browser knobs' shared contract, ``ui/components/knobs.py`` and
``frontend/src/knob_state.ts``, with a kind so that flags, lists and texts travel too), their
limits, and every label already translated. A moved knob stays in the browser (sessionStorage
and the address bar: it survives a page change and the link carries it; a fresh load of the link
is read by ``ui.state.read_url``, checked, and comes back here). These components send nothing
back, so no value from the browser is read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from ui import state
from ui.i18n import current_language, t
from ui.presenter import presenter_on

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
POSITIONAL = "token_journey.positional"
ATTENTION = "token_journey.attention"


def _read(name: str) -> str:
    return (BUILD / name).read_text(encoding="utf-8")


# Registered at import, as the journey and the 3-D space are (Streamlit keeps a registry).
_positional = st.components.v2.component(POSITIONAL, js=_read("positional.js"), css=_read("lessons.css"),
                                         isolate_styles=True)
_attention = st.components.v2.component(ATTENTION, js=_read("attention.js"), css=_read("lessons.css"),
                                        isolate_styles=True)


def labels(mapping: Mapping[str, str]) -> dict[str, str]:
    """{short name: translated text}; templates keep their {placeholders}: filled in the browser."""
    return {short: t(key) for short, key in mapping.items()}


def _encoded(value: Any, default: Any) -> tuple[str, Any]:
    """(kind, the value as the browser's knob state keeps it: a number or its link text)."""
    if isinstance(value, bool):
        return "flag", int(value)
    if isinstance(value, int):
        return "int", value
    if value is None or isinstance(value, (list, tuple)):
        return "list", ",".join(str(i) for i in (default if value is None else value))
    return "text", str(value)


def knob_specs(values: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each knob as the browser's ``KnobSpec`` (name, the durable value the page read and checked,
    the default that stays out of the link) plus its kind. ``defaults``: a page's own default
    (the pairs drawn depend on the width); a list value None means "the default"."""
    lang = current_language()
    out = []
    for name, value in values.items():
        default = (defaults or {}).get(name, state.SPECS[name].default_for(lang))
        kind, encoded = _encoded(value, default)
        out.append({"name": name, "kind": kind, "value": encoded, "default": _encoded(default, default)[1]})
    return out


def positional(data: dict[str, Any], *, key: str) -> None:
    """One view of the positional-encoding lesson (``data["view"]``: table, vector, relative)."""
    _positional(key=key, data={**data, "presenter": presenter_on()}, width="stretch", height="content")


def attention(data: dict[str, Any], *, key: str) -> None:
    """One view of the self-attention lesson (``data["view"]``: steps, lab)."""
    _attention(key=key, data={**data, "presenter": presenter_on()}, width="stretch", height="content")
