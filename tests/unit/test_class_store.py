"""The class store's contract, run on both backends for real: embedded SQLite (WAL, in a temp
folder) and Redis (a real ``redis-server`` on a free loopback port, ``tests/redis_server.py``).

Every refused call must raise a ``ClassError`` with its code and leave the store as it was; both
backends must answer the same script of calls with the same results, error for error.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from serving.classroom import rules
from serving.classroom.keys import TeacherPass, authorize, class_code, new_teacher_key
from serving.classroom.rules import ClassError, View
from serving.classroom.store import ClassStore, SqliteStore, open_store
from tests.redis_server import redis_server

ROOT = Path(__file__).resolve().parents[2]
PAGES = frozenset({"overview", "self_attention", "multi_head_attention", "logits_sampling"})
KEY = "test-teacher-key-0123456789abcdef"
CODE = class_code(KEY)
T0 = 1_765_000_000.25  # a real epoch time, so Redis' float formatting is exercised


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def _flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(redis_url, class_dir) for one backend, empty."""
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        _flush(url)
        yield url, ""
        _flush(url)
    else:
        yield "", str(tmp_path)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(backend: tuple[str, str], clock: Clock) -> Iterator[ClassStore]:
    s = open_store(backend[0], backend[1], page_ids=PAGES, clock=clock)
    yield s
    s.close()


@pytest.fixture
def teacher() -> TeacherPass:
    return authorize(KEY, KEY)


def session(i: int) -> str:
    return f"session-{i:04d}-abcdef"


def snapshot(store: ClassStore, teacher: TeacherPass) -> Any:
    """Everything a refused call must leave unchanged."""
    try:
        state = store.state(teacher.code)
    except ClassError as error:
        return ("no class", error.code)
    tallies = [store.tally(teacher.code, q.qid, teacher) for q in store.questions(teacher)]
    return state, store.roster(teacher), store.questions(teacher), tallies


def refused(store: ClassStore, teacher: TeacherPass, code: str, call: Any, *args: Any, **kwargs: Any) -> None:
    before = snapshot(store, teacher)
    with pytest.raises(ClassError) as error:
        call(*args, **kwargs)
    assert error.value.code == code, error.value
    assert code in rules.ERROR_CODES
    assert snapshot(store, teacher) == before


# --- the class and the teacher's view ------------------------------------------------------------


def test_a_class_opens_once_and_its_version_moves_on_every_change(store: ClassStore, teacher: TeacherPass,
                                                                   clock: Clock) -> None:
    state = store.open_class(teacher)
    assert (state.code, state.version, state.lead, state.view, state.question, state.created) == (
        CODE, 1, False, None, None, T0)
    clock.advance(5)
    assert store.open_class(teacher) == state  # idempotent: a second replica opening it changes nothing
    view = View("self_attention", "小明把苹果放进书包，因为它太甜了", "classic", {"attn_layer": 2, "attn_head": 3})
    assert store.set_view(teacher, view) == 2
    assert store.set_lead(teacher, True) == 3
    assert store.version(CODE) == 3
    state = store.state(CODE)
    assert (state.version, state.lead, state.view) == (3, True, view)
    assert store.set_lead(teacher, False) == 4 and store.state(CODE).lead is False


def test_unknown_classes_and_codes_are_refused(store: ClassStore, teacher: TeacherPass) -> None:
    for code in ("ABCDEF", "abc", "", "A" * 200, None, 7):
        with pytest.raises(ClassError) as error:
            store.version(code)  # type: ignore[arg-type]
        assert error.value.code == "no_class"
        with pytest.raises(ClassError):
            store.join(code, session(1))  # type: ignore[arg-type]
    store.open_class(teacher)
    with pytest.raises(ClassError, match="no_class"):
        store.state(class_code("another-key-0123456789"))


