"""Predict-the-next-token questions: the model's side, read from the shared run of the question's
prompt (``serving.models.run_prompt``) with ``core.lessons.next_token_vote``.

Every number here is the model's own: the next-token distribution of the last position
(``core.engine.numeric.softmax`` of its logits), grouped by how a student would write each token.

Example: candidates("classic", "The capital of France is") -> ["Paris", "London", ...] (sorted)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np

from core.engine.numeric import softmax
from core.lessons.next_token_vote import AnswerReading, VoteRow, class_vs_model
from serving.classroom import rules
from serving.classroom.rules import ClassError, Tally

CANDIDATES: Final = 8  # what a student picks from (typing stays open)
MODEL_TOP: Final = 5


def typable(text: str) -> bool:
    """Can a student answer with this text (the store would count it as is)?"""
    if "\ufffd" in text:  # a lone byte of a character: not something anyone writes
        return False
    try:
        return rules.clean_text(text, rules.MAX_ANSWER_CHARS, "answer_too_long") == text
    except ClassError:
        return False


@lru_cache(maxsize=8)
def reading(model_name: str) -> AnswerReading:
    """The model's vocabulary grouped by answer text (once per model and process)."""
    from serving.models import get_model

    loaded = get_model(model_name)
    vocab = int(loaded.config.vocab_size)
    return AnswerReading.of([loaded.tokenizer.decode([i]) for i in range(vocab)])


@dataclass(frozen=True)
class NextTokenOdds:
    reading: AnswerReading
    probs: np.ndarray  # one probability per reading (sums to 1)
    top: list[tuple[str, float]]  # the model's most probable typable readings


@lru_cache(maxsize=32)
def odds(model_name: str, prompt: str) -> NextTokenOdds:
    """The model's next-token odds after ``prompt`` (PromptProblem when the prompt cannot run)."""
    from serving.models import run_prompt

    run = run_prompt(model_name, prompt)
    grouped = reading(model_name)
    probs = grouped.probabilities(softmax(np.asarray(run.logits[-1], dtype=np.float64)))
    return NextTokenOdds(grouped, probs, grouped.top(probs, max(CANDIDATES, MODEL_TOP), typable))


def candidates(model_name: str, prompt: str) -> list[str]:
    """The answers offered to pick from: the model's most probable, in text order (the ranking
    is what the reveal shows, so it is not given away)."""
    return sorted(text for text, _ in odds(model_name, prompt).top[:CANDIDATES])


def reveal_rows(model_name: str, prompt: str, tally: Tally) -> tuple[list[VoteRow], list[tuple[str, float]]]:
    """The reveal's rows (class share beside model probability) and the model's top 5."""
    found = odds(model_name, prompt)
    top = found.top[:MODEL_TOP]
    return class_vs_model(tally.counts, found.reading, found.probs, top), top
