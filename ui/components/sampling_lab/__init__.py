"""The sampling knobs in the browser: temperature, top-k and top-p over one position's logits.

A Streamlit components-v2 component (``frontend/src/sampling_lab.ts``, bundled, no CDN). Python
sends the position's logits once (the exact float32 values, base64) with the tokens to show and
the page's words; the browser ranks them as core does and recomputes ``core.engine.sampling``'s
steps on every move (``sampling.ts``), sending nothing. Buttons for server actions (Draw, Next
token, Run, Reset) send ``{"kind": ..., "knobs": {...}}``; a callback checks the kind against the
buttons drawn and commits the knob values (``ui.components.knobs``) before the run, and ``take``
hands the page the accepted action.
Used by the Logits page and Generation's preview. The Logits page's first section is a second
mount of the same component (``softmax``): its "Tokens to show (N)" knob picks how many of the 30
most probable tokens get a bar, and the knobs' lab below shows the same N (``lab(top_n=...)``).
"""

from __future__ import annotations

import base64
from functools import partial
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from ui import state
from ui.components import knobs
from ui.components.knobs import Knob
from ui.i18n import t
from ui.presenter import presenter_on

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.sampling_lab"
PARTS = ("note", "metrics", "chart", "cuts", "table")

_mount = st.components.v2.component(
    COMPONENT_NAME,
    js=(BUILD / "sampling_lab.js").read_text(encoding="utf-8"),
    css=(BUILD / "sampling_lab.css").read_text(encoding="utf-8"),
    isolate_styles=True,
)

# Browser label -> i18n key (shared by both pages; a page may replace some, e.g. its knob labels).
LABELS: dict[str, str] = {
    "temperature": "logits_sampling.temperature", "temperature_help": "logits_sampling.temperature.help",
    "top_k": "logits_sampling.top_k", "top_p": "logits_sampling.top_p", "top_p_help": "logits_sampling.top_p.help",
    "off": "logits_sampling.off", "greedy": "logits_sampling.greedy", "sharper": "logits_sampling.temp.sharper",
    "flatter": "logits_sampling.temp.flatter", "final_top": "logits_sampling.metric.final_top",
    "final_top_prob": "logits_sampling.metric.final_top_prob", "candidates": "logits_sampling.metric.candidates",
    "candidates_help": "logits_sampling.metric.candidates.help", "entropy_final": "logits_sampling.metric.entropy_final",
    "status_kept": "logits_sampling.status.kept", "status_top_k": "logits_sampling.status.top_k",
    "status_top_p": "logits_sampling.status.top_p", "status_greedy": "logits_sampling.status.greedy",
    "compare_title": "logits_sampling.chart.compare.title", "series": "logits_sampling.legend.series",
    "original": "logits_sampling.legend.original", "after": "logits_sampling.legend.after",
    "status": "logits_sampling.legend.status", "axis_token": "logits_sampling.axis.token",
    "axis_prob": "logits_sampling.axis.prob", "cut_top_k": "logits_sampling.cut.top_k",
    "cut_top_k_off": "logits_sampling.cut.top_k_off", "cut_top_p": "logits_sampling.cut.top_p",
    "cut_top_p_off": "logits_sampling.cut.top_p_off", "table_title": "logits_sampling.table.title",
    "table_token": "logits_sampling.table.token", "table_id": "logits_sampling.table.id",
    "table_logit": "logits_sampling.table.logit", "table_original": "logits_sampling.table.original",
    "table_tempered": "logits_sampling.table.tempered", "table_after_k": "logits_sampling.table.after_k",
    "table_final": "logits_sampling.table.final", "table_status": "logits_sampling.table.status",
    "table_caption": "logits_sampling.table.caption",
}


TOP_N = Knob("logits_sampling_top_n", 5, 30)  # how many tokens get a bar (the Logits page)
N_SAMPLES = Knob("logits_sampling_n_samples", 1, 1000)  # how many seeded draws (the Logits page)
PAGE_KNOBS = {k.name: k for k in (TOP_N, N_SAMPLES)}  # the page knobs a lab's press may carry too
HISTOGRAM_TOKENS = 12  # bars in the draws' histogram; the rest is one "other" bar