@pytest.mark.parametrize(("view", "why"), [
    (View("not_a_page", "x", "classic", {}), "unknown page"),
    (View("../../etc/passwd", "x", "classic", {}), "a path"),
    (View("Overview", "x", "classic", {}), "case"),
    (View("overview", "x" * (rules.MAX_PROMPT_CHARS + 1), "classic", {}), "long prompt"),
    (View("overview", "x", "", {}), "empty model"),
    (View("overview", "x", "a\nb", {}), "model with a newline"),
    (View("overview", "x", "classic", {"Bad Key": 1}), "control name"),
    (View("overview", "x", "classic", {"t": float("nan")}), "NaN"),
    (View("overview", "x", "classic", {"t": 2**60}), "huge int"),
    (View("overview", "x", "classic", {"t": {"nested": 1}}), "a dict value"),
    (View("overview", "x", "classic", {"t": [[[[[1]]]]]}), "too deep"),
    (View("overview", "x", "classic", {f"k{i}": i for i in range(rules.MAX_CONTROLS + 1)}), "too many"),
    (View("overview", "x", "classic", {"t": "x" * rules.MAX_CONTROLS_JSON}), "too large"),
    ({"page": "overview"}, "not a View"),
])
def test_a_bad_view_is_refused_and_changes_nothing(store: ClassStore, teacher: TeacherPass, view: Any,
                                                   why: str) -> None:
    store.open_class(teacher)
    refused(store, teacher, "bad_view", store.set_view, teacher, view)


def test_the_lead_switch_takes_only_a_flag(store: ClassStore, teacher: TeacherPass) -> None:
    store.open_class(teacher)
    refused(store, teacher, "bad_view", store.set_lead, teacher, "1")


def test_teacher_actions_need_a_real_pass(store: ClassStore, teacher: TeacherPass) -> None:
    store.open_class(teacher)
    question = store.ask(teacher, "choice", {"options": 3, "bank_id": "softmax_233"})
    forged = TeacherPass(CODE, object())  # the right code, not made by authorize
    other = authorize("another-key-0123456789", "another-key-0123456789")
    for fake in (forged, None, CODE, KEY, {"code": CODE}):
        refused(store, teacher, "not_teacher", store.set_view, fake, View("overview", "x", "classic"))
        refused(store, teacher, "not_teacher", store.set_lead, fake, True)
        refused(store, teacher, "not_teacher", store.ask, fake, "choice", {"options": 2, "bank_id": "x"})
        refused(store, teacher, "not_teacher", store.set_question_state, fake, question.qid, "revealed")
        refused(store, teacher, "not_teacher", store.roster, fake)
        refused(store, teacher, "not_teacher", store.end_class, fake)
        refused(store, teacher, "not_teacher", store.open_class, fake)
    refused(store, teacher, "not_teacher", store.tally, CODE, question.qid, other)  # a pass for another class
    refused(store, teacher, "no_class", store.set_lead, other, True)  # its own class was never opened
    with pytest.raises(ClassError, match="not_teacher"):
        authorize("wrong", KEY)


# --- students --------------------------------------------------------------------------------


def test_students_join_follow_and_expire(store: ClassStore, teacher: TeacherPass, clock: Clock) -> None:
    store.open_class(teacher)
    assert store.join(CODE, session(1), "  Ming ").nickname == "Ming"
    assert store.join(CODE, session(2)).nickname is None
    store.join(CODE, session(3), "")
    assert store.roster(teacher) == rules.Roster(3, 3)  # a new student follows
    store.set_following(CODE, session(2), False)
    assert store.roster(teacher) == rules.Roster(3, 2)
    assert store.student(CODE, session(2)).following is False
    assert store.join(CODE, session(2), "Li").following is False  # joining again keeps the mode
    clock.advance(20)
    store.heartbeat(CODE, session(1))
    clock.advance(rules.JOINED_WINDOW_S - 10)  # 3 and 2 silent for 30 s: no longer joined
    assert store.roster(teacher) == rules.Roster(1, 1)
    store.heartbeat(CODE, session(2))  # back within the forget window: counted again
    assert store.roster(teacher) == rules.Roster(2, 1)
    clock.advance(rules.FORGET_STUDENT_S + 1)
    refused(store, teacher, "not_joined", store.heartbeat, CODE, session(1))
    refused(store, teacher, "not_joined", store.set_following, CODE, session(1), True)
    refused(store, teacher, "not_joined", store.student, CODE, session(9))
    assert store.join(CODE, session(1)).following is True  # forgotten, so a fresh record
    store.leave(CODE, session(1))
    assert store.roster(teacher) == rules.Roster(0, 0)


