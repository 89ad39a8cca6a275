"""The class store: one small interface (``ClassStore``), two backends that behave the same.

- ``SqliteStore`` (embedded, the default): one SQLite file in WAL mode in the run folder. WAL
  lets readers (60 followers polling the version) go on while one writer commits; every write is
  one ``BEGIN IMMEDIATE`` transaction, so replicas on one machine serialise on the file's lock.
- ``RedisStore`` (``serving.classroom.redis_store``): the same on Redis, for many machines.

Every method checks its input with ``serving.classroom.rules`` first; a refusal is a
``ClassError`` and leaves the store as it was. Teacher methods take a ``TeacherPass``
(``serving.classroom.keys.authorize``): without the key there is no way to lead, ask, reveal,
read the roster or end the class.

    store = open_store(settings.redis_url, settings.class_dir, page_ids={"overview", "self_attention"})
    state = store.open_class(teacher)                  # the teacher's page, once per start
    store.join(code, session_id, nickname="Ming")      # a student
    store.version(code)                                # what followers poll (one small read)

Example: SqliteStore(Path("/tmp/run"), page_ids={"overview"}).version("ABCDEF") -> ClassError("no_class")
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from serving.classroom import rules
from serving.classroom.keys import TeacherPass, check_pass, pass_code
from serving.classroom.rules import (ClassError, ClassState, Question, Roster, Student, Tally, View)

DB_NAME = "class.sqlite3"


class ClassStore(Protocol):
    """What class mode stores. ``code`` is the class code; ``session`` a student's session id."""

    # --- the teacher (a TeacherPass names the class) --------------------------------------------
    def open_class(self, teacher: TeacherPass) -> ClassState:
        """Create the class if it is not there (idempotent: any replica may be first)."""
    def end_class(self, teacher: TeacherPass) -> None:
        """Delete the class with its students, questions and answers."""
    def set_view(self, teacher: TeacherPass, view: View) -> int:
        """The teacher's current view; returns the new version."""
    def set_lead(self, teacher: TeacherPass, on: bool) -> int:
        """"Lead the class" on or off; returns the new version."""
    def ask(self, teacher: TeacherPass, kind: str, spec: dict[str, Any]) -> Question:
        """A new open question (the current one); the previous open question closes."""
    def set_question_state(self, teacher: TeacherPass, qid: int, state: str) -> int:
        """Close, reopen or reveal a question (a revealed one stays revealed); the new version."""
    def roster(self, teacher: TeacherPass) -> Roster:
        """How many students are joined (heartbeat within 30 s) and following."""
    def questions(self, teacher: TeacherPass) -> list[Question]:
        """Every question kept, oldest first (for the CSV export)."""

    # --- anyone with the class code -------------------------------------------------------------
    def version(self, code: str) -> int:
        """Grows on every change of the view, lead or a question's state: the cheap poll."""
    def state(self, code: str) -> ClassState:
        """The whole shared state (read it when ``version`` moved)."""
    def tally(self, code: str, qid: int, teacher: TeacherPass | None = None) -> Tally:
        """A question's counts: the teacher any time, students once it is revealed."""

    # --- a student ------------------------------------------------------------------------------
    def join(self, code: str, session: str, nickname: str | None = None) -> Student:
        """Join (or join again: the nickname is replaced, the mode kept); a new student follows."""
    def heartbeat(self, code: str, session: str) -> None:
        """"Still here": keeps the student counted as joined."""
    def set_following(self, code: str, session: str, following: bool) -> None:
        """Follow the teacher, or explore on one's own."""
    def student(self, code: str, session: str) -> Student:
        """The student's own record."""
    def answer(self, code: str, session: str, qid: int, answer: Any) -> str:
        """Answer (or change one's answer to) the open question; returns the answer as counted."""
    def my_answer(self, code: str, session: str, qid: int) -> str | None:
        """The student's current answer to the question, if any."""
    def leave(self, code: str, session: str) -> None:
        """Forget the student (their answers stay counted)."""

    def close(self) -> None:
        """Release connections (the data stays)."""


def open_store(redis_url: str, class_dir: str, page_ids: Collection[str],
               clock: Callable[[], float] = time.time) -> ClassStore:
    """Redis when ``redis_url`` is set (``TOKEN_JOURNEY_REDIS_URL``), else SQLite in ``class_dir``
    (``TOKEN_JOURNEY_CLASS_DIR``; empty: a private folder of this process, removed at exit).

    Example: open_store(settings.redis_url, settings.class_dir, page_ids=nav_page_ids)
    """
    if redis_url:
        from serving.classroom.redis_store import RedisStore

        return RedisStore(redis_url, page_ids=page_ids, clock=clock)
    return SqliteStore(Path(class_dir) if class_dir else _private_dir(), page_ids=page_ids, clock=clock)