# The draws section's words (browser label -> i18n key).
DRAWS_LABELS: dict[str, str] = {
    "n_samples": "logits_sampling.n_samples", "title": "logits_sampling.chart.hist.title",
    "series": "logits_sampling.legend.series", "observed": "logits_sampling.legend.observed",
    "expected": "logits_sampling.legend.expected", "axis_token": "logits_sampling.axis.token",
    "axis_share": "logits_sampling.axis.share", "axis_count": "logits_sampling.axis.count",
    "other": "logits_sampling.hist.other", "caption": "logits_sampling.hist.caption",
}

# The softmax section's words (browser label -> i18n key).
SOFTMAX_LABELS: dict[str, str] = {
    "top_n": "logits_sampling.top_n", "top_n_help": "logits_sampling.top_n.help",
    "top_token": "logits_sampling.metric.top_token", "top_prob": "logits_sampling.metric.top_prob",
    "tail": "logits_sampling.metric.tail", "tail_help": "logits_sampling.metric.tail.help",
    "entropy": "logits_sampling.metric.entropy", "entropy_help": "logits_sampling.metric.entropy.help",
    "tail_label": "logits_sampling.tail_label", "chart_title": "logits_sampling.chart.top.title",
    "axis_prob": "logits_sampling.axis.prob", "axis_token": "logits_sampling.axis.token",
    "axis_logit": "logits_sampling.axis.logit", "kind_title": "logits_sampling.legend.kind",
    "kind_top": "logits_sampling.legend.top", "kind_tail": "logits_sampling.legend.tail",
}


def sampling_knobs(vocab_size: int) -> tuple[Knob, ...]:
    """The shared sampling knobs with the ranges the pages offer (top-k up to the vocabulary)."""
    return (
        Knob("sampling_temperature", 0.0, 3.0),
        Knob("sampling_top_k", 0, vocab_size),
        Knob("sampling_top_p", 0.05, 1.0),
    )


@dataclass(frozen=True)
class Button:
    """A server action: ``kind`` comes back with the knobs when it is pressed."""

    kind: str
    label: str
    primary: bool = False
    disabled: bool = False


def encode_logits(logits: np.ndarray) -> str:
    """One position's logits as base64 little-endian float32: the model's exact values, ~4 bytes
    a token (the browser widens them to float64, as core does)."""
    return base64.b64encode(np.ascontiguousarray(logits, dtype="<f4").tobytes()).decode("ascii")


def labels(overrides: Mapping[str, str] | None = None, **filled: str) -> dict[str, str]:
    """The component's words in the session's language: templates stay raw (the browser fills
    {t}, {k}, ...); ``filled`` gives labels already filled in; ``overrides`` maps a label to another key."""
    keys = {**LABELS, **(overrides or {})}
    return {**{name: t(key) for name, key in keys.items()}, **filled}


def take(key: str) -> dict[str, Any] | None:
    """The press of a button of the component ``key`` since the last run, already accepted and
    its knob values committed (``{"kind", "knobs"}``), or None. Call it before drawing what the
    action changes; the press is taken in the component's ``on_action_change`` callback, which
    Streamlit runs before the script, so the whole run sees the committed knobs."""
    pending = st.session_state.pop(_PENDING + key, None)
    state.show_notes()  # a knob value the callback rejected: the translated note, now in the run
    return pending


def softmax(*, key: str, shown_ids: Sequence[int], shown_labels: Sequence[str], probs: Sequence[float],
            logits: Sequence[float], entropy: float, vocab_size: int) -> None:
    """The Logits page's softmax section: the top tokens (``TOP_N.high`` of them, best first) with
    their probabilities and logits, and the whole distribution's ``entropy``; the browser shows the
    first N (the durable ``logits_sampling_top_n``) and one bar for the rest. Sends nothing back."""
    data = {
        "view": "softmax",
        "top_n": knobs.specs((TOP_N,))[0],
        "shown": {"ids": [int(i) for i in shown_ids], "labels": [str(s) for s in shown_labels]},
        "probs": [float(p) for p in probs],
        "logits": [float(v) for v in logits],
        "entropy": float(entropy),
        "vocab_size": int(vocab_size),
        "labels": {name: t(k) for name, k in SOFTMAX_LABELS.items()},
        "presenter": presenter_on(),
    }
    _mount(key=key, data=data, width="stretch", height="content")
    state.show_notes()  # a crafted durable N ``knobs.specs`` just reset: said now