@pytest.mark.parametrize(("nickname", "code"), [
    ("x" * 21, "nickname_too_long"),
    ("字" * 21, "nickname_too_long"),
    ("x" * 10_000, "nickname_too_long"),
    ("<script>" * 1300, "nickname_too_long"),
    ("evil\u202egnp.exe", "bad_text"),  # right-to-left override
    ("a\u2066b", "bad_text"),
    ("line\nbreak", "bad_text"),
    ("nul\x00", "bad_text"),
    ("bell\x07", "bad_text"),
    ("\u200b\u200b", "bad_text"),  # invisible
    ("a\u2028b", "bad_text"),  # line separator
    (42, "bad_text"),
    (["Ming"], "bad_text"),
])
def test_a_hostile_nickname_is_refused(store: ClassStore, teacher: TeacherPass, nickname: Any, code: str) -> None:
    store.open_class(teacher)
    refused(store, teacher, code, store.join, CODE, session(1), nickname)


def test_markup_in_a_nickname_is_kept_as_text_for_the_ui_to_escape(store: ClassStore, teacher: TeacherPass) -> None:
    store.open_class(teacher)
    assert store.join(CODE, session(1), "<b>**x**</b>").nickname == "<b>**x**</b>"
    assert store.join(CODE, session(2), "字" * 20).nickname == "字" * 20
    assert store.join(CODE, session(3), "e\u0301").nickname == "\u00e9"  # NFC: one character
    assert store.join(CODE, session(4), "👩\u200d🏫").nickname == "👩\u200d🏫"  # an emoji with a joiner


@pytest.mark.parametrize("bad", ["short", "x" * 65, "has space-0000", "semi;colon-0000", "", None, 12345678])
def test_a_bad_session_id_is_refused(store: ClassStore, teacher: TeacherPass, bad: Any) -> None:
    store.open_class(teacher)
    refused(store, teacher, "bad_session", store.join, CODE, bad)


def test_the_class_has_a_cap(store: ClassStore, teacher: TeacherPass, clock: Clock,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "MAX_STUDENTS", 4)
    store.open_class(teacher)
    for i in range(4):
        store.join(CODE, session(i))
    refused(store, teacher, "class_full", store.join, CODE, session(99))
    store.join(CODE, session(0), "again")  # a joined student may always join again
    clock.advance(rules.FORGET_STUDENT_S + 1)
    store.join(CODE, session(99))  # the silent ones are forgotten: room again
    assert store.roster(teacher) == rules.Roster(1, 1)


# --- questions and answers ---------------------------------------------------------------------


def test_one_answer_per_student_counted_and_revealed(store: ClassStore, teacher: TeacherPass, clock: Clock) -> None:
    store.open_class(teacher)
    for i in range(5):
        store.join(CODE, session(i), f"s{i}" if i % 2 else None)
    q = store.ask(teacher, "choice", {"options": 4, "bank_id": "softmax_233"})
    assert (q.qid, q.state, store.state(CODE).question) == (1, "open", q)
    for i, answer in enumerate([0, "1", 1, 2, 1]):
        assert store.answer(CODE, session(i), q.qid, answer) == str(answer)
    refused(store, teacher, "too_fast", store.answer, CODE, session(0), q.qid, 3)  # rate limit
    clock.advance(rules.MIN_ANSWER_INTERVAL_S)
    assert store.answer(CODE, session(0), q.qid, 3) == "3"  # a new answer replaces the old
    assert store.my_answer(CODE, session(0), q.qid) == "3"
    assert store.my_answer(CODE, session(4), q.qid) == "1"
    tally = store.tally(CODE, q.qid, teacher)
    assert (tally.total, dict(tally.counts)) == (5, {"1": 3, "2": 1, "3": 1})
    assert dict(tally.nicknames) == {"1": ("s1",), "2": ("s3",)}
    refused(store, teacher, "not_revealed", store.tally, CODE, q.qid)  # students wait for the reveal
    assert store.set_question_state(teacher, q.qid, "closed") == store.version(CODE)
    refused(store, teacher, "question_closed", store.answer, CODE, session(1), q.qid, 0)
    store.set_question_state(teacher, q.qid, "revealed")
    assert store.tally(CODE, q.qid) == tally
    refused(store, teacher, "bad_question", store.set_question_state, teacher, q.qid, "open")
    refused(store, teacher, "bad_question", store.set_question_state, teacher, q.qid, "gone")


