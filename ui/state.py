"""The one place that defines durable session-state keys and their defaults.

Streamlit drops a widget's own state when the user changes page, so every durable value
(language, prompt, model, seed) lives under its own key here and is copied into the
widget's key on every run (see ``bind_widget``); the widget writes back through
``on_change``. This keeps choices across page changes and direct page links.
"""

from __future__ import annotations

from typing import Any, Final

import streamlit as st

from ui.i18n import language_from_locale

LANG: Final = "lang"
PROMPT: Final = "prompt"
MODEL: Final = "model"
SEED: Final = "seed"

BUILTIN_MODELS: Final[tuple[str, ...]] = ("classic", "modern")
DEFAULT_PROMPT: Final = "The capital of France is"
MAX_SEED: Final = 2**31 - 1

DEFAULTS: Final[dict[str, Any]] = {
    PROMPT: DEFAULT_PROMPT,
    MODEL: "classic",
    SEED: 0,
}


def _browser_locale() -> str | None:
    try:
        return st.context.locale
    except Exception:  # AppTest and very old browsers have no locale
        return None


def init() -> None:
    """Fill in any missing durable key with its default (language from the browser)."""
    if LANG not in st.session_state:
        st.session_state[LANG] = language_from_locale(_browser_locale())
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value


def get(key: str) -> Any:
    init()
    return st.session_state[key]


def put(key: str, value: Any) -> None:
    st.session_state[key] = value


def widget_key(key: str) -> str:
    return f"w_{key}"


def bind_widget(key: str) -> str:
    """Copy a durable value into its widget key before the widget is drawn.

    Returns the widget key, to pass as ``key=`` together with ``on_change=commit(key)``.
    """
    init()
    wkey = widget_key(key)
    st.session_state[wkey] = st.session_state[key]
    return wkey


def commit(key: str):
    """An ``on_change`` callback that writes the widget's value back to the durable key."""

    def _commit() -> None:
        st.session_state[key] = st.session_state[widget_key(key)]

    return _commit


# Sampling knobs shared by the Logits & sampling and Generation pages (durable keys).
SAMPLING_DEFAULTS: Final[dict[str, Any]] = {
    "sampling_temperature": 1.0,
    "sampling_top_k": 0,
    "sampling_top_p": 1.0,
}


def bind_clamped(durable: str, widget_key: str, clamp: tuple[float, float]) -> str:
    """Copy a durable knob into a page's widget before drawing, clamped to the widget's range.

    Pages may give the same knob different ranges (top-k up to the model's vocabulary), so
    the durable value is clamped before it reaches the widget.
    """
    value = st.session_state.get(durable, SAMPLING_DEFAULTS[durable])
    low, high = clamp
    st.session_state[durable] = type(SAMPLING_DEFAULTS[durable])(min(max(value, low), high))
    st.session_state[widget_key] = st.session_state[durable]
    return widget_key


def commit_to(durable: str, widget_key: str):
    """An ``on_change`` callback writing a page widget's value back to a durable key."""

    def _commit() -> None:
        st.session_state[durable] = st.session_state[widget_key]

    return _commit
