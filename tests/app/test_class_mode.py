"""Class mode in AppTest (issue #45): one teacher and students as separate sessions on one
SqliteStore in a temporary folder. The teacher leads and the student follows (and steps away and
back); a predict-the-next-token question is answered and revealed with the model's own numbers;
a typed multiple-choice question; and everything a student may try that only the teacher may do,
refused with no effect on the class. Without a teacher key the app is as before."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.numeric import softmax
from serving import settings as server_settings
from serving.classroom.keys import TeacherPass, class_code
from serving.classroom.rules import ClassError
from serving.classroom.store import DB_NAME
from tests.app.conftest import APP
from ui.i18n import translate

KEY = "Teacher-Key_for-the-AppTest-0123456789"
CODE = class_code(KEY)


@pytest.fixture
def class_dir(tmp_path: Path) -> Iterator[Path]:
    """This process' settings with a teacher key and a fresh class folder (restored after)."""
    from ui.resources import start_once

    start_once()
    before = server_settings.active()
    server_settings.use(server_settings.replace(teacher_key=KEY, class_dir=str(tmp_path)))
    yield tmp_path
    server_settings.use(before)


@pytest.fixture(params=["sqlite", "redis"])
def any_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Like ``class_dir``, on each backend: SQLite in a temporary folder, or a real redis-server."""
    from tests.redis_server import redis_server
    from ui.resources import start_once

    start_once()
    before = server_settings.active()
    if request.param == "sqlite":
        server_settings.use(server_settings.replace(teacher_key=KEY, class_dir=str(tmp_path)))
        yield request.param
    else:
        with redis_server(tmp_path) as url:
            server_settings.use(server_settings.replace(teacher_key=KEY, class_dir="", redis_url=url))
            try:
                yield request.param
            finally:
                server_settings.use(before)
    server_settings.use(before)


def _store() -> Any:
    from ui.classroom.session import store

    return store()


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def teacher(lang: str = "en") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["lang"] = lang
    at.query_params["teacher"] = KEY
    return _run(at)


def student(lang: str = "en", extra: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["lang"] = lang
    at.query_params["class"] = CODE
    for name, value in (extra or {}).items():
        at.query_params[name] = value
    return _run(at)


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error]
    parts += [i.value for i in at.info] + [s.value for s in at.success] + [c.value for c in at.code]
    return "\n".join(str(p) for p in parts)


def _find(node: Any, kind: str) -> list[Any]:
    """Every element of a kind under ``node`` (AppTest has no accessor for images)."""
    found = [node] if getattr(node, "type", None) == kind else []
    for child in getattr(node, "children", {}).values():
        found += _find(child, kind)
    return found


def _errors(at: AppTest) -> list[str]:
    return [str(e.value) for e in at.error]


def _state() -> Any:
    return _store().state(CODE)


def _pass() -> TeacherPass:
    from serving.classroom.keys import authorize

    return authorize(KEY, KEY)


def _session_id(at: AppTest) -> str:
    return at.session_state["_class_session"]


def _lead(at: AppTest) -> None:
    at.toggle(key="class_lead").set_value(True)
    _run(at)


# --- without class mode ------------------------------------------------------------------------


def test_plain_run_is_as_before_even_with_class_parameters() -> None:
    assert server_settings.active().teacher_key == ""  # the test process has no key: class mode is off
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["teacher"] = KEY
    at.query_params["class"] = CODE
    _run(at)
    assert not [t for t in at.toggle if t.key == "class_lead"]
    assert not [b for b in at.button if str(b.key).startswith("class_")]
    assert "_class_role" not in at.session_state and "_class_pass" not in at.session_state
    assert "Following the teacher" not in _texts(at)


# --- the teacher link ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_teacher_link_makes_the_teacher_and_drops_the_key(class_dir: Path, lang: str) -> None:
    at = teacher(lang)
    assert "teacher" not in at.query_params  # the address bar no longer carries it
    assert at.toggle(key="class_lead").label == translate("classroom.teacher.lead", lang)
    assert KEY not in _texts(at)
    assert CODE in _texts(at)
    assert _state().lead is False and _state().version >= 1  # opened, idempotently
    # the join panel: the student link, never the key
    at.toggle(key="class_show_qr").set_value(True)
    _run(at)
    assert f"?class={CODE}" in _texts(at) and KEY not in _texts(at)
    qr = [m.value for m in at.markdown if m.value.startswith("<svg") and 'class="segno"' in m.value]
    assert len(qr) == 1 and 'role="img"' in qr[0] and "aria-label=" in qr[0] and KEY not in qr[0]
    from serving.classroom.links import qr_svg  # the drawing is the student link's QR code, module for module

    def modules(svg: str) -> str:
        return re.search(r'class="qrline"[^>]* d="([^"]+)"', svg).group(1)

    assert modules(qr[0]) == modules(qr_svg(f"http://localhost:8501/?class={CODE}", scale=10))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_forged_or_empty_key_is_refused_and_dropped(class_dir: Path, lang: str) -> None:
    for given in ("x" * len(KEY), KEY[:-1], "", KEY + "x"):
        at = AppTest.from_file(APP, default_timeout=90)
        at.session_state["lang"] = lang
        at.query_params["teacher"] = given
        _run(at)
        assert "teacher" not in at.query_params
        assert not [t for t in at.toggle if t.key == "class_lead"]
        assert translate("class.error.not_teacher", lang) in _errors(at)
    with pytest.raises(ClassError):
        _store().state(CODE)  # nobody opened the class


# --- following ----------------------------------------------------------------------------------


def test_student_follows_the_teacher_steps_away_and_back(any_backend: str) -> None:
    lead = teacher()
    pupil = student("zh")
    assert "🧭" in _texts(pupil) and translate("classroom.student.following_idle", "zh") in _texts(pupil)
    _lead(lead)
    lead.session_state["prompt"] = "小明把苹果放进书包，因为它太甜了"
    lead.switch_page("pages/multi_head_attention.py")
    _run(lead)
    lead.session_state["kept.mha_layer"] = 1
    lead.session_state["kept.mha_head"] = 2
    _run(lead)
    view = _state().view
    assert view.page == "multi_head_attention" and view.controls.get("mha_layer") == "1"

    _run(pupil)  # the poll's tick (every 1.5 s in a browser): switch page, take the view
    assert pupil.session_state["_state_page"] == "multi_head_attention"
    assert pupil.session_state["prompt"] == "小明把苹果放进书包，因为它太甜了"
    assert pupil.session_state["kept.mha_layer"] == 1 and pupil.session_state["kept.mha_head"] == 2
    assert pupil.session_state["lang"] == "zh"  # each keeps their own language
    assert translate("classroom.student.following", "zh") in _texts(pupil)
    _run(lead)
    assert "**1** joined · **1** following" in _texts(lead)

    pupil.button(key="class_explore").click()
    _run(pupil)
    assert translate("classroom.student.exploring", "zh") in _texts(pupil)
    lead.session_state["kept.mha_head"] = 0
    lead.session_state["kept.mha_layer"] = 3
    _run(lead)
    _run(pupil)
    assert pupil.session_state["kept.mha_layer"] == 1  # exploring: the teacher's change does not move it
    _run(lead)
    assert "**1** joined · **0** following" in _texts(lead)

    pupil.button(key="class_follow").click()
    _run(pupil)
    assert pupil.session_state["kept.mha_layer"] == 3
    assert pupil.session_state.get("kept.mha_head", 0) == 0  # the teacher's default again


# --- predict the next token ---------------------------------------------------------------------


def _model_reading_probability(model_name: str, prompt: str, answer: str) -> float:
    """Independently of ui.classroom: the summed probability of every token that reads as ``answer``."""
    from serving.models import get_model, run_prompt

    loaded = get_model(model_name)
    probs = softmax(run_prompt(model_name, prompt).logits[-1])
    return float(sum(probs[i] for i in range(loaded.config.vocab_size)
                     if loaded.tokenizer.decode([i]).strip() == answer))


def _chart_rows(at: AppTest) -> list[dict[str, Any]]:
    from tests.app.conftest import vega_spec

    rows: list[dict[str, Any]] = []
    for chart in at.get("vega_lite_chart"):
        spec = vega_spec(chart)
        from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

        for dataset in chart.proto.datasets:
            frame = convert_arrow_bytes_to_pandas_df(dataset.data.data)
            if {"answer", "who", "value"} <= set(frame.columns):
                rows += frame.to_dict("records")
        assert spec.get("title")
    return rows


def test_predict_the_next_token_answered_and_revealed_with_the_models_numbers(any_backend: str) -> None:
    lead = teacher()
    a, b = student(), student("zh")
    lead.button(key="class_ask_next").click()
    _run(lead)
    question = _state().question
    assert question.kind == "next_token" and question.spec["prompt"] == "The capital of France is"
    _run(a)
    _run(b)
    picks = [o for o in a.radio(key=f"class_answer_{question.qid}_pick").options]
    assert "Paris" in picks  # the model's top candidates are offered (in text order)
    a.radio(key=f"class_answer_{question.qid}_pick").set_value("Paris")
    _submit(a, question.qid)
    b.text_input(key=f"class_answer_{question.qid}_typed").set_value("  Rome ")
    _submit(b, question.qid)
    assert translate("classroom.student.your_answer", "zh", answer="Rome") in _texts(b)
    _run(lead)
    assert "**2** answers" in _texts(lead)
    # A student cannot see the counts before the reveal.
    with pytest.raises(ClassError, match="not_revealed"):
        _store().tally(CODE, question.qid)

    lead.button(key=f"class_reveal_{question.qid}").click()
    _run(lead)
    _run(a)
    rows = _chart_rows(a)
    by = {(r["answer"], r["who"]): r["value"] for r in rows}
    assert by[("Paris", "The class")] == pytest.approx(0.5) and by[("Rome", "The class")] == pytest.approx(0.5)
    for answer in ("Paris", "Rome"):
        assert by[(answer, "The model")] == pytest.approx(
            _model_reading_probability("classic", "The capital of France is", answer), abs=1e-9)
    # the model's top 5 are on the chart too, with their probabilities
    from ui.classroom import predict

    top = predict.odds("classic", "The capital of France is").top[:5]
    for text, p in top:
        assert by[(text, "The model")] == pytest.approx(p, abs=1e-12)
    assert abs(sum(p for _, p in top) - sum(by[(t, "The model")] for t, _ in top)) < 1e-9
    assert sorted(p for _, p in top)[::-1] == [p for _, p in top]


def _submit(at: AppTest, qid: int) -> None:
    for button in at.button:
        if f"FormSubmitter:class_answer_{qid}" in str(button.id):
            button.click()
            _run(at)
            return
    raise AssertionError([b.id for b in at.button])


# --- multiple choice and the CSV ----------------------------------------------------------------


def test_typed_multiple_choice_counts_reveal_and_csv(class_dir: Path) -> None:
    lead = teacher()
    a, b = student(), student()
    a.text_input(key="class_nickname_input").set_value("=HYPERLINK(1)")
    a.button(key="class_nickname_save").click()
    _run(a)
    lead.text_area(key="class_choice_text").set_value("What does softmax([2, 3, 3]) give the first score?")
    for i, text in enumerate(("about 0.16", "about 0.42", "exactly 1/3")):
        lead.text_input(key=f"class_choice_opt_{i}").set_value(text)
    lead.selectbox(key="class_choice_correct").set_value(0)
    lead.text_area(key="class_choice_explanation").set_value("e^2 / (e^2 + 2 e^3) = 0.155")
    _submit_form(lead, "class_choice_form")
    question = _state().question
    assert question.kind == "choice" and question.spec["labels"] == ["about 0.16", "about 0.42", "exactly 1/3"]
    assert question.spec["correct"] == 0
    _run(a)
    a.radio(key=f"class_answer_{question.qid}_pick").set_value(0)
    _submit(a, question.qid)
    _run(b)
    b.radio(key=f"class_answer_{question.qid}_pick").set_value(2)
    _submit(b, question.qid)
    _run(lead)
    assert "**2** answers" in _texts(lead)
    lead.button(key=f"class_reveal_{question.qid}").click()
    _run(lead)
    _run(b)
    assert translate("classroom.reveal.right_is", "en", option="A. about 0\\.16") in _texts(b)
    csv_button = [d for d in lead.get("download_button")]
    assert csv_button
    from serving.classroom import export

    text = export.csv_text([(q, _store().tally(CODE, q.qid, _pass())) for q in _store().questions(_pass())])
    assert "'=HYPERLINK(1)" in text and ",0,1," in text.replace("\r\n", "\n")


def _submit_form(at: AppTest, form: str) -> None:
    for button in at.button:
        if f"FormSubmitter:{form}" in str(button.id):
            button.click()
            _run(at)
            return
    raise AssertionError([b.id for b in at.button])


# --- refusals (item 7) ----------------------------------------------------------------------------


def test_teacher_actions_from_a_student_session_change_nothing(class_dir: Path) -> None:
    teacher()
    before = _state()
    pupil = student(extra={"teacher": "not-the-key-but-long-enough"})
    assert "teacher" not in pupil.query_params
    # crafted session values: a widget key of the teacher's, a pass that authorize() did not make
    pupil.session_state["class_lead"] = True
    pupil.session_state["_class_pass"] = TeacherPass(CODE, object())
    pupil.session_state["_class_role"] = "teacher"
    pupil.session_state["class_end_sure"] = True
    _run(pupil)
    assert not [t for t in pupil.toggle if t.key == "class_lead"]
    assert not [b for b in pupil.button if b.key in ("class_ask_next", "class_end")]
    after = _state()
    assert (after.lead, after.view, after.question, after.version) == (before.lead, before.view, before.question,
                                                                       before.version)
    from ui.classroom import session

    assert session.role() is None  # outside a run: no session, no role
    with pytest.raises(ClassError, match="not_teacher"):
        _store().set_lead(TeacherPass(CODE, object()), True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_hostile_nicknames_and_answers_are_refused_with_a_translated_message(class_dir: Path, lang: str) -> None:
    lead = teacher()
    pupil = student(lang)
    sid = _session_id(pupil)
    big = "<script>alert(1)</script>**x**[a](javascript:alert(1))" * 200  # > 10 kB
    # Sent whole, the store refuses it (the translated message exists for its code) ...
    with pytest.raises(ClassError) as refused:
        _store().join(CODE, sid, big)
    assert refused.value.code == "nickname_too_long"
    assert not translate("class.error.nickname_too_long", lang).startswith("⟦")
    # ... through the page, Streamlit keeps the first 20 characters: kept as text, shown escaped.
    pupil.text_input(key="class_nickname_input").set_value(big)
    pupil.button(key="class_nickname_save").click()
    _run(pupil)
    assert _store().student(CODE, sid).nickname == big[:20]
    label = [e.label for e in pupil.expander if "script" in e.label][0]
    assert "\\<script\\>" in label and "<script>" not in label
    for nickname in ("Ming\u202egnim", "a\x00b", "\u2066Ming\u2069"):
        pupil.text_input(key="class_nickname_input").set_value(nickname)
        pupil.button(key="class_nickname_save").click()
        _run(pupil)
        assert translate("class.error.bad_text", lang) in _errors(pupil)
        assert _store().student(CODE, sid).nickname == big[:20]

    lead.button(key="class_ask_next").click()
    _run(lead)
    qid = _state().question.qid
    _run(pupil)
    with pytest.raises(ClassError, match="answer_too_long"):
        _store().answer(CODE, sid, qid, big)
    for typed in ("Paris\u202e", "\u2066x\u2069", "a\rb"):
        time.sleep(0.3)
        pupil.text_input(key=f"class_answer_{qid}_typed").set_value(typed)
        _submit(pupil, qid)
        assert translate("class.error.bad_text", lang) in _errors(pupil)
    assert _store().tally(CODE, qid, _pass()).total == 0
    time.sleep(0.3)
    pupil.text_input(key=f"class_answer_{qid}_typed").set_value(big)  # Streamlit keeps 40 characters
    _submit(pupil, qid)
    assert dict(_store().tally(CODE, qid, _pass()).counts) == {big[:40]: 1}
    lead.button(key=f"class_reveal_{qid}").click()
    _run(lead)
    _run(pupil)  # the reveal shows it as chart data (text, never markup) and escaped in tables
    assert any(r["answer"] == big[:40] for r in _chart_rows(pupil))
    assert "<script>" not in _texts(pupil)


def test_a_flood_of_answers_counts_once_and_unknown_or_closed_questions_are_refused(any_backend: str) -> None:
    lead = teacher()
    pupil = student()
    sid = _session_id(pupil)
    lead.button(key="class_ask_next").click()
    _run(lead)
    qid = _state().question.qid
    refused = 0
    started = time.monotonic()
    for i in range(100):  # 100 answers in about one second from one session
        try:
            _store().answer(CODE, sid, qid, f"w{i}")
        except ClassError as error:
            assert error.code == "too_fast"
            refused += 1
        time.sleep(max(0.0, started + (i + 1) / 100 - time.monotonic()))
    tally = _store().tally(CODE, qid, _pass())
    assert tally.total == 1 and refused >= 90
    with pytest.raises(ClassError, match="unknown_question"):
        _store().answer(CODE, sid, qid + 50, "x")
    # closed: the student's page says so, in its language, and the answer is not counted
    _run(pupil)
    pupil.text_input(key=f"class_answer_{qid}_typed").set_value("Paris")
    lead.button(key=f"class_close_{qid}").click()
    _run(lead)
    time.sleep(0.3)
    _submit(pupil, qid)
    assert translate("class.error.question_closed", "en") in _errors(pupil)
    assert _store().tally(CODE, qid, _pass()).counts == tally.counts


def test_ending_the_class_deletes_its_answers(class_dir: Path) -> None:
    lead = teacher()
    pupil = student()
    lead.button(key="class_ask_next").click()
    _run(lead)
    qid = _state().question.qid
    _run(pupil)
    pupil.text_input(key=f"class_answer_{qid}_typed").set_value("Paris")
    _submit(pupil, qid)
    assert _store().tally(CODE, qid, _pass()).total == 1
    lead.checkbox(key="class_end_sure").check()
    lead.button(key="class_end").click()
    _run(lead)
    assert translate("classroom.teacher.ended", "en") in _texts(lead)
    with sqlite3.connect(class_dir / DB_NAME) as db:
        for table in ("classes", "students", "questions", "answers"):
            assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    _run(pupil)
    assert translate("classroom.student.waiting", "en") in _texts(pupil)
    assert json.dumps(dict(pupil.query_params)) == json.dumps({"class": CODE})


# --- a bank question, each student in their own language -----------------------------------------


def _dataset_rows(at: AppTest, columns: set[str]) -> list[dict[str, Any]]:
    """Every chart data row with these columns (the charts' own data, as the browser gets it)."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    rows: list[dict[str, Any]] = []
    for chart in at.get("vega_lite_chart"):
        for dataset in chart.proto.datasets:
            frame = convert_arrow_bytes_to_pandas_df(dataset.data.data)
            if columns <= set(frame.columns):
                rows += frame.to_dict("records")
    return rows


def test_bank_question_asked_answered_in_each_language_and_revealed(class_dir: Path) -> None:
    from serving.classroom.bank import bank
    from ui.text import escape_markdown

    lead = teacher()
    lead.switch_page("pages/multi_head_attention.py")
    _run(lead)
    picker = lead.selectbox(key="class_bank_pick")
    here = bank("en").for_station("multi_head_attention")
    assert here and len(picker.options) == len(bank("en").questions)
    starred = [label for label in picker.options if label.startswith("★ ")]
    assert picker.options[:len(here)] == starred  # this page's station first, and only those starred
    for label, question in zip(picker.options, here):
        assert label[2:].rstrip("…") == question.text[:len(label[2:].rstrip("…"))]
    qid = "sa.softmax_233"  # another station's question: the picker lists every one
    picker.set_value(qid)
    lead.button(key="class_bank_ask").click()
    _run(lead)
    asked = _state().question
    assert asked.kind == "choice" and dict(asked.spec) == {"options": 4, "bank_id": qid}

    students = {"en": student("en"), "zh": student("zh")}
    for lang, pupil in students.items():
        _run(pupil)
        known = bank(lang).question(qid)
        assert escape_markdown(known.text) in _texts(pupil)
        radio = pupil.radio(key=f"class_answer_{asked.qid}_pick")
        assert radio.options == [f"{chr(65 + i)}. {escape_markdown(o)}" for i, o in enumerate(known.options)]
    right = bank("en").question(qid).correct
    wrong = (right + 1) % 4
    students["en"].radio(key=f"class_answer_{asked.qid}_pick").set_value(right)
    _submit(students["en"], asked.qid)
    students["zh"].radio(key=f"class_answer_{asked.qid}_pick").set_value(wrong)
    _submit(students["zh"], asked.qid)
    zh = bank("zh").question(qid)
    assert translate("classroom.student.your_answer", "zh",
                     answer=escape_markdown(f"{chr(65 + wrong)}. {zh.options[wrong]}")) in _texts(students["zh"])
    _run(lead)
    assert "**2** answers" in _texts(lead)
    lead.button(key=f"class_reveal_{asked.qid}").click()
    _run(lead)
    for lang, pupil in students.items():
        _run(pupil)
        known = bank(lang).question(qid)
        shown = [f"{chr(65 + i)}. {o}" for i, o in enumerate(known.options)]
        rows = _dataset_rows(pupil, {"option", "count", "kind"})
        assert {r["option"]: r["count"] for r in rows} == {s: int(i in (right, wrong)) for i, s in enumerate(shown)}
        marked = [r["option"] for r in rows if r["kind"] == translate("classroom.reveal.right", lang)]
        assert marked == [shown[right]]
        texts = _texts(pupil)
        assert translate("classroom.reveal.right_is", lang, option=escape_markdown(shown[right])) in texts
        assert escape_markdown(known.explanation) in texts
    from serving.classroom import export

    text = export.csv_text([(q, _store().tally(CODE, q.qid, _pass())) for q in _store().questions(_pass())])
    lines = text.replace("\r\n", "\n").splitlines()
    assert f"{asked.qid},choice,revealed,{right},1," in lines and f"{asked.qid},choice,revealed,{wrong},1," in lines


def _ask_bank_script(pick: str, key: str) -> None:
    """The teacher's bank callback with a crafted pick (a browser can send any selectbox value)."""
    import streamlit as st

    from serving.classroom.keys import authorize
    from ui.classroom import teacher as teacher_panel
    from ui.classroom.session import PASS, REFUSALS

    st.session_state[PASS] = authorize(key, key)
    st.session_state["class_bank_pick"] = pick
    teacher_panel._ask_bank()
    st.write(repr(st.session_state.get(REFUSALS, [])))


def test_a_crafted_bank_pick_is_refused(class_dir: Path) -> None:
    teacher()
    for pick, refused in (("no.such_question", "['bad_question']"), ("sa.softmax_233", "[]")):
        before = _state().question
        at = AppTest.from_function(_ask_bank_script, args=(pick, KEY), default_timeout=60)
        _run(at)
        assert at.markdown[-1].value == refused
        after = _state().question
        assert (after == before) if refused != "[]" else (after.spec["bank_id"] == pick)


# --- point at it ----------------------------------------------------------------------------------


PROMPT_ZH = "小明把苹果放进书包，因为它太甜了"


def test_point_at_a_head_and_a_token_answered_revealed_and_crafted_cells_refused(any_backend: str) -> None:
    from serving.models import get_model, run_prompt
    from ui.text import escape_markdown

    config = get_model("classic").config
    n_layer, n_head = int(config.n_layer), int(config.n_head)
    lead = teacher()
    lead.session_state["prompt"] = PROMPT_ZH
    lead.switch_page("pages/multi_head_attention.py")
    _run(lead)
    typed = "Which head links 它 to 苹果? <b>x</b> **y**"
    lead.text_input(key="class_point_text").set_value(typed)
    assert lead.radio(key="class_point_target").value == "head"  # the Multi-head page's default
    _submit_form(lead, "class_point_form")
    asked = _state().question
    assert asked.kind == "point" and (asked.spec["rows"], asked.spec["cols"]) == (n_layer, n_head)
    assert asked.spec["text"] == typed and asked.spec["prompt"] == PROMPT_ZH

    a, b, c = student("en"), student("zh"), student("en")
    picks = {id(a): (1, 2), id(b): (1, 2), id(c): (n_layer - 1, n_head - 1)}
    for pupil in (a, b, c):
        _run(pupil)
        assert escape_markdown(typed) in _texts(pupil) and "<b>" not in _texts(pupil)
        layer = pupil.selectbox(key=f"class_answer_{asked.qid}_row")
        assert layer.options == [translate("classroom.point.layer_n", "zh" if pupil is b else "en", n=i)
                                 for i in range(n_layer)]
        layer.set_value(picks[id(pupil)][0])
        pupil.selectbox(key=f"class_answer_{asked.qid}_col").set_value(picks[id(pupil)][1])
        _submit(pupil, asked.qid)
        assert not _errors(pupil)
    assert translate("classroom.student.your_answer", "zh",
                     answer=escape_markdown(translate("classroom.point.cell", "zh", layer=1, head=2))) in _texts(b)
    # Crafted cells (a tampered client can send any value): refused, nothing counted.
    sid = _session_id(c)
    for bad in ((n_layer, 0), (0, n_head), (-1, 0), (0, -1), "1,x", "1,2,3", "9999,1", (True, 1), (1.0, 2), None,
                [1], "", "a" * 100):
        with pytest.raises(ClassError, match="bad_answer"):
            _store().answer(CODE, sid, asked.qid, bad)
    tally = _store().tally(CODE, asked.qid, _pass())
    assert dict(tally.counts) == {"1,2": 2, f"{n_layer - 1},{n_head - 1}": 1}

    lead.button(key=f"class_reveal_{asked.qid}").click()
    _run(lead)
    for pupil, lang in ((a, "en"), (b, "zh")):
        _run(pupil)
        cells = {(r["row"], r["col"]): r for r in _dataset_rows(pupil, {"row", "col", "value", "shown"})}
        assert len(cells) == n_layer * n_head
        for layer in range(n_layer):
            for head in range(n_head):
                want = {(1, 2): 2, (n_layer - 1, n_head - 1): 1}.get((layer, head), 0)
                cell = cells[(translate("classroom.point.layer_n", lang, n=layer),
                              translate("classroom.point.head_n", lang, n=head))]
                assert cell["value"] == want and cell["shown"] == str(want)  # the count is written in the cell

    # The same class points at a token of the prompt.
    lead.radio(key="class_point_target").set_value("position")
    lead.text_input(key="class_point_text").set_value("")
    _submit_form(lead, "class_point_form")
    token_q = _state().question
    tokens = list(run_prompt("classic", PROMPT_ZH).tokens)
    assert token_q.qid != asked.qid and (token_q.spec["rows"], token_q.spec["cols"]) == (1, len(tokens))
    where = next(i for i, tok in enumerate(tokens) if "它" in tok)
    for pupil, pos in ((a, where), (b, where), (c, 0)):
        time.sleep(0.3)
        _run(pupil)
        assert translate("classroom.q.point_position", "zh" if pupil is b else "en") in _texts(pupil)
        pupil.selectbox(key=f"class_answer_{token_q.qid}_col").set_value(pos)
        _submit(pupil, token_q.qid)
    with pytest.raises(ClassError, match="bad_answer"):
        _store().answer(CODE, sid, token_q.qid, (0, len(tokens)))
    with pytest.raises(ClassError, match="bad_answer"):
        _store().answer(CODE, sid, token_q.qid, (1, 0))
    lead.button(key=f"class_reveal_{token_q.qid}").click()
    _run(lead)
    rows = _dataset_rows(lead, {"label", "count"})
    assert [r["count"] for r in rows] == [2 if i == where else 1 if i == 0 else 0 for i in range(len(tokens))]
    assert rows[where]["label"].startswith(f"{where} · ") and "它" in rows[where]["label"]
    from serving.classroom import export

    text = export.csv_text([(q, _store().tally(CODE, q.qid, _pass())) for q in _store().questions(_pass())])
    lines = text.replace("\r\n", "\n").splitlines()
    assert f"{asked.qid},point,revealed,\"1,2\",2," in lines
    assert f"{token_q.qid},point,revealed,\"0,{where}\",2," in lines


def test_a_point_spec_keeps_the_teachers_text_and_view_and_refuses_bad_ones() -> None:
    from serving.classroom.rules import MAX_QUESTION_CHARS, check_question

    grid = {"rows": 4, "cols": 4, "target": "head"}
    assert check_question("point", grid) == grid  # text and view stay optional
    full = {**grid, "text": " Which head? ", "prompt": PROMPT_ZH, "model": "classic", "extra": 1}
    assert check_question("point", full) == {**grid, "text": "Which head?", "prompt": PROMPT_ZH, "model": "classic"}
    for bad in ({"text": "x" * (MAX_QUESTION_CHARS + 1)}, {"text": "a\u202eb"}, {"text": 5},
                {"prompt": PROMPT_ZH}, {"model": "classic"}, {"prompt": 1, "model": "classic"},
                {"prompt": "x", "model": "bad\nname"}):
        with pytest.raises(ClassError, match="bad_question"):
            check_question("point", {**grid, **bad})


def test_a_bank_id_the_bank_lacks_shows_as_cannot_be_shown_with_no_form(class_dir: Path) -> None:
    teacher()
    asked = _store().ask(_pass(), "choice", {"options": 3, "bank_id": "no.such_question"})
    pupil = student("zh")
    assert translate("classroom.q.unsupported", "zh") in _texts(pupil)
    assert not [r for r in pupil.radio if r.key == f"class_answer_{asked.qid}_pick"]
    assert not [b for b in pupil.button if f"FormSubmitter:class_answer_{asked.qid}" in str(b.id)]