def test_each_kind_checks_its_answers(store: ClassStore, teacher: TeacherPass, clock: Clock) -> None:
    store.open_class(teacher)
    store.join(CODE, session(1))
    point = store.ask(teacher, "point", {"rows": 12, "cols": 12, "target": "head"})
    for bad in ("12,0", "0,12", "-1,3", (3,), (3, 5, 1), "3;5", "a,b", (True, 1), 3, None):
        refused(store, teacher, "bad_answer", store.answer, CODE, session(1), point.qid, bad)
    assert store.answer(CODE, session(1), point.qid, (3, 5)) == "3,5"
    clock.advance(1)
    assert store.answer(CODE, session(1), point.qid, "11,0") == "11,0"
    clock.advance(1)
    nxt = store.ask(teacher, "next_token", {"prompt": "The capital of France is", "model": "classic"})
    assert store.questions(teacher)[0].state == "closed"  # asking closes the previous question
    refused(store, teacher, "question_closed", store.answer, CODE, session(1), point.qid, (0, 0))
    refused(store, teacher, "answer_too_long", store.answer, CODE, session(1), nxt.qid, "x" * 10_000)
    refused(store, teacher, "answer_too_long", store.answer, CODE, session(1), nxt.qid, "x" * 41)
    refused(store, teacher, "bad_text", store.answer, CODE, session(1), nxt.qid, "Paris\u202e")
    refused(store, teacher, "bad_text", store.answer, CODE, session(1), nxt.qid, "   ")
    refused(store, teacher, "bad_text", store.answer, CODE, session(1), nxt.qid, 7)
    assert store.answer(CODE, session(1), nxt.qid, " Paris ") == "Paris"
    choice = store.ask(teacher, "choice", {"options": 2, "text": "Softmax of [2, 3, 3]?",
                                           "labels": ["[0.16, 0.42, 0.42]", "[0.2, 0.4, 0.4]"]})
    clock.advance(1)
    for bad in (2, -1, "2", "01x", 1.0, True, None):
        refused(store, teacher, "bad_answer", store.answer, CODE, session(1), choice.qid, bad)
    for qid in (999, 0, "3", None, 3.0):
        refused(store, teacher, "unknown_question", store.answer, CODE, session(1), qid, 0)
    refused(store, teacher, "not_joined", store.answer, CODE, session(7), choice.qid, 0)


@pytest.mark.parametrize(("kind", "spec"), [
    ("essay", {}),
    ("choice", {"options": 1, "bank_id": "x"}),
    ("choice", {"options": 7, "bank_id": "x"}),
    ("choice", {"options": 2, "bank_id": "../x"}),
    ("choice", {"options": 2, "text": "q", "labels": ["a"]}),
    ("choice", {"options": 2, "text": "q" * 301, "labels": ["a", "b"]}),
    ("choice", {"options": 2, "text": "q", "labels": ["a", "b" * 81]}),
    ("choice", {"options": 2, "text": "q\u202e", "labels": ["a", "b"]}),
    ("point", {"rows": 0, "cols": 3, "target": "head"}),
    ("point", {"rows": 3, "cols": 300, "target": "head"}),
    ("point", {"rows": 3, "cols": 3, "target": "neuron"}),
    ("next_token", {"prompt": 5, "model": "classic"}),
    ("next_token", "prompt"),
])
def test_a_bad_question_is_refused(store: ClassStore, teacher: TeacherPass, kind: str, spec: Any) -> None:
    store.open_class(teacher)
    refused(store, teacher, "bad_question", store.ask, teacher, kind, spec)


