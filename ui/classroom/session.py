"""Who this session is in the class, and the one class store of the process.

Class mode is on when the server has a teacher key (``TOKEN_JOURNEY_TEACHER_KEY``, drawn by the
launchers at each start: docs/class_mode.md). A session opened with the teacher link
(``?teacher=<key>``) becomes the teacher after a constant-time check (``keys.authorize``); its
``TeacherPass`` is kept in this session's state only, never in a widget or a URL, and the key
leaves the address bar at once. A session opened with the student link (``?class=<code>``) is a
student with a random session id drawn here (never taken from the browser).

Every teacher action goes through ``teacher_pass()``, which returns a pass only if the object in
the session is one ``authorize`` made: a crafted session value is no pass (``keys.pass_code``).
Refusals are queued as ``ClassError`` codes and shown translated by ``show_refusals``.
"""

from __future__ import annotations

import uuid
from functools import lru_cache
from typing import Final

import streamlit as st

from serving import settings as _settings
from serving.classroom.keys import TeacherPass, authorize, class_code, pass_code
from serving.classroom.links import CLASS_PARAM, TEACHER_PARAM
from serving.classroom.rules import ClassError, check_code
from serving.classroom.store import ClassStore, open_store
from ui import nav
from ui.i18n import t

TEACHER: Final = "teacher"
STUDENT: Final = "student"

# Session keys (none is a widget key: no browser message can write them).
ROLE: Final = "_class_role"
PASS: Final = "_class_pass"
CODE: Final = "_class_code"
SESSION_ID: Final = "_class_session"
LINK_READ: Final = "_class_link_read"
REFUSALS: Final = "_class_refusals"


def teacher_key() -> str:
    """The server's teacher key ('' when class mode is off)."""
    return _settings.active().teacher_key


def class_mode_on() -> bool:
    return bool(teacher_key())


@lru_cache(maxsize=4)
def _open(redis_url: str, class_dir: str) -> ClassStore:
    page_ids = [page.page_id for _, pages in nav.SECTIONS for page in pages]
    return open_store(redis_url, class_dir, page_ids)


def store() -> ClassStore:
    """The process' class store (one per backend address; SQLite connections are per process)."""
    settings = _settings.active()
    return _open(settings.redis_url, settings.class_dir)


def read_link() -> None:
    """Once per session, before ``ui.state`` reads the link: take the teacher key or the class
    code from the address. The key is dropped from the address whatever it was."""
    if not class_mode_on():
        return
    params = st.query_params
    given = params.get(TEACHER_PARAM)
    if TEACHER_PARAM in params:
        del st.query_params[TEACHER_PARAM]  # a projected address bar must never show it
    if st.session_state.get(LINK_READ):
        return
    st.session_state[LINK_READ] = True
    if given is not None:
        try:
            teacher = authorize(given, teacher_key())
            store().open_class(teacher)
        except ClassError as error:
            refuse(error.code)
        else:
            st.session_state[ROLE] = TEACHER
            st.session_state[PASS] = teacher
            return
    code = params.get(CLASS_PARAM)
    if code is None:
        return
    try:
        code = check_code(code)
        if code != class_code(teacher_key()):
            raise ClassError("no_class")
    except ClassError as error:
        refuse(error.code)
        return
    st.session_state[ROLE] = STUDENT
    st.session_state[CODE] = code
    st.session_state[SESSION_ID] = uuid.uuid4().hex


def teacher_pass() -> TeacherPass | None:
    """This session's pass, only if it is a real one for this server's class."""
    if not class_mode_on():
        return None
    candidate = st.session_state.get(PASS)
    try:
        if pass_code(candidate) != class_code(teacher_key()):
            return None
    except ClassError:
        return None
    return candidate  # type: ignore[return-value]


def role() -> str | None:
    """``TEACHER``, ``STUDENT`` or None (not in a class). The teacher role needs a real pass."""
    if not class_mode_on():
        return None
    if teacher_pass() is not None:
        return TEACHER
    if st.session_state.get(ROLE) == STUDENT and isinstance(st.session_state.get(CODE), str):
        return STUDENT
    return None


def student_ids() -> tuple[str, str]:
    """(class code, session id) of this student session."""
    return st.session_state[CODE], st.session_state[SESSION_ID]


def link_extras() -> dict[str, str]:
    """What this session's address carries besides the view: a student's class code (a reload
    joins again); never the teacher key."""
    if role() == STUDENT:
        return {CLASS_PARAM: st.session_state[CODE]}
    return {}


def refuse(code: str) -> None:
    """Queue a refusal (a ``ClassError`` code) to show, translated, on the next drawing."""
    queued: list[str] = st.session_state.setdefault(REFUSALS, [])
    if code not in queued:
        queued.append(code)


def show_refusals() -> None:
    for code in st.session_state.pop(REFUSALS, []):
        text = t(f"class.error.{code}")
        st.error(text if not text.startswith("⟦") else t("class.error.bad_text"), icon="⛔")
