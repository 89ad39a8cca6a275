"""What a class holds, its limits, and the checks every value passes before a backend stores it.

Both backends (``serving.classroom.store``, ``serving.classroom.redis_store``) call these same
functions, so they accept and refuse exactly the same input. Every refusal is a ``ClassError``
whose ``code`` the UI turns into a translated message (``t(f"class.error.{code}")``); a refused
call changes nothing in the store.

Example: clean_nickname("  Ming ") -> "Ming"; clean_nickname("") -> None
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

# --- limits (each bounds what one hostile client can make the store hold) --------------------
MAX_STUDENTS: Final = 300  # student records per class, live or not: a large lecture hall
JOINED_WINDOW_S: Final = 30.0  # a student counts as joined this long after their last heartbeat
FORGET_STUDENT_S: Final = 600.0  # a silent student's record (nickname, mode) is dropped after this
MAX_NICKNAME_CHARS: Final = 20  # the limit, counted in characters after NFC
MAX_ANSWER_CHARS: Final = 40  # a typed next token: a word or two, never a paragraph
MAX_ANSWERS_PER_QUESTION: Final = 2 * MAX_STUDENTS  # students come and go; answers stay bounded
MIN_ANSWER_INTERVAL_S: Final = 0.25  # one session answering faster than this is refused (rate limit)
MAX_QUESTIONS: Final = 100  # kept per class (oldest dropped with their answers): a long lesson's worth
MAX_QUESTION_CHARS: Final = 300  # a teacher's typed question
MAX_OPTION_CHARS: Final = 80  # one option of a typed multiple-choice question
MIN_OPTIONS: Final = 2
MAX_OPTIONS: Final = 6
MAX_GRID: Final = 256  # rows/columns of a "point at it" grid (layers x heads, or one row of positions)
MAX_PROMPT_CHARS: Final = 20_000  # the view's prompt: ui.state's own limit for the prompt
MAX_CONTROLS: Final = 40  # a page's main controls
MAX_CONTROLS_JSON: Final = 8_000  # the controls as compact JSON (an edited table fits)
MAX_CONTROL_DEPTH: Final = 4  # lists of lists of ... at most this deep
CLASS_TTL_S: Final = 12 * 3600.0  # a class nobody led for this long is deleted with everything in it

PAGE_ID: Final = re.compile(r"[a-z][a-z0-9_]{0,39}")
CONTROL_KEY: Final = re.compile(r"[a-z][a-z0-9_.]{0,63}")
SESSION_ID: Final = re.compile(r"[A-Za-z0-9_-]{8,64}")  # Streamlit's session ids are UUIDs
MODEL_NAME: Final = re.compile(r"[^\x00-\x1f\x7f]{1,100}")
BANK_ID: Final = re.compile(r"[a-z0-9_.-]{1,64}")

KINDS: Final = ("next_token", "point", "choice")  # predict the next token, point at it, multiple choice
OPEN, CLOSED, REVEALED = "open", "closed", "revealed"
STATES: Final = (OPEN, CLOSED, REVEALED)


class ClassError(ValueError):
    """A refused class action. ``code`` names the i18n message: ``class.error.<code>``."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


# Every code a backend raises (the UI needs a translation for each; a test checks the list).
ERROR_CODES: Final = (
    "no_class",  # the class code is unknown or the class has ended
    "not_teacher",  # a teacher action without the teacher key
    "bad_session",  # a session id of the wrong shape
    "bad_text",  # control characters, direction overrides, or not text at all
    "nickname_too_long",
    "answer_too_long",
    "class_full",
    "not_joined",  # the student was never joined or was forgotten: join again
    "unknown_question",
    "question_closed",
    "not_revealed",  # a student asked for the counts before the teacher revealed them
    "too_fast",  # rate limit
    "too_many_answers",
    "bad_answer",  # not an option, not a cell of the grid, empty
    "bad_view",  # an unknown page, a prompt or controls out of bounds
    "bad_question",  # a question spec out of bounds
)


# --- the records ------------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """The teacher's view: what a following student's page shows (their language stays theirs)."""

    page: str
    prompt: str
    model: str
    controls: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"page": self.page, "prompt": self.prompt, "model": self.model,
                           "controls": dict(self.controls)}, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> View:
        data = json.loads(text)
        return cls(data["page"], data["prompt"], data["model"], data["controls"])


@dataclass(frozen=True)
class Question:
    """One question of the class. ``spec`` by kind:

    - ``next_token``: ``{"prompt": str, "model": str}`` (the view it was asked on);
    - ``point``: ``{"rows": R, "cols": C, "target": "head" | "position"}``, optionally with the
      teacher's ``"text"`` and the view's ``"prompt"`` and ``"model"``; answers are "r,c";
    - ``choice``: ``{"options": n, "bank_id": str}`` (a bank question, text from the i18n bank) or
      ``{"options": n, "text": str, "labels": [str, ...]}`` (typed by the teacher, optionally with
      ``"correct": i`` and ``"explanation": str`` for the reveal); answers "0".."n-1".
    """

    qid: int
    kind: str
    spec: Mapping[str, Any]
    state: str
    created: float


