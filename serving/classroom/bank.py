"""The multiple-choice bank: questions written from the textbook's stations, in every language.

The bank lives in ``assets/class/bank.<lang>.json`` (one file per language, the same question
ids in each). A teacher's class question names a bank question by id
(``rules.check_question("choice", {"options": n, "bank_id": qid})``; ``choice_spec`` builds
that spec) and every screen shows it in its own language; a station page's "check yourself"
card (``ui.check_yourself``) draws from the same bank.

Checked as a whole before anything uses it (``BankError`` says what is wrong): ids unique,
shaped like ``rules.BANK_ID`` and the same in every language; the station, the number of
options (2-6), the correct index and the "numeric" flag equal across languages; every
station covered. Loading is cached per process and happens on first use, never at import.

Example: bank("zh").question("sa.softmax_233").options[1] -> "[0.155, 0.422, 0.422]"
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from serving.classroom.rules import BANK_ID, MAX_OPTIONS, MAX_QUESTION_CHARS, MIN_OPTIONS

BANK_DIR: Final = Path(__file__).resolve().parents[2] / "assets" / "class"
LANGUAGES: Final = ("en", "zh")
# The station pages (``ui.nav`` without the Overview; serving never imports ui, a test keeps
# the two lists in step). Every station needs at least one question.
STATIONS: Final = (
    "tokenization", "embeddings", "positional_encoding", "self_attention", "multi_head_attention",
    "transformer_block", "whole_model", "logits_sampling", "generation", "training",
)
MAX_EXPLANATION_CHARS: Final = 600  # a few sentences under the reveal, on a phone too
MAX_BANK_OPTION_CHARS: Final = 130  # longer than a typed option (rules.MAX_OPTION_CHARS): a bank option may explain itself


class BankError(ValueError):
    """The bank's files are broken: the message names the file, the question and the problem."""


@dataclass(frozen=True)
class BankQuestion:
    """One question in one language. ``correct`` indexes ``options``."""

    qid: str
    station: str  # a page id of STATIONS
    text: str
    options: tuple[str, ...]
    correct: int
    explanation: str
    numeric: bool  # its answer is a number the tests recompute with core's functions


@dataclass(frozen=True)
class Bank:
    """Every question of one language, in file order."""

    lang: str
    questions: tuple[BankQuestion, ...]

    def question(self, qid: str) -> BankQuestion:
        """The question with this id (KeyError if there is none)."""
        return self._by_id()[qid]

    def ids(self) -> tuple[str, ...]:
        return tuple(q.qid for q in self.questions)

    def for_station(self, station: str) -> tuple[BankQuestion, ...]:
        """The questions of one station page, in file order (empty for a page with none)."""
        return tuple(q for q in self.questions if q.station == station)

    def _by_id(self) -> dict[str, BankQuestion]:
        return {q.qid: q for q in self.questions}


def bank(lang: str) -> Bank:
    """The checked bank of one language (every language is checked together, once per process).

    Example: len(bank("en").questions) >= 30
    """
    if lang not in LANGUAGES:
        raise KeyError(f"no bank in language {lang!r}; expected one of {LANGUAGES}")
    return _checked_banks()[lang]


def choice_spec(qid: str) -> dict[str, Any]:
    """A class question's spec for a bank question (``rules.Question``'s ``choice`` kind).

    Example: choice_spec("ls.top_p") -> {"options": 4, "bank_id": "ls.top_p"}
    """
    return {"options": len(bank(LANGUAGES[0]).question(qid).options), "bank_id": qid}


@lru_cache(maxsize=1)
def _checked_banks() -> dict[str, Bank]:
    return load_banks(BANK_DIR)


def load_banks(directory: Path) -> dict[str, Bank]:
    """Read ``bank.<lang>.json`` for every language in ``directory`` and check them together."""
    raw: dict[str, Any] = {}
    for lang in LANGUAGES:
        path = directory / f"bank.{lang}.json"
        try:
            raw[lang] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise BankError(f"{path.name}: cannot read it ({error})") from None
    return check_banks(raw)