def draws(*, key: str, final: np.ndarray, final_order: np.ndarray, seed: int, label_of: Any) -> None:
    """The seeded draws of the Logits page: ``core.engine.sampling.sample(final, n=1000, seed)``
    once; the browser shows the first N (the durable ``logits_sampling_n_samples``) as a
    histogram against ``final`` (N draws with a seed are the first N of 1000 with it)."""
    from core.engine.sampling import sample

    drawn = [int(i) for i in sample(final, n=int(N_SAMPLES.high), seed=seed)]
    top = [int(i) for i in final_order[final[final_order] > 0][:HISTOGRAM_TOKENS]]
    ids = sorted(set(top) | set(drawn))
    names = label_of(ids)
    data = {
        "view": "draws",
        "n_samples": knobs.specs((N_SAMPLES,))[0],
        "draws": drawn, "top": top, "bars": HISTOGRAM_TOKENS, "seed": int(seed),
        "probs": {str(i): float(final[i]) for i in ids},
        "names": {str(i): str(name) for i, name in zip(ids, names)},
        "labels": {name: t(k) for name, k in DRAWS_LABELS.items()},
        "presenter": presenter_on(),
    }
    _mount(key=key, data=data, width="stretch", height="content")
    state.show_notes()


def lab(*, key: str, logits: np.ndarray, shown_ids: Sequence[int], shown_labels: Sequence[str], top_label: str,
        words: Mapping[str, str], vocab_size: int, buttons: Sequence[Button] = (),
        parts: Sequence[str] = PARTS, top_n: bool = False, extra: Sequence[Knob] = ()) -> None:
    """Draw the knobs over ``logits`` (one position, the whole vocabulary) with ``parts`` and the
    ``buttons`` (server actions: ``take(key)`` returns a press in the next run). ``top_n``: show
    only the first N of ``shown_ids``, N being the softmax section's knob (``softmax``), which a
    press then commits with the sampling knobs; ``extra``: other page knobs (``PAGE_KNOBS``) a
    press carries and commits too."""
    st.session_state[_ALLOWED + key] = [b.kind for b in buttons if not b.disabled]
    carried = [*((TOP_N,) if top_n else ()), *(k for k in extra if k.name in PAGE_KNOBS)]
    st.session_state[_EXTRA + key] = [k.name for k in carried]
    data = {
        "knobs": knobs.specs(sampling_knobs(vocab_size)),
        "logits": encode_logits(logits),
        "shown": {"ids": [int(i) for i in shown_ids], "labels": [str(s) for s in shown_labels]},
        "top_label": str(top_label),
        "labels": dict(words),
        "actions": [{"kind": b.kind, "label": b.label, "primary": b.primary, "disabled": b.disabled} for b in buttons],
        "parts": [p for p in parts if p in PARTS],
        "presenter": presenter_on(),
        **({"top_n": knobs.specs((TOP_N,))[0]} if top_n else {}),
        "extra": knobs.specs([k for k in carried if k is not TOP_N]),
    }
    _mount(key=key, data=data, on_action_change=partial(_on_action, key, vocab_size), width="stretch", height="content")
    state.show_notes()  # a crafted durable value ``knobs.specs`` just reset: said now


_ALLOWED = "_sampling_lab_allowed."  # + key: the enabled buttons' kinds drawn last run
_PENDING = "_sampling_lab_pending."  # + key: an accepted press, for this run to act on
_EXTRA = "_sampling_lab_extra."  # + key: the page knobs (names) its press also carries


def _on_action(key: str, vocab_size: int) -> None:
    value = st.session_state.get(key)
    action = value.get("action") if isinstance(value, dict) else None
    names = st.session_state.get(_EXTRA + key) or ()
    committed = (*sampling_knobs(vocab_size), *(PAGE_KNOBS[n] for n in names if n in PAGE_KNOBS))
    accepted = accept(action, st.session_state.get(_ALLOWED + key, ()), committed)
    if accepted is not None:
        st.session_state[_PENDING + key] = accepted


def accept(action: Any, allowed: Sequence[str], sampling: Sequence[Knob]) -> dict[str, Any] | None:
    """``action`` if it names an enabled button drawn last run (its knobs committed), else None:
    a tampered client can send anything."""
    if not isinstance(action, dict):
        return None
    kind = action.get("kind")
    if not isinstance(kind, str) or kind not in allowed:
        return None
    return {"kind": kind, "knobs": knobs.commit(action.get("knobs"), sampling)}