def test_questions_and_answers_are_bounded(store: ClassStore, teacher: TeacherPass,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "MAX_QUESTIONS", 3)
    monkeypatch.setattr(rules, "MAX_ANSWERS_PER_QUESTION", 2)
    store.open_class(teacher)
    for i in range(3):
        store.join(CODE, session(i))
    qids = [store.ask(teacher, "choice", {"options": 2, "bank_id": f"q{i}"}).qid for i in range(5)]
    assert [q.qid for q in store.questions(teacher)] == qids[-3:]  # the oldest go, with their answers
    refused(store, teacher, "unknown_question", store.tally, CODE, qids[0], teacher)
    store.answer(CODE, session(0), qids[-1], 0)
    store.answer(CODE, session(1), qids[-1], 1)
    refused(store, teacher, "too_many_answers", store.answer, CODE, session(2), qids[-1], 1)


def test_a_hundred_answers_a_second_count_once(store: ClassStore, teacher: TeacherPass, clock: Clock) -> None:
    store.open_class(teacher)
    store.join(CODE, session(1))
    q = store.ask(teacher, "choice", {"options": 4, "bank_id": "temperature_zero"})
    accepted = 0
    for i in range(100):
        try:
            store.answer(CODE, session(1), q.qid, i % 4)
            accepted += 1
        except ClassError as error:
            assert error.code == "too_fast"
        clock.advance(0.01)
    assert accepted == 4  # one each 0.25 s
    assert store.tally(CODE, q.qid, teacher).total == 1


def test_ending_the_class_deletes_everything(store: ClassStore, teacher: TeacherPass, backend: tuple[str, str]) -> None:
    store.open_class(teacher)
    store.set_view(teacher, View("overview", "x", "classic", {}))
    store.join(CODE, session(1), "Ming")
    q = store.ask(teacher, "next_token", {"prompt": "x", "model": "classic"})
    store.answer(CODE, session(1), q.qid, "y")
    store.end_class(teacher)
    refused(store, teacher, "no_class", store.version, CODE)
    refused(store, teacher, "no_class", store.answer, CODE, session(1), q.qid, "y")
    if backend[0]:
        import redis

        client = redis.Redis.from_url(backend[0])
        assert client.keys("*") == []
        client.close()
    else:
        import sqlite3

        db = sqlite3.connect(Path(backend[1]) / "class.sqlite3")
        counts = [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("classes", "students", "questions", "answers")]
        db.close()
        assert counts == [0, 0, 0, 0]
    assert store.open_class(teacher).version == 1  # a fresh class with the same code


def test_a_class_nobody_leads_expires(store: ClassStore, teacher: TeacherPass, clock: Clock) -> None:
    store.open_class(teacher)
    store.join(CODE, session(1))
    clock.advance(rules.CLASS_TTL_S - 1)
    store.set_lead(teacher, True)  # the teacher's action keeps it
    clock.advance(rules.CLASS_TTL_S + 1)
    refused(store, teacher, "no_class", store.version, CODE)
    refused(store, teacher, "no_class", store.join, CODE, session(2))
    state = store.open_class(teacher)
    assert (state.version, state.lead, store.roster(teacher)) == (1, False, rules.Roster(0, 0))


# --- both backends, the same script --------------------------------------------------------------


