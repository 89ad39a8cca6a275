"""A student's class: joining, following the teacher, answering, seeing the result.

The poll is a timed fragment (``follow.POLL_S``) that draws nothing: each tick is
``StudentPoll.tick`` (one small read while nothing moved). When the class moved it keeps the new
state and, if this student follows and the teacher leads with another view, applies that view
and reruns the app (``st.switch_page`` for another page); a new or revealed question reruns the
app too. Everything the student sees is drawn by the full run (banner, question, result).
"""

from __future__ import annotations

import time
from typing import Final

import streamlit as st

from core.engine.prompt import PromptProblem
from serving.classroom import follow, rules
from serving.classroom.rules import ClassError, ClassState, Question
from ui.classroom import point, predict, reveal
from ui.classroom.session import refuse, store, student_ids
from ui.classroom.view import apply_view, page_path
from ui.i18n import t
from ui.text import escape_markdown

POLL: Final = "_class_poll"
STATE: Final = "_class_state"  # the latest ClassState the poll read
JOINED: Final = "_class_joined"
FOLLOWING: Final = "_class_following"
NICKNAME: Final = "_class_nickname"
APPLIED: Final = "_class_applied"  # the view (JSON) this session last applied
DRAWN: Final = "_class_drawn"  # (question id, state) the last full run showed
GONE: Final = "_class_gone"  # the class is not there (not started yet, or ended)
OTHER: Final = "__other__"


def _poll() -> follow.StudentPoll:
    code, session = student_ids()
    poll = st.session_state.get(POLL)
    if not isinstance(poll, follow.StudentPoll) or (poll.code, poll.session) != (code, session):
        poll = st.session_state[POLL] = follow.StudentPoll(code, session)
    return poll


def _join() -> bool:
    """Join (again); False while there is no class to join."""
    code, session = student_ids()
    try:
        me = store().join(code, session, st.session_state.get(NICKNAME))
    except ClassError as error:
        if error.code != "no_class":
            refuse(error.code)
        st.session_state[GONE] = True
        return False
    st.session_state[JOINED] = True
    st.session_state[GONE] = False
    st.session_state[FOLLOWING] = me.following
    _poll().seen_version = 0  # read the whole state on the next tick
    return True


def _fragment_rerun() -> bool:
    """Is this run a fragment's own (timed) rerun, not a full run of the page?"""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def _question_key(state: ClassState | None) -> tuple[int, str] | None:
    question = state.question if state is not None else None
    return (question.qid, question.state) if question is not None else None


def tick(page_id: str) -> None:
    """One poll (the fragment's body; also run inline by each full run)."""
    joined_now = False
    if not st.session_state.get(JOINED):
        if not _join():
            return
        st.session_state.pop(APPLIED, None)
        joined_now = True
    try:
        changed = _poll().tick(store(), time.monotonic())
    except ClassError as error:
        if error.code == "not_joined":  # forgotten after a long silence: join again next tick
            st.session_state[JOINED] = False
        elif error.code == "no_class":  # the teacher ended the class
            st.session_state[JOINED] = False
            st.session_state[GONE] = True
            st.session_state[STATE] = None
            if _fragment_rerun() and st.session_state.get(DRAWN) != "gone":
                st.rerun(scope="app")
        return
    if changed is None:
        return
    st.session_state[STATE] = changed
    if joined_now and _fragment_rerun():  # the banner and the question appear with the class
        st.session_state[DRAWN] = "joining"
    view = changed.view
    if st.session_state.get(FOLLOWING, True) and changed.lead and view is not None:
        wanted = view.to_json()
        if wanted != st.session_state.get(APPLIED):
            st.session_state[APPLIED] = wanted
            apply_view(view)
            if view.page != page_id:
                st.switch_page(page_path(view.page))
            if _fragment_rerun():  # a full run draws the applied values anyway
                st.rerun(scope="app")
    if _fragment_rerun() and _question_key(changed) != st.session_state.get(DRAWN):
        st.rerun(scope="app")


@st.fragment(run_every=follow.POLL_S)
def _poll_fragment(page_id: str) -> None:
    tick(page_id)


def poll(page_id: str) -> None:
    """Start (or keep) this student's poll; on a full run it ticks once before the page draws."""
    _poll_fragment(page_id)


# --- what the student sees -------------------------------------------------------------------


def _set_following(on: bool) -> None:
    code, session = student_ids()
    try:
        store().set_following(code, session, on)
    except ClassError as error:
        refuse(error.code)
        return
    st.session_state[FOLLOWING] = on
    if on:  # take the teacher's view now
        st.session_state.pop(APPLIED, None)
        _poll().seen_version = 0


def _set_nickname() -> None:
    given = st.session_state.get("class_nickname_input", "")
    code, session = student_ids()
    try:
        name = rules.clean_nickname(given)
        store().join(code, session, name)
    except ClassError as error:
        refuse(error.code)
        return
    st.session_state[NICKNAME] = name


