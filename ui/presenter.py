"""Presenter mode: larger letters in charts and diagrams for a projector.

Kept apart from ``ui.charts`` (which imports Altair, pandas and Plotly): the Overview and the
page shell only need to know whether the switch is on, and the first student of a fresh server
should not wait for the chart libraries to import before the Overview is drawn.
"""

from __future__ import annotations

PRESENTER_KEY = "presenter"  # durable session key of the sidebar's presenter switch (ui.state.PRESENTER)


def presenter_on() -> bool:
    """Is this session in presenter mode? (False outside a Streamlit run.)"""
    import streamlit as st

    try:
        return bool(st.session_state.get(PRESENTER_KEY, False))
    except Exception:  # no session (plain Python, unit tests)
        return False