def _script(store: ClassStore, clock: Clock, seed: int) -> list[str]:
    """A seeded random run of student and teacher calls, good and hostile; each outcome as text."""
    rng = random.Random(seed)
    teacher = authorize(KEY, KEY)
    out = [repr(store.open_class(teacher))]
    answers: list[Any] = [0, 1, 5, "2", "x", "3,4", (1, 1), (9, 9), "Paris", "x" * 50, None, "\u202e"]
    current, kind = 1, "choice"  # the newest question asked (answers mostly go to it, some to old or unknown ones)
    for _ in range(400):
        clock.advance(rng.choice([0.0, 0.1, 0.2, 0.3, 1.0, 5.0, 40.0]))
        s = session(rng.randrange(5)) if rng.random() > 0.03 else "bad id"
        qid = rng.choice([current] * 6 + [current - 1, 99])
        op = rng.choices(range(9), weights=[12, 40, 10, 8, 4, 3, 6, 8, 5])[0]
        try:
            if op == 0:
                result: Any = store.join(CODE, s, rng.choice([None, "Ming", "x" * 25, "<i>a</i>"]))
            elif op == 1:
                good = {"next_token": ["Paris", " Lyon"], "point": [(1, 2), "3,5"], "choice": [0, "3"]}[kind]
                result = store.answer(CODE, s, qid, rng.choice(good if rng.random() < 0.7 else answers))
            elif op == 2:
                result = store.heartbeat(CODE, s)
            elif op == 3:
                result = store.set_following(CODE, s, rng.random() < 0.5)
            elif op == 4:
                kind = rng.choice(rules.KINDS)
                spec = {"next_token": {"prompt": "p", "model": "classic"},
                        "point": {"rows": 4, "cols": 6, "target": "head"},
                        "choice": {"options": 4, "bank_id": "kv"}}[kind]
                result = store.ask(teacher, kind, spec)
                current = result.qid
            elif op == 5:
                result = store.set_question_state(teacher, qid, rng.choice(rules.STATES))
            elif op == 6:
                result = (store.roster(teacher), store.state(CODE))
            elif op == 7:
                result = store.tally(CODE, qid, rng.choice([teacher, None]))
            else:
                result = store.set_view(teacher, View(rng.choice(["overview", "nope"]), "p", "classic",
                                                      {"k": rng.randrange(3)}))
        except ClassError as error:
            result = f"ClassError({error.code})"
        out.append(f"{op} {result!r}")
    return out


def test_both_backends_answer_the_same_script_the_same_way(redis_url: str, tmp_path: Path) -> None:
    _flush(redis_url)
    transcripts = []
    for url, folder in ((redis_url, ""), ("", str(tmp_path))):
        clock = Clock()
        store = open_store(url, folder, page_ids=PAGES, clock=clock)
        transcripts.append(_script(store, clock, seed=45))
        store.close()
    _flush(redis_url)
    outcomes = [line.split(" ", 1) for line in transcripts[0][1:]]
    assert sum("ClassError" in out for _op, out in outcomes) > 80  # the hostile calls happened
    assert sum(op == "1" and "ClassError" not in out for op, out in outcomes) > 40  # and answers counted
    assert sum("too_fast" in out for _op, out in outcomes) >= 3
    assert transcripts[0] == transcripts[1]


# --- at once -----------------------------------------------------------------------------------

_WORKER = textwrap.dedent("""
    import sys, json
    from serving.classroom.store import open_store
    url, folder, code, qid, first, count = sys.argv[1:7]
    store = open_store(url, folder, page_ids={"overview"})
    for i in range(int(first), int(first) + int(count)):
        s = f"session-{i:04d}-abcdef"
        store.join(code, s, f"n{i}")
        store.answer(code, s, int(qid), i % 3)
        store.heartbeat(code, s)
    store.close()
""")


def test_two_processes_joining_and_answering_at_once_are_all_counted(backend: tuple[str, str]) -> None:
    url, folder = backend
    store = open_store(url, folder, page_ids={"overview"})
    teacher = authorize(KEY, KEY)
    store.open_class(teacher)
    q = store.ask(teacher, "choice", {"options": 3, "bank_id": "softmax_233"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    per_process = 40
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, url, folder, CODE, str(q.qid),
                                 str(k * per_process), str(per_process)], cwd=ROOT, env=env,
                                stderr=subprocess.PIPE, text=True) for k in range(2)]
    for w in workers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err
    tally = store.tally(CODE, q.qid, teacher)
    n = 2 * per_process
    assert tally.total == n
    assert dict(tally.counts) == {str(k): sum(1 for i in range(n) if i % 3 == k) for k in range(3)}
    assert sum(len(v) for v in tally.nicknames.values()) == n
    assert store.roster(teacher) == rules.Roster(n, n)
    store.close()