def banner() -> None:
    """Following or exploring, with the one button that switches; the nickname; class gone."""
    if st.session_state.get(GONE):
        st.session_state[DRAWN] = "gone"
        st.info(t("classroom.student.waiting"), icon="⏳")
        return
    following = bool(st.session_state.get(FOLLOWING, True))
    state = st.session_state.get(STATE)
    lead = bool(state is not None and state.lead)
    with st.container(key="class_banner", border=True):
        cols = st.columns([3, 2], vertical_alignment="center")
        if following:
            cols[0].markdown(t("classroom.student.following" if lead else "classroom.student.following_idle"))
            cols[1].button(t("classroom.student.explore"), key="class_explore", on_click=_set_following, args=(False,),
                           width="stretch")
        else:
            cols[0].markdown(t("classroom.student.exploring"))
            cols[1].button(t("classroom.student.follow"), key="class_follow", on_click=_set_following, args=(True,),
                           type="primary", width="stretch")
        name = st.session_state.get(NICKNAME)
        with st.expander(t("classroom.student.nickname_title", name=escape_markdown(name)) if name
                         else t("classroom.student.nickname_none")):
            st.text_input(t("classroom.student.nickname"), max_chars=rules.MAX_NICKNAME_CHARS,
                          key="class_nickname_input", help=t("classroom.student.nickname_help"))
            st.button(t("classroom.student.nickname_save"), key="class_nickname_save", on_click=_set_nickname)


def question_panel() -> None:
    """The current question: the answer form while open, a note while closed, the result once revealed."""
    state = st.session_state.get(STATE)
    st.session_state[DRAWN] = _question_key(state) if not st.session_state.get(GONE) else "gone"
    question = state.question if state is not None else None
    if question is None or st.session_state.get(GONE):
        return
    code, session = student_ids()
    with st.container(key="class_question", border=True):
        st.markdown(f"#### {t('classroom.q.title', n=question.qid)}")
        st.markdown(reveal.question_text(question))
        if question.state == rules.REVEALED:
            try:
                tally = store().tally(code, question.qid)
            except ClassError as error:
                refuse(error.code)
                return
            reveal.show_result(question, tally, key=f"class_result_{question.qid}")
            return
        try:
            mine = store().my_answer(code, session, question.qid)
        except ClassError:
            mine = None
        if mine is not None:
            st.success(t("classroom.student.your_answer", answer=escape_markdown(_answer_label(question, mine))))
        if question.state == rules.CLOSED:
            st.info(t("classroom.student.closed"))
            return
        _answer_form(question)


def _answer_label(question: Question, counted: str) -> str:
    if question.kind == "choice":
        labels = reveal.option_labels(question)
        if counted.isdigit() and int(counted) < len(labels):
            return f"{chr(65 + int(counted))}. {labels[int(counted)]}"
    if question.kind == "point":
        return point.cell_label(question, counted)
    return counted


def _answer_form(question: Question) -> None:
    form_key = f"class_answer_{question.qid}"
    if question.kind == "choice" and not reveal.option_labels(question):
        return  # a bank id this server's bank lacks: the question's line already says it cannot be shown
    with st.form(form_key, border=False):
        if question.kind == "next_token":
            try:
                options = predict.candidates(str(question.spec["model"]), str(question.spec["prompt"]))
            except PromptProblem:
                options = []
            st.radio(t("classroom.student.pick"), [*options, OTHER], index=None, key=f"{form_key}_pick",
                     format_func=lambda o, other=t("classroom.student.other"): (
                         other if o == OTHER else escape_markdown(o)),
                     horizontal=True)
            st.text_input(t("classroom.student.type"), max_chars=rules.MAX_ANSWER_CHARS, key=f"{form_key}_typed")
        elif question.kind == "choice" and reveal.option_labels(question):
            labels = reveal.option_labels(question)  # typed, or the bank's in this student's language
            st.radio(t("classroom.student.choose"), list(range(len(labels))), index=None, key=f"{form_key}_pick",
                     format_func=lambda i: f"{chr(65 + i)}. {escape_markdown(labels[i])}")
        elif question.kind == "point":
            point.answer_controls(question, form_key)
        st.form_submit_button(t("classroom.student.send"), type="primary", on_click=_send, args=(question,))


def _send(question: Question) -> None:
    form_key = f"class_answer_{question.qid}"
    pick = st.session_state.get(f"{form_key}_pick")
    if question.kind == "next_token":
        typed = st.session_state.get(f"{form_key}_typed") or ""
        answer = typed if typed.strip() else (pick if pick not in (None, OTHER) else None)
    elif question.kind == "point":
        answer = point.picked(question, form_key)
    else:
        answer = pick
    if answer is None:
        refuse("bad_answer")
        return
    code, session = student_ids()
    try:
        store().answer(code, session, question.qid, answer)
    except ClassError as error:
        refuse(error.code)