_PRIVATE_DIR: Path | None = None
_PRIVATE_LOCK = threading.Lock()


def _private_dir() -> Path:
    """One temporary folder (mode 0700) per process, made on first use and removed at exit."""
    global _PRIVATE_DIR
    with _PRIVATE_LOCK:
        if _PRIVATE_DIR is None:
            _PRIVATE_DIR = Path(tempfile.mkdtemp(prefix="token-journey-class."))
            atexit.register(shutil.rmtree, _PRIVATE_DIR, True)
        return _PRIVATE_DIR


_SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, created REAL NOT NULL, touched REAL NOT NULL, version INTEGER NOT NULL,
    lead INTEGER NOT NULL, view TEXT, current_q INTEGER, next_q INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL REFERENCES classes(code) ON DELETE CASCADE, session TEXT NOT NULL,
    nickname TEXT, following INTEGER NOT NULL, last_seen REAL NOT NULL, last_answer REAL NOT NULL,
    PRIMARY KEY (code, session));
CREATE TABLE IF NOT EXISTS questions (
    code TEXT NOT NULL REFERENCES classes(code) ON DELETE CASCADE, qid INTEGER NOT NULL,
    kind TEXT NOT NULL, spec TEXT NOT NULL, state TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (code, qid));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, qid INTEGER NOT NULL, session TEXT NOT NULL, answer TEXT NOT NULL,
    PRIMARY KEY (code, qid, session),
    FOREIGN KEY (code, qid) REFERENCES questions(code, qid) ON DELETE CASCADE);
