"""The teacher's class: lead, ask, reveal, export, end — and the join QR code for the room.

Every action takes this session's ``TeacherPass`` (``session.teacher_pass``): a callback that
finds none does nothing but say so, and the store refuses a missing or forged pass on its own.

The main-area panel is a timed fragment (``TICK_S``): it writes the teacher's view when it moved
(a control inside another fragment changes it without a full run), and redraws the counts.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from serving.classroom import export, rules
from serving.classroom.bank import LANGUAGES, BankQuestion, bank, choice_spec
from serving.classroom.keys import TeacherPass
from serving.classroom.links import qr_svg, student_link
from serving.classroom.rules import ClassError
from ui import state
from ui.classroom import point, reveal
from ui.classroom.session import refuse, store, teacher_pass
from ui.classroom.view import current_view
from ui.i18n import current_language, t
from ui.presenter import presenter_on
from ui.text import escape_markdown

TICK_S: Final = 1.0  # the teacher's counts and view writes: a change reaches students within 1 + 1.5 s at worst
LEAD: Final = "_class_lead_on"
PUSHED: Final = "_class_pushed"  # the view (JSON) last written
ENDED: Final = "_class_ended"
MAX_TYPED_OPTIONS: Final = rules.MAX_OPTIONS
NO_CORRECT: Final = -1
BANK_LABEL_CHARS: Final = 90  # a bank question in the sidebar's picker: one line or two


def _teacher() -> TeacherPass | None:
    found = teacher_pass()
    if found is None:
        refuse("not_teacher")
    return found


def _act(action: Any, *args: Any) -> Any:
    """Run a store action with this session's pass; a refusal is queued, translated."""
    teacher = _teacher()
    if teacher is None:
        return None
    try:
        return action(teacher, *args)
    except ClassError as error:
        refuse(error.code)
        return None


def push_view(page_id: str) -> None:
    """Write the teacher's view to the store if the teacher leads and it moved."""
    if not st.session_state.get(LEAD) or st.session_state.get(ENDED):
        return
    view = current_view(page_id)
    wanted = view.to_json()
    if wanted == st.session_state.get(PUSHED):
        return
    if _act(store().set_view, view) is not None:
        st.session_state[PUSHED] = wanted


# --- callbacks ---------------------------------------------------------------------------------


def _on_lead(page_id: str) -> None:
    on = st.session_state.get("class_lead")
    if not isinstance(on, bool):
        return
    if on:  # the view first, so followers find it with the switch
        st.session_state[LEAD] = True
        st.session_state.pop(PUSHED, None)
        push_view(page_id)
    if _act(store().set_lead, on) is not None:
        st.session_state[LEAD] = on


def _ask_next_token() -> None:
    _act(store().ask, "next_token", {"prompt": state.get(state.PROMPT), "model": state.get(state.MODEL)})


def _ask_choice() -> None:
    typed = [st.session_state.get(f"class_choice_opt_{i}") or "" for i in range(MAX_TYPED_OPTIONS)]
    kept = [(i, text) for i, text in enumerate(typed) if isinstance(text, str) and text.strip()]
    correct = st.session_state.get("class_choice_correct")
    spec: dict[str, Any] = {"options": len(kept), "text": st.session_state.get("class_choice_text") or "",
                            "labels": [text for _, text in kept]}
    if isinstance(correct, int) and correct != NO_CORRECT:
        places = [i for i, _ in kept]
        if correct not in places:  # the right answer names an empty option
            refuse("bad_question")
            return
        spec["correct"] = places.index(correct)
    explanation = st.session_state.get("class_choice_explanation") or ""
    if explanation.strip():
        spec["explanation"] = explanation
    _act(store().ask, "choice", spec)


def _ask_bank() -> None:
    """Ask the picked bank question; an id the bank does not hold (a crafted value) is refused."""
    qid = st.session_state.get("class_bank_pick")
    if not isinstance(qid, str) or qid not in bank_ids():
        refuse("bad_question")
        return
    _act(store().ask, "choice", choice_spec(qid))


def _ask_point() -> None:
    """Ask "point at it" on the teacher's view: a head of its model, or a token of its prompt."""
    target = st.session_state.get("class_point_target")
    text = st.session_state.get("class_point_text") or ""
    if target not in point.TARGETS or not isinstance(text, str):
        refuse("bad_question")
        return
    build = point.head_spec if target == point.HEAD else point.position_spec
    try:
        spec = build(state.get(state.MODEL), state.get(state.PROMPT), text)
    except point.CANNOT_RUN:
        refuse("bad_question")
        return
    _act(store().ask, "point", spec)


def _set_question(qid: int, to: str) -> None:
    _act(store().set_question_state, qid, to)


def _end_class() -> None:
    """Delete the class with every answer (the store's ``end_class``), after the teacher confirmed."""
    teacher = _teacher()
    if teacher is None or not st.session_state.get("class_end_sure"):
        return
    try:
        store().end_class(teacher)
    except ClassError as error:
        refuse(error.code)
        return
    st.session_state[ENDED] = True
    st.session_state[LEAD] = False
    st.session_state.pop(PUSHED, None)
    st.session_state["class_end_sure"] = False


