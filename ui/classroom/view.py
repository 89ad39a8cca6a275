"""The view the class follows: what a link to the teacher's view carries, minus the language and
the presenter switch (each student keeps their own), and never the key.

The teacher's side reads it from ``ui.state``'s link builder (``view_params``: the page's
non-default values as link text); a student's side applies it through the same declared checks
a link goes through (``Spec.parse`` + ``Spec.check``), so a view is exactly as trusted as a link.

Example: current_view("multi_head_attention") -> View("multi_head_attention", "The capital ...",
    "classic", {"mha_layer": "1", "mha_head": "3"})
"""

from __future__ import annotations

from typing import Final

import streamlit as st

from serving.classroom.rules import View
from ui import nav, state

OWN_VALUES: Final = frozenset({state.LANG, state.PRESENTER})  # each student keeps these


def current_view(page_id: str) -> View:
    """This session's view of ``page_id`` (the teacher's, to be written to the store)."""
    params = state.view_params(page_id)
    controls = {name: text for name, text in params.items()
                if name not in OWN_VALUES and name not in (state.PROMPT, state.MODEL)}
    return View(page_id, state.get(state.PROMPT), state.get(state.MODEL), controls)


def apply_view(view: View) -> None:
    """Make this session show ``view``: its prompt, model and controls (each checked like a link's
    value; a value that fails its check keeps this session's own, with the usual note), and every
    other value of that page's link back to its default."""
    given = {state.PROMPT: view.prompt, state.MODEL: view.model, **dict(view.controls)}
    lang = st.session_state.get(state.LANG, "en")
    for spec in state.SPECS.values():
        if not spec.url or spec.name in OWN_VALUES:
            continue
        if spec.pages is not None and view.page not in spec.pages:
            continue
        if spec.name not in given:
            if spec.pages is None:
                state.put(spec.name, spec.default_for(lang))
            else:
                st.session_state.pop(spec.durable, None)  # the page binds its own default
            continue
        raw = given[spec.name]
        try:
            value = spec.check(raw if spec.name in (state.PROMPT, state.MODEL) else spec.parse(str(raw)))
        except (state.Invalid, TypeError, ValueError, OverflowError):
            state.note(spec.label)
            continue
        state.put(spec.name, value)


def page_path(page_id: str) -> str:
    """The script of a page id (the store only accepts ids of ``ui.nav``)."""
    return nav.page_by_id(page_id).path
