"""Lesson knobs answered in the browser: Streamlit components-v2 modules (bundled JS, no CDN).

The Positional-encoding page's sinusoidal sections and the Self-attention page's steps 3-6 and
softmax lab draw in the browser from data sent once: moving one of their knobs (d_model, the
base, a position, ÷√d_k, the causal mask, the followed query, the lab's scores) recomputes and
redraws there with zero websocket messages. The browser code is
``ui/components/frontend/src/{positional_view,attention_view}.ts`` with the math in
``src/lessons/`` (the same steps as ``core.lessons.positional`` and
``core.lessons.attention_math``; the e2e tests compare them on random cases).

What Python sends: the numbers the knobs do not change (Q, K, V, Q·Kᵀ), the knobs' durable
values (``ui.state``, each checked there; the browser checks them again), their limits, and
every label already translated. These components send nothing back, so no value from the
browser is read here; the durable value reaches the server through the link (``ui.state``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from ui.i18n import t
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


def positional(data: dict[str, Any], *, key: str) -> None:
    """One view of the positional-encoding lesson (``data["view"]``: table, vector, relative)."""
    _positional(key=key, data={**data, "presenter": presenter_on()}, width="stretch", height="content")


def attention(data: dict[str, Any], *, key: str) -> None:
    """One view of the self-attention lesson (``data["view"]``: steps, lab)."""
    _attention(key=key, data={**data, "presenter": presenter_on()}, width="stretch", height="content")
