"""The teacher's CSV export: counts per answer of every question, nicknames only where given.

A cell a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return
first) is prefixed with ``'``: a student's nickname ``=HYPERLINK(...)`` must stay text when the
teacher opens the file (OWASP "CSV injection").

Example: csv_text([(question, tally)]) -> "question,kind,state,answer,count,nicknames\\r\\n1,choice,..."
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from serving.classroom.rules import Question, Tally

HEADER = ("question", "kind", "state", "answer", "count", "nicknames")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """Example: safe_cell("=1+1") -> "'=1+1"; safe_cell("Ming") -> "Ming" """
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_text(questions: Iterable[tuple[Question, Tally]]) -> str:
    """One row per (question, answer), most chosen first; nicknames joined with "; "."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    for question, tally in questions:
        for answer, count in tally.counts.items():
            names = "; ".join(safe_cell(n) for n in tally.nicknames.get(answer, ()))
            writer.writerow((question.qid, question.kind, question.state, safe_cell(answer), count, names))
    return out.getvalue()