def _restart_class() -> None:
    if _act(store().open_class) is not None:
        st.session_state[ENDED] = False


# --- the sidebar ---------------------------------------------------------------------------------


def sidebar_panel(page_id: str) -> None:
    """Lead switch, questions, QR switch and the end of the class (the teacher's sidebar)."""
    teacher = teacher_pass()
    if teacher is None:
        return
    st.divider()
    st.markdown(f"**{t('classroom.teacher.title')}**")
    st.caption(t("classroom.teacher.code", code=teacher.code))
    if st.session_state.get(ENDED):
        st.info(t("classroom.teacher.ended"))
        st.button(t("classroom.teacher.restart"), key="class_restart", on_click=_restart_class)
        return
    if LEAD not in st.session_state:
        try:
            st.session_state[LEAD] = store().state(teacher.code).lead
        except ClassError:
            st.session_state[LEAD] = False
    st.session_state["class_lead"] = bool(st.session_state[LEAD])
    st.toggle(t("classroom.teacher.lead"), key="class_lead", on_change=_on_lead, args=(page_id,),
              help=t("classroom.teacher.lead_help"))
    st.toggle(t("classroom.teacher.show_qr"), key="class_show_qr")
    st.button(t("classroom.teacher.ask_next_token"), key="class_ask_next", on_click=_ask_next_token, width="stretch",
              help=t("classroom.teacher.ask_next_token_help"))
    with st.expander(t("classroom.teacher.ask_choice")):
        with st.form("class_choice_form", border=False):
            st.text_area(t("classroom.teacher.choice_text"), max_chars=rules.MAX_QUESTION_CHARS,
                         key="class_choice_text")
            for i in range(MAX_TYPED_OPTIONS):
                st.text_input(t("classroom.teacher.choice_option", letter=chr(65 + i)),
                              max_chars=rules.MAX_OPTION_CHARS, key=f"class_choice_opt_{i}")
            none = t("classroom.teacher.choice_none")  # the format function binds the language now
            st.selectbox(t("classroom.teacher.choice_correct"), [NO_CORRECT, *range(MAX_TYPED_OPTIONS)],
                         format_func=lambda i, none=none: none if i == NO_CORRECT else chr(65 + i),
                         key="class_choice_correct")
            st.text_area(t("classroom.teacher.choice_explanation"), max_chars=rules.MAX_QUESTION_CHARS,
                         key="class_choice_explanation")
            st.form_submit_button(t("classroom.teacher.choice_ask"), on_click=_ask_choice)
    _bank_picker(page_id)
    _point_form(page_id)
    with st.expander(t("classroom.teacher.end")):
        st.checkbox(t("classroom.teacher.end_sure"), key="class_end_sure")
        st.button(t("classroom.teacher.end_button"), key="class_end", on_click=_end_class)


def bank_ids() -> tuple[str, ...]:
    return bank(LANGUAGES[0]).ids()


def bank_order(page_id: str, lang: str) -> list[BankQuestion]:
    """The bank in ``lang``: this page's station questions first, then the others (file order)."""
    found = bank(lang if lang in LANGUAGES else LANGUAGES[0])
    here = list(found.for_station(page_id))
    return here + [q for q in found.questions if q.station != page_id]


def _bank_picker(page_id: str) -> None:
    """The bank's questions to ask (this page's first, starred), with the picked one's options (not
    which is right: the teacher's screen may be on the projector)."""
    ordered = bank_order(page_id, current_language())
    here = {q.qid for q in ordered if q.station == page_id}
    names = {q.qid: ("★ " if q.qid in here else "") + (q.text if len(q.text) <= BANK_LABEL_CHARS
                                                       else q.text[:BANK_LABEL_CHARS - 1] + "…") for q in ordered}
    with st.expander(t("classroom.teacher.ask_bank")):
        picked = st.selectbox(t("classroom.teacher.bank_pick"), [q.qid for q in ordered], key="class_bank_pick",
                              format_func=lambda qid: names.get(qid, qid), help=t("classroom.teacher.bank_help"))
        chosen = next((q for q in ordered if q.qid == picked), None)
        if chosen is not None:
            st.markdown(escape_markdown(chosen.text))
            st.markdown("\n".join(f"{chr(65 + i)}. {escape_markdown(o)}  "
                                   for i, o in enumerate(chosen.options)))
        st.button(t("classroom.teacher.bank_ask"), key="class_bank_ask", on_click=_ask_bank, type="primary")


def _point_form(page_id: str) -> None:
    """"Point at it": the teacher's words and what the class points at (a head, or a token)."""
    with st.expander(t("classroom.teacher.ask_point")):
        with st.form("class_point_form", border=False):
            st.text_input(t("classroom.teacher.point_text"), max_chars=rules.MAX_QUESTION_CHARS,
                          key="class_point_text", placeholder=t("classroom.teacher.point_example"))
            names = {point.HEAD: t("classroom.teacher.point_head"), point.POSITION: t("classroom.teacher.point_token")}
            st.radio(t("classroom.teacher.point_target"), list(point.TARGETS),
                     index=0 if page_id == "multi_head_attention" else 1, key="class_point_target",
                     format_func=lambda target: names.get(target, target))
            st.caption(t("classroom.teacher.point_help"))
            st.form_submit_button(t("classroom.teacher.choice_ask"), on_click=_ask_point)