def test_threads_of_one_process_share_a_store(backend: tuple[str, str]) -> None:
    import threading

    url, folder = backend
    store = open_store(url, folder, page_ids={"overview"})
    teacher = authorize(KEY, KEY)
    store.open_class(teacher)
    q = store.ask(teacher, "next_token", {"prompt": "The capital of France is", "model": "classic"})
    errors: list[BaseException] = []

    def student(i: int) -> None:
        try:
            store.join(CODE, session(i))
            store.answer(CODE, session(i), q.qid, " Paris" if i % 2 else "Lyon")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert dict(store.tally(CODE, q.qid, teacher).counts) == {"Paris": 10, "Lyon": 10}
    store.close()


def test_the_embedded_store_is_sqlite_in_wal_mode_in_its_folder(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path, page_ids=PAGES)
    store.open_class(authorize(KEY, KEY))
    import sqlite3

    db = sqlite3.connect(tmp_path / "class.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm"))) == ["class.sqlite3"]
    store.close()


def test_the_view_round_trips_through_json() -> None:
    view = View("multi_head_attention", "它太甜了", "classic", {"mha_layer": 1, "heads": [0, 2], "t": 0.5})
    assert View.from_json(view.to_json()) == view
    assert json.loads(view.to_json())["prompt"] == "它太甜了"


def test_a_new_key_names_a_new_class() -> None:
    keys = {new_teacher_key() for _ in range(50)}
    assert len(keys) == 50 and len({class_code(k) for k in keys}) == 50


# --- a student's poll and the teacher's export ------------------------------------------------------


def test_a_follower_sees_each_change_once_and_stays_joined(store: ClassStore, teacher: TeacherPass,
                                                           clock: Clock) -> None:
    from serving.classroom.follow import HEARTBEAT_S, POLL_S, StudentPoll

    assert POLL_S < 2.0 and 2 * HEARTBEAT_S < rules.JOINED_WINDOW_S
    store.open_class(teacher)
    store.join(CODE, session(1))
    poll = StudentPoll(CODE, session(1))
    first = poll.tick(store, clock.now)
    assert first is not None and first.version == 1
    seen = []
    for step in range(80):  # two minutes of ticks; the teacher changes the view twice
        clock.advance(POLL_S)
        if step in (10, 50):
            store.set_view(teacher, View("self_attention", f"prompt {step}", "classic", {"attn_head": step % 4}))
        state = poll.tick(store, clock.now)
        if state is not None:
            seen.append((step, state.view.prompt if state.view else None))
        assert store.roster(teacher).joined == 1  # the heartbeats keep the student counted
    assert seen == [(10, "prompt 10"), (50, "prompt 50")]  # within one tick of each change, once
    store.leave(CODE, session(1))
    clock.advance(HEARTBEAT_S)
    with pytest.raises(ClassError, match="not_joined"):
        poll.tick(store, clock.now)


def test_the_csv_export_counts_answers_and_keeps_names_as_text(store: ClassStore, teacher: TeacherPass) -> None:
    import csv
    import io

    from serving.classroom.export import HEADER, csv_text

    store.open_class(teacher)
    names = ["=HYPERLINK(\"x\")", "+1", "Ming", None, "小明"]
    for i, name in enumerate(names):
        store.join(CODE, session(i), name)
    q = store.ask(teacher, "next_token", {"prompt": "The capital of France is", "model": "classic"})
    for i, answer in enumerate(["Paris", "Paris", "-Lyon", "Paris", "@x"]):
        store.answer(CODE, session(i), q.qid, answer)
    rows = list(csv.reader(io.StringIO(csv_text([(q, store.tally(CODE, q.qid, teacher))]))))
    assert tuple(rows[0]) == HEADER
    assert rows[1:] == [["1", "next_token", "open", "Paris", "3", "'+1; '=HYPERLINK(\"x\")"],
                        ["1", "next_token", "open", "'-Lyon", "1", "Ming"],
                        ["1", "next_token", "open", "'@x", "1", "小明"]]