@dataclass(frozen=True)
class ClassState:
    """What a follower polls for: ``version`` grows on every change to the rest."""

    code: str
    created: float
    version: int
    lead: bool
    view: View | None
    question: Question | None  # the current question (the newest one), if any


@dataclass(frozen=True)
class Student:
    session: str
    nickname: str | None
    following: bool
    last_seen: float


@dataclass(frozen=True)
class Roster:
    joined: int  # heartbeat within JOINED_WINDOW_S
    following: int  # of those, following the teacher


@dataclass(frozen=True)
class Tally:
    """A question's answers: ``counts[answer]``; ``nicknames[answer]``: only those who gave one."""

    qid: int
    total: int
    counts: Mapping[str, int]
    nicknames: Mapping[str, tuple[str, ...]]


# --- checks ---------------------------------------------------------------------------------

# Direction overrides/isolates and other invisible format characters can make a name read as
# something else on the teacher's screen; control characters break layouts and logs.
_BIDI: Final = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Control, format (zero-width spaces, BOM), surrogate, private-use, unassigned, line/paragraph
# separators. The zero-width joiner stays: emoji such as 👩‍🏫 are built with it.
_REFUSED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_ZWJ: Final = "\u200d"


def clean_text(value: Any, max_chars: int, too_long: str = "bad_text", allow_empty: bool = False) -> str:
    """NFC text without control or direction-override characters, stripped, ≤ ``max_chars``.

    Example: clean_text(" 甜 ", 5) -> "甜"
    """
    if not isinstance(value, str):
        raise ClassError("bad_text", "not text")
    if len(value) > 4 * max_chars + 16:  # refuse 10 kB before normalising it
        raise ClassError(too_long, f"more than {max_chars} characters")
    text = unicodedata.normalize("NFC", value).strip()
    for ch in text:
        if ch in _BIDI or (unicodedata.category(ch) in _REFUSED_CATEGORIES and ch != _ZWJ):
            raise ClassError("bad_text", f"character U+{ord(ch):04X} is not allowed")
    if len(text) > max_chars:
        raise ClassError(too_long, f"more than {max_chars} characters")
    if not text and not allow_empty:
        raise ClassError("bad_text", "empty")
    return text


def clean_nickname(value: Any) -> str | None:
    """An optional nickname: None or empty -> None (never required).

    Example: clean_nickname("小明") -> "小明"
    """
    if value is None:
        return None
    text = clean_text(value, MAX_NICKNAME_CHARS, "nickname_too_long", allow_empty=True)
    return text or None


def check_session(session: Any) -> str:
    if not isinstance(session, str) or not SESSION_ID.fullmatch(session):
        raise ClassError("bad_session")
    return session


def check_code(code: Any) -> str:
    if not isinstance(code, str) or not re.fullmatch(r"[A-Z0-9]{4,16}", code):
        raise ClassError("no_class")
    return code


def check_view(view: Any, page_ids: Collection[str]) -> View:
    """The teacher's view, bounded: a known page, a prompt and model name of sane size, and the
    controls as a small JSON object (each student's page re-checks every value through ui.state)."""
    if not isinstance(view, View):
        raise ClassError("bad_view", "not a View")
    if not isinstance(view.page, str) or not PAGE_ID.fullmatch(view.page) or view.page not in page_ids:
        raise ClassError("bad_view", "unknown page")
    if not isinstance(view.prompt, str) or len(view.prompt) > MAX_PROMPT_CHARS:
        raise ClassError("bad_view", "prompt")
    if not isinstance(view.model, str) or not MODEL_NAME.fullmatch(view.model):
        raise ClassError("bad_view", "model")
    controls = view.controls
    if not isinstance(controls, Mapping) or len(controls) > MAX_CONTROLS:
        raise ClassError("bad_view", "controls")
    for key, value in controls.items():
        if not isinstance(key, str) or not CONTROL_KEY.fullmatch(key):
            raise ClassError("bad_view", "control name")
        _check_json_value(value, MAX_CONTROL_DEPTH)
    if len(json.dumps(dict(controls), ensure_ascii=False, separators=(",", ":"))) > MAX_CONTROLS_JSON:
        raise ClassError("bad_view", "controls too large")
    return View(view.page, view.prompt, view.model, dict(controls))


