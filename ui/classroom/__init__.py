"""Class mode's pages side (issue #45): the teacher leads, the class follows, every student answers.

The class itself lives in ``serving.classroom`` (Streamlit-free: the store, the key, the links);
this package draws it. ``ui.page`` calls four hooks, each a no-op without a teacher key (a plain
``streamlit run app.py`` is unchanged):

- ``read_link()``: before ``ui.state`` reads the link: the teacher key (checked, then dropped from
  the address) or the class code;
- ``follow(page_id)``: before the sidebar: a student's poll, which may apply the teacher's view;
- ``sidebar(page_id)``: the teacher's class controls;
- ``main_area(page_id)``: above the page's title: the student's banner and question, or the
  teacher's counts, question, result and join QR code.
"""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.classroom import session


def read_link() -> None:
    if not session.class_mode_on():
        return
    session.read_link()
    st.session_state[state.LINK_EXTRA] = session.link_extras()


def follow(page_id: str) -> None:
    if session.role() == session.STUDENT:
        from ui.classroom import student

        student.poll(page_id)


def sidebar(page_id: str) -> None:
    if session.role() == session.TEACHER:
        from ui.classroom import teacher

        teacher.sidebar_panel(page_id)


def main_area(page_id: str) -> None:
    if not session.class_mode_on():
        return
    session.show_refusals()
    who = session.role()
    if who == session.STUDENT:
        from ui.classroom import student

        student.banner()
        student.question_panel()
    elif who == session.TEACHER:
        from ui.classroom import teacher

        teacher.push_view(page_id)
        teacher.main_panel(page_id)
