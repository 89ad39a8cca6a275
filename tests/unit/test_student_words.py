"""Student-facing text never uses the project's internal words for the teaching material."""

from __future__ import annotations

import json
import re
from pathlib import Path

I18N = Path(__file__).resolve().parents[2] / "assets" / "i18n"
# "seed" (the random seed) is a real control; "seeds" (plural), "the notes", "curriculum",
# "讲义" name the internal teaching files a student has never seen.
INTERNAL = re.compile(r"\bseeds\b|\bthe notes\b|\bNotes:|\bcurriculum|讲义", re.IGNORECASE)


def test_no_internal_words_in_translations() -> None:
    files = sorted(I18N.glob("*.json"))
    assert len(files) >= 14
    bad = [f"{path.name}: {key}: {INTERNAL.search(value).group(0)!r}"
           for path in files for key, value in json.loads(path.read_text(encoding="utf-8")).items()
           if INTERNAL.search(value)]
    assert not bad, bad