def _check_json_value(value: Any, depth: int) -> None:
    if value is None or isinstance(value, bool) or isinstance(value, str):
        return
    if isinstance(value, int):
        if abs(value) > 2**53:
            raise ClassError("bad_view", "number too large")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ClassError("bad_view", "number not finite")
        return
    if isinstance(value, (list, tuple)) and depth > 0:
        for item in value:
            _check_json_value(item, depth - 1)
        return
    raise ClassError("bad_view", "control value")


def check_question(kind: Any, spec: Any) -> dict[str, Any]:
    """A question's spec by kind (see ``Question``), rebuilt from the known keys only."""
    if kind not in KINDS or not isinstance(spec, Mapping):
        raise ClassError("bad_question", "kind")
    if kind == "next_token":
        prompt, model = spec.get("prompt"), spec.get("model")
        if not isinstance(prompt, str) or len(prompt) > MAX_PROMPT_CHARS:
            raise ClassError("bad_question", "prompt")
        if not isinstance(model, str) or not MODEL_NAME.fullmatch(model):
            raise ClassError("bad_question", "model")
        return {"prompt": prompt, "model": model}
    if kind == "point":
        rows, cols, target = spec.get("rows"), spec.get("cols"), spec.get("target")
        if target not in ("head", "position") or not all(
                type(n) is int and 1 <= n <= MAX_GRID for n in (rows, cols)):
            raise ClassError("bad_question", "grid")
        out = {"rows": rows, "cols": cols, "target": target}
        # Optional: the teacher's typed question, and the view it was asked on (a token's label).
        if spec.get("text"):
            try:
                out["text"] = clean_text(spec["text"], MAX_QUESTION_CHARS)
            except ClassError as error:
                raise ClassError("bad_question", str(error)) from None
        if "prompt" in spec or "model" in spec:
            out.update(check_question("next_token", {"prompt": spec.get("prompt"), "model": spec.get("model")}))
        return out
    n = spec.get("options")
    if type(n) is not int or not MIN_OPTIONS <= n <= MAX_OPTIONS:
        raise ClassError("bad_question", "options")
    if "bank_id" in spec:
        bank_id = spec["bank_id"]
        if not isinstance(bank_id, str) or not BANK_ID.fullmatch(bank_id) or "text" in spec:
            raise ClassError("bad_question", "bank id")
        return {"options": n, "bank_id": bank_id}
    labels = spec.get("labels")
    if not isinstance(labels, (list, tuple)) or len(labels) != n:
        raise ClassError("bad_question", "labels")
    try:
        out: dict[str, Any] = {"options": n, "text": clean_text(spec.get("text"), MAX_QUESTION_CHARS),
                               "labels": [clean_text(label, MAX_OPTION_CHARS) for label in labels]}
        # Optional: the right option and why (shown at the reveal); a typed question may have neither.
        if spec.get("correct") is not None:
            correct = spec["correct"]
            if type(correct) is not int or not 0 <= correct < n:
                raise ClassError("bad_question", "correct option")
            out["correct"] = correct
        if spec.get("explanation"):
            out["explanation"] = clean_text(spec["explanation"], MAX_QUESTION_CHARS)
        return out
    except ClassError as error:
        raise ClassError("bad_question", str(error)) from None


def check_answer(question: Question, answer: Any) -> str:
    """A student's answer to ``question`` as the string it is counted under.

    Example: check_answer(<choice with 4 options>, 2) -> "2"; (<point 12x12>, (3, 5)) -> "3,5"
    """
    if question.kind == "next_token":
        return clean_text(answer, MAX_ANSWER_CHARS, "answer_too_long")
    if question.kind == "choice":
        if type(answer) is str and answer.isdigit() and len(answer) < 3:
            answer = int(answer)
        if type(answer) is not int or not 0 <= answer < question.spec["options"]:
            raise ClassError("bad_answer", "not an option")
        return str(answer)
    if isinstance(answer, str) and len(answer) < 10:
        parts = answer.split(",")
        answer = tuple(int(p) if p.isdigit() and len(p) < 4 else -1 for p in parts)
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or not all(type(n) is int for n in answer)
            or not (0 <= answer[0] < question.spec["rows"] and 0 <= answer[1] < question.spec["cols"])):
        raise ClassError("bad_answer", "not a cell of the grid")
    return f"{answer[0]},{answer[1]}"


def make_tally(qid: int, rows: list[tuple[str, str | None]]) -> Tally:
    """(answer, nickname or None) rows -> counts per answer, nicknames per answer (sorted)."""
    counts: dict[str, int] = {}
    names: dict[str, list[str]] = {}
    for answer, nickname in rows:
        counts[answer] = counts.get(answer, 0) + 1
        if nickname:
            names.setdefault(answer, []).append(nickname)
    return Tally(qid, sum(counts.values()), dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
                 {a: tuple(sorted(names[a])) for a in sorted(names)})