# --- the main area -------------------------------------------------------------------------------


def _base_url() -> str:
    """The address this teacher's browser used (the students' link has the same host)."""
    try:
        url = st.context.url or ""
    except Exception:  # AppTest has no browser address
        url = ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "http://localhost:8501/"
    base_path = "/" + str(st.get_option("server.baseUrlPath") or "").strip("/")
    return urlunsplit((parts.scheme, parts.netloc, base_path.rstrip("/") + "/", "", ""))


_SVG_SIZE = re.compile(r'^<svg xmlns="http://www.w3.org/2000/svg" width="(\d+)" height="(\d+)"')


def qr_markup(link: str, label: str) -> str:
    """The link's QR code as inline SVG that scales with its column, named for screen readers.

    segno's SVG holds only squares (no text of the link); the one text added, ``label``, is our
    own translation, escaped. Example: qr_markup("http://h/?class=K7QM4X", "Scan to join")
    """
    svg = qr_svg(link, scale=10)
    size = _SVG_SIZE.match(svg)
    if size is None:  # another segno layout: refuse to guess rather than draw it wrong
        raise ValueError("unexpected QR code markup")
    width, height = size.groups()
    opening = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
               f'aria-label="{escape(label, quote=True)}" style="width: 100%; height: auto; display: block;"')
    return opening + svg[size.end():]


def join_panel(code: str) -> None:
    """The student link as a large QR code with the link and the class code as text."""
    link = student_link(_base_url(), code)
    with st.container(key="class_join", border=True):
        cols = st.columns([2, 3] if presenter_on() else [1, 3])
        with cols[0]:
            # Our own markup only (squares and an escaped label), as the Overview's drawing is sent.
            st.markdown(qr_markup(link, t("classroom.teacher.qr_label", code=code)), unsafe_allow_html=True)
            st.caption(t("classroom.teacher.qr_caption"))
        with cols[1]:
            st.markdown(f"### {t('classroom.teacher.join_title')}")
            st.code(link, language=None)
            st.markdown(t("classroom.teacher.join_code", code=code))


def _question_controls(question: rules.Question) -> None:
    cols = st.columns(3)
    if question.state == rules.OPEN:
        cols[0].button(t("classroom.teacher.close"), key=f"class_close_{question.qid}", on_click=_set_question,
                       args=(question.qid, rules.CLOSED), width="stretch")
    elif question.state == rules.CLOSED:
        cols[0].button(t("classroom.teacher.reopen"), key=f"class_reopen_{question.qid}", on_click=_set_question,
                       args=(question.qid, rules.OPEN), width="stretch")
    if question.state != rules.REVEALED:
        cols[1].button(t("classroom.teacher.reveal"), key=f"class_reveal_{question.qid}", on_click=_set_question,
                       args=(question.qid, rules.REVEALED), type="primary", width="stretch")
    csv = _csv()
    if csv is not None:
        cols[2].download_button(t("classroom.teacher.csv"), csv, file_name="class-answers.csv", mime="text/csv",
                                key="class_csv", on_click="ignore", width="stretch")


def _csv() -> str | None:
    teacher = teacher_pass()
    if teacher is None:
        return None
    try:
        asked = store().questions(teacher)
        return export.csv_text([(q, store().tally(teacher.code, q.qid, teacher)) for q in asked])
    except ClassError:
        return None


@st.fragment(run_every=TICK_S)
def _live_panel(page_id: str) -> None:
    teacher = teacher_pass()
    if teacher is None or st.session_state.get(ENDED):
        return
    push_view(page_id)
    try:
        roster = store().roster(teacher)
        current = store().state(teacher.code).question
    except ClassError as error:
        refuse(error.code)
        return
    st.markdown(t("classroom.teacher.counts", joined=roster.joined, following=roster.following))
    if current is None:
        return
    try:
        tally = store().tally(teacher.code, current.qid, teacher)
    except ClassError as error:
        refuse(error.code)
        return
    with st.container(key="class_teacher_question", border=True):
        st.markdown(f"#### {t('classroom.q.title', n=current.qid)} · {t('classroom.state.' + current.state)}")
        st.markdown(reveal.question_text(current))
        st.markdown(t("classroom.teacher.answered", n=tally.total, joined=roster.joined))
        _question_controls(current)
        peek = st.toggle(t("classroom.teacher.peek"), key="class_peek") if current.state != rules.REVEALED else False
        if current.state == rules.REVEALED or peek:
            reveal.show_result(current, tally, key=f"class_teacher_result_{current.qid}")


def main_panel(page_id: str) -> None:
    teacher = teacher_pass()
    if teacher is None:
        return
    if st.session_state.get("class_show_qr") and not st.session_state.get(ENDED):
        join_panel(teacher.code)
    _live_panel(page_id)