"""


class SqliteStore:
    """The embedded backend: ``<state_dir>/class.sqlite3`` in WAL mode."""

    def __init__(self, state_dir: Path, page_ids: Collection[str], clock: Callable[[], float] = time.time) -> None:
        self._path = Path(state_dir) / DB_NAME
        self._page_ids = frozenset(page_ids)
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    # --- the connection and transactions -------------------------------------------------------
    # One connection per process, used under a lock: Streamlit runs each rerun on a new thread,
    # so per-thread connections would pile up; each statement takes microseconds, and across
    # processes SQLite's own file lock serialises the writers.

    def _db(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # a forked replica opens its own
            self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = sqlite3.connect(self._path, timeout=10.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA busy_timeout = 10000")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # WAL: a committed answer survives a crash of the process
            db.execute("PRAGMA foreign_keys = ON")
            db.executescript(_SCHEMA)
            self._conn, self._pid = db, os.getpid()
        return self._conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # --- helpers -------------------------------------------------------------------------------

    def _class_row(self, db: sqlite3.Connection, code: str) -> tuple:
        row = db.execute("SELECT created, touched, version, lead, view, current_q, next_q FROM classes "
                         "WHERE code = ?", (code,)).fetchone()
        if row is None or row[1] < self._clock() - rules.CLASS_TTL_S:
            raise ClassError("no_class")
        return row

    def _bump(self, db: sqlite3.Connection, code: str, **columns: Any) -> int:
        sets = "".join(f", {name} = ?" for name in columns)
        db.execute(f"UPDATE classes SET version = version + 1, touched = ?{sets} WHERE code = ?",
                   (self._clock(), *columns.values(), code))
        return int(db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()[0])

    @staticmethod
    def _question(row: tuple) -> Question:
        qid, kind, spec, state, created = row
        return Question(int(qid), kind, json.loads(spec), state, float(created))

    def _get_question(self, db: sqlite3.Connection, code: str, qid: Any) -> Question:
        if type(qid) is not int:
            raise ClassError("unknown_question")
        row = db.execute("SELECT qid, kind, spec, state, created FROM questions WHERE code = ? AND qid = ?",
                         (code, qid)).fetchone()
        if row is None:
            raise ClassError("unknown_question")
        return self._question(row)

    def _live_student(self, db: sqlite3.Connection, code: str, session: str) -> tuple:
        row = db.execute("SELECT nickname, following, last_seen, last_answer FROM students "
                         "WHERE code = ? AND session = ?", (code, session)).fetchone()
        if row is None or row[2] < self._clock() - rules.FORGET_STUDENT_S:
            raise ClassError("not_joined")
        return row

    def _state(self, db: sqlite3.Connection, code: str) -> ClassState:
        created, _touched, version, lead, view, current_q, _next = self._class_row(db, code)
        question = None
        if current_q is not None:
            row = db.execute("SELECT qid, kind, spec, state, created FROM questions WHERE code = ? AND qid = ?",
                             (code, current_q)).fetchone()
            question = self._question(row) if row else None
        return ClassState(code, float(created), int(version), bool(lead),
                          View.from_json(view) if view else None, question)

    # --- the teacher ---------------------------------------------------------------------------

    def open_class(self, teacher: TeacherPass) -> ClassState:
        code, now = pass_code(teacher), self._clock()
        with self._write() as db:
            db.execute("DELETE FROM classes WHERE touched < ?", (now - rules.CLASS_TTL_S,))
            db.execute("INSERT OR IGNORE INTO classes VALUES (?, ?, ?, 1, 0, NULL, NULL, 1)", (code, now, now))
            db.execute("UPDATE classes SET touched = ? WHERE code = ?", (now, code))
            return self._state(db, code)

    def end_class(self, teacher: TeacherPass) -> None:
        pass_code(teacher)
        with self._write() as db:
            db.execute("DELETE FROM classes WHERE code = ?", (teacher.code,))

    def set_view(self, teacher: TeacherPass, view: View) -> int:
        pass_code(teacher)
        clean = rules.check_view(view, self._page_ids)
        with self._write() as db:
            self._class_row(db, teacher.code)
            return self._bump(db, teacher.code, view=clean.to_json())

    def set_lead(self, teacher: TeacherPass, on: bool) -> int:
        pass_code(teacher)
        if not isinstance(on, bool):
            raise ClassError("bad_view", "lead is on or off")
        with self._write() as db:
            self._class_row(db, teacher.code)
            return self._bump(db, teacher.code, lead=int(on))

    def ask(self, teacher: TeacherPass, kind: str, spec: dict[str, Any]) -> Question:
        code, now = pass_code(teacher), self._clock()
        clean = rules.check_question(kind, spec)
        with self._write() as db:
            qid = int(self._class_row(db, code)[6])
            db.execute("UPDATE questions SET state = ? WHERE code = ? AND state = ?", (rules.CLOSED, code, rules.OPEN))
            db.execute("INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?)",
                       (code, qid, kind, json.dumps(clean, ensure_ascii=False), rules.OPEN, now))
            db.execute("DELETE FROM questions WHERE code = ? AND qid <= ?", (code, qid - rules.MAX_QUESTIONS))
            self._bump(db, code, current_q=qid, next_q=qid + 1)
            return Question(qid, kind, clean, rules.OPEN, now)

    def set_question_state(self, teacher: TeacherPass, qid: int, state: str) -> int:
        pass_code(teacher)
        if state not in rules.STATES:
            raise ClassError("bad_question", "state")
        with self._write() as db:
            self._class_row(db, teacher.code)
            question = self._get_question(db, teacher.code, qid)
            if question.state == rules.REVEALED and state != rules.REVEALED:
                raise ClassError("bad_question", "a revealed question stays revealed")
            if state == rules.OPEN:  # one open question at a time
                db.execute("UPDATE questions SET state = ? WHERE code = ? AND state = ?",
                           (rules.CLOSED, teacher.code, rules.OPEN))
            db.execute("UPDATE questions SET state = ? WHERE code = ? AND qid = ?", (state, teacher.code, qid))
            return self._bump(db, teacher.code)

    def roster(self, teacher: TeacherPass) -> Roster:
        pass_code(teacher)
        with self._read() as db:
            self._class_row(db, teacher.code)
            joined, following = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(following), 0) FROM students WHERE code = ? AND last_seen >= ?",
                (teacher.code, self._clock() - rules.JOINED_WINDOW_S)).fetchone()
        return Roster(int(joined), int(following))

    def questions(self, teacher: TeacherPass) -> list[Question]:
        pass_code(teacher)
        with self._read() as db:
            self._class_row(db, teacher.code)
            rows = db.execute("SELECT qid, kind, spec, state, created FROM questions WHERE code = ? ORDER BY qid",
                              (teacher.code,)).fetchall()
        return [self._question(r) for r in rows]

    # --- anyone with the code ------------------------------------------------------------------

    def version(self, code: str) -> int:
        code = rules.check_code(code)
        with self._read() as db:
            return int(self._class_row(db, code)[2])

    def state(self, code: str) -> ClassState:
        code = rules.check_code(code)
        with self._read() as db:
            return self._state(db, code)

    def tally(self, code: str, qid: int, teacher: TeacherPass | None = None) -> Tally:
        code = rules.check_code(code)
        if teacher is not None:
            check_pass(teacher, code)
        with self._read() as db:
            self._class_row(db, code)
            question = self._get_question(db, code, qid)
            if teacher is None and question.state != rules.REVEALED:
                raise ClassError("not_revealed")
            # A forgotten student's nickname is gone (their answer stays counted).
            rows = db.execute("SELECT a.answer, s.nickname FROM answers a LEFT JOIN students s "
                              "ON s.code = a.code AND s.session = a.session AND s.last_seen >= ? "
                              "WHERE a.code = ? AND a.qid = ?",
                              (self._clock() - rules.FORGET_STUDENT_S, code, qid)).fetchall()
        return rules.make_tally(qid, rows)

    # --- a student -----------------------------------------------------------------------------

    def join(self, code: str, session: str, nickname: str | None = None) -> Student:
        code, session = rules.check_code(code), rules.check_session(session)
        name = rules.clean_nickname(nickname)
        now = self._clock()
        with self._write() as db:  # forget the silent ones first (kept even if this join is refused)
            self._class_row(db, code)
            db.execute("DELETE FROM students WHERE code = ? AND last_seen < ?", (code, now - rules.FORGET_STUDENT_S))
        with self._write() as db:
            self._class_row(db, code)
            row = db.execute("SELECT following FROM students WHERE code = ? AND session = ?",
                             (code, session)).fetchone()
            if row is None:
                (count,) = db.execute("SELECT COUNT(*) FROM students WHERE code = ?", (code,)).fetchone()
                if count >= rules.MAX_STUDENTS:
                    raise ClassError("class_full")
                db.execute("INSERT INTO students VALUES (?, ?, ?, 1, ?, 0)", (code, session, name, now))
                following = True
            else:
                db.execute("UPDATE students SET nickname = ?, last_seen = ? WHERE code = ? AND session = ?",
                           (name, now, code, session))
                following = bool(row[0])
        return Student(session, name, following, now)

    def heartbeat(self, code: str, session: str) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        with self._write() as db:
            self._class_row(db, code)
            self._live_student(db, code, session)
            db.execute("UPDATE students SET last_seen = ? WHERE code = ? AND session = ?",
                       (self._clock(), code, session))

    def set_following(self, code: str, session: str, following: bool) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        if not isinstance(following, bool):
            raise ClassError("bad_answer", "following is on or off")
        with self._write() as db:
            self._class_row(db, code)
            self._live_student(db, code, session)
            db.execute("UPDATE students SET following = ?, last_seen = ? WHERE code = ? AND session = ?",
                       (int(following), self._clock(), code, session))

    def student(self, code: str, session: str) -> Student:
        code, session = rules.check_code(code), rules.check_session(session)
        with self._read() as db:
            self._class_row(db, code)
            nickname, following, last_seen, _ = self._live_student(db, code, session)
        return Student(session, nickname, bool(following), float(last_seen))

    def answer(self, code: str, session: str, qid: int, answer: Any) -> str:
        code, session = rules.check_code(code), rules.check_session(session)
        now = self._clock()
        with self._write() as db:
            self._class_row(db, code)
            question = self._get_question(db, code, qid)
            if question.state != rules.OPEN:
                raise ClassError("question_closed")
            counted = rules.check_answer(question, answer)
            last_answer = self._live_student(db, code, session)[3]
            if now - last_answer < rules.MIN_ANSWER_INTERVAL_S:
                raise ClassError("too_fast")
            mine = db.execute("SELECT 1 FROM answers WHERE code = ? AND qid = ? AND session = ?",
                              (code, qid, session)).fetchone()
            if mine is None:
                (count,) = db.execute("SELECT COUNT(*) FROM answers WHERE code = ? AND qid = ?",
                                      (code, qid)).fetchone()
                if count >= rules.MAX_ANSWERS_PER_QUESTION:
                    raise ClassError("too_many_answers")
            db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (code, qid, session, counted))
            db.execute("UPDATE students SET last_answer = ?, last_seen = ? WHERE code = ? AND session = ?",
                       (now, now, code, session))
        return counted

    def my_answer(self, code: str, session: str, qid: int) -> str | None:
        code, session = rules.check_code(code), rules.check_session(session)
        with self._read() as db:
            self._class_row(db, code)
            self._get_question(db, code, qid)
            row = db.execute("SELECT answer FROM answers WHERE code = ? AND qid = ? AND session = ?",
                             (code, qid, session)).fetchone()
        return row[0] if row else None

    def leave(self, code: str, session: str) -> None:
        code, session = rules.check_code(code), rules.check_session(session)
        with self._write() as db:
            self._class_row(db, code)
            db.execute("DELETE FROM students WHERE code = ? AND session = ?", (code, session))

