"""Multi-head attention's head picker and enlarged head: a Streamlit components-v2 component.

Python sends every head's pattern and pre-softmax scores for the prompt once (straight from
the trace, ``blocks.L.attn.hook_pattern`` / ``hook_attn_scores``: the causal triangle k ≤ q,
float32), with each head's behaviour label and scores from ``core.lessons.head_analysis``.
Picking a head (a radio group over layers × heads: arrow keys, one Tab stop, touch), the head
view's query token, the scores switch or the grid switch redraws the heatmap, the grid of every
head and the head view in the browser with no message to the server. The durable values are
``ui.state``'s ``mha_layer``, ``mha_head``, ``mha_query``, ``mha_scores`` and ``mha_grid``: the
browser keeps them in the address bar (a link carries them)
and adopts the server's when those change (a link, a click in another chart). The component
sends nothing back, so no value from the browser is read here.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from ui import state
from ui.presenter import presenter_on

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.mha_heads"
# Past this many numbers (every head's triangle, weights and scores) the page keeps its
# server-side pickers: ~3 MB of base64 is the most a first visit should download for one chart.
# The built-in models' longest prompt (128 tokens, 4 × 4 heads) needs 264k.
MAX_VALUES = 600_000

_mount = st.components.v2.component(
    COMPONENT_NAME,
    js=(BUILD / "mha_heads.js").read_text(encoding="utf-8"),
    css=(BUILD / "mha_heads.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)


def fits(n_layer: int, n_head: int, n_tokens: int) -> bool:
    """Can the browser hold every head of this prompt (else the server draws one head at a time)?"""
    return 2 * n_layer * n_head * n_tokens * (n_tokens + 1) // 2 <= MAX_VALUES


def triangles(values: np.ndarray) -> str:
    """[layer, head, q, k] -> base64 of float32 (little-endian): each head's k ≤ q cells, row by row.

    Example: triangles(np.ones((1, 1, 2, 2))) decodes to [1.0, 1.0, 1.0]  # (0,0), (1,0), (1,1)
    """
    n = values.shape[-1]
    q, k = np.tril_indices(n)
    cells = np.ascontiguousarray(values[..., q, k], dtype="<f4")  # (layer, head, n(n+1)/2)
    return base64.b64encode(cells.tobytes()).decode("ascii")


def heads_data(patterns: np.ndarray, scores: np.ndarray, labels: list[str], tokens: list[str],
               behaviours: list[dict[str, Any]], behaviour_names: list[str], text: dict[str, str]) -> dict[str, Any]:
    """The component's input except the knobs: build once per (prompt, language) and share it.

    ``behaviours`` (layer-major): {"label": translated name and score, "scores": formatted scores
    in ``behaviour_names`` order}.
    """
    n_layer, n_head = patterns.shape[:2]
    return {
        "n_layer": int(n_layer), "n_head": int(n_head), "labels": list(labels), "tokens": list(tokens),
        "patterns": triangles(patterns), "scores": triangles(scores),
        "behaviours": behaviours, "behaviour_names": behaviour_names, "text": text,
    }


def mha_heads(data: dict[str, Any], *, layer: int, head: int, query: int, prompt_id: str, show_scores: bool,
              show_grid: bool, key: str) -> None:
    """Mount the picker, the heatmap and the head view; ``layer``/``head``/``query`` are the
    server's durable values (checked); ``prompt_id`` names the prompt (a new one starts the head
    view from the server's query, its last token)."""
    n = len(data["labels"])
    _mount(key=key, data={
        **data,
        "knobs": {"layer": {"name": "mha_layer", "value": int(layer), "default": 0},
                  "head": {"name": "mha_head", "value": int(head), "default": 0},
                  "query": {"name": "mha_query", "value": int(query), "default": n - 1, "scope": prompt_id},
                  # the switches: flags travel as 1 / 0 (ui.state reads them back from the link)
                  "scores": {"name": "mha_scores", "value": int(bool(show_scores)),
                             "default": int(bool(state.SPECS["mha_scores"].default))},
                  "grid": {"name": "mha_grid", "value": int(bool(show_grid)),
                           "default": int(bool(state.SPECS["mha_grid"].default))}},
        "presenter": presenter_on(),
    }, width="stretch", height="content")