def check_banks(raw: Mapping[str, Any], stations: Sequence[str] = STATIONS) -> dict[str, Bank]:
    """Every language's parsed JSON -> checked ``Bank``s, or ``BankError`` naming the first problem."""
    banks = {lang: Bank(lang, _check_file(lang, raw.get(lang), stations)) for lang in LANGUAGES}
    first, *others = LANGUAGES
    reference = banks[first].questions
    for lang in others:
        if banks[lang].ids() != banks[first].ids():
            missing = set(banks[first].ids()) ^ set(banks[lang].ids())
            raise BankError(f"bank.{lang}.json: ids differ from bank.{first}.json"
                            f" ({sorted(missing)[:5] or 'same ids, another order'})")
        for ours, theirs in zip(reference, banks[lang].questions):
            for name in ("station", "correct", "numeric"):
                if getattr(ours, name) != getattr(theirs, name):
                    raise BankError(f"bank.{lang}.json {ours.qid}: {name} differs from bank.{first}.json")
            if len(ours.options) != len(theirs.options):
                raise BankError(f"bank.{lang}.json {ours.qid}: number of options differs from bank.{first}.json")
    uncovered = [s for s in stations if not banks[first].for_station(s)]
    if uncovered:
        raise BankError(f"no question for the station(s) {uncovered}")
    return banks


def _check_file(lang: str, data: Any, stations: Sequence[str]) -> tuple[BankQuestion, ...]:
    where = f"bank.{lang}.json"
    if not isinstance(data, dict) or data.get("language") != lang or not isinstance(data.get("questions"), list):
        raise BankError(f"{where}: expected {{\"language\": \"{lang}\", \"questions\": [...]}}")
    out: list[BankQuestion] = []
    seen: set[str] = set()
    for index, item in enumerate(data["questions"]):
        question = _check_question(f"{where} #{index}", item, stations)
        if question.qid in seen:
            raise BankError(f"{where}: id {question.qid!r} appears twice")
        seen.add(question.qid)
        out.append(question)
    return tuple(out)


def _text(where: str, value: Any, max_chars: int) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > max_chars:
        raise BankError(f"{where}: expected text of 1-{max_chars} characters")
    return value


def _check_question(where: str, item: Any, stations: Sequence[str]) -> BankQuestion:
    if not isinstance(item, dict):
        raise BankError(f"{where}: not an object")
    unknown = set(item) - {"id", "station", "text", "options", "correct", "explanation", "numeric"}
    if unknown:
        raise BankError(f"{where}: unknown field(s) {sorted(unknown)}")
    qid = item.get("id")
    if not isinstance(qid, str) or not BANK_ID.fullmatch(qid):
        raise BankError(f"{where}: id {qid!r} must match {BANK_ID.pattern}")
    where = f"{where} ({qid})"
    station = item.get("station")
    if station not in stations:
        raise BankError(f"{where}: unknown station {station!r}")
    options = item.get("options")
    if not isinstance(options, list) or not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise BankError(f"{where}: needs {MIN_OPTIONS}-{MAX_OPTIONS} options")
    labels = tuple(_text(f"{where} option {i}", o, MAX_BANK_OPTION_CHARS) for i, o in enumerate(options))
    if len(set(labels)) != len(labels):
        raise BankError(f"{where}: two options read the same")
    correct = item.get("correct")
    if type(correct) is not int or not 0 <= correct < len(labels):
        raise BankError(f"{where}: correct must index one of its {len(labels)} options")
    numeric = item.get("numeric", False)
    if type(numeric) is not bool:
        raise BankError(f"{where}: numeric must be true or false")
    return BankQuestion(
        qid=qid, station=station, text=_text(f"{where} text", item.get("text"), MAX_QUESTION_CHARS),
        options=labels, correct=correct,
        explanation=_text(f"{where} explanation", item.get("explanation"), MAX_EXPLANATION_CHARS),
        numeric=numeric,
    )
