"""Predict the next token, as a class: the model's distribution read the way students answer.

A student answers with text ("Paris"), not a token id, and the class store keeps answers as
typed after Unicode NFC and trimming. So tokens are grouped by that same reading: " Paris" and
"Paris" are one answer, and the model's probability of an answer is the sum of the
probabilities of the tokens that read as it (the chance that the next token, spaces aside,
is what the student wrote). A typed answer that no single token reads as gets no model
probability (``None``): the model would need several steps to write it.

    reading = AnswerReading.of(token_texts)        # once per model (the vocabulary's texts)
    p = reading.probabilities(softmax(logits[-1])) # one entry per reading
    reading.top(p, 5)                              # [("Paris", 0.62), ...]

Example: AnswerReading.of([" Paris", "Paris", " Rome"]).probabilities(np.array([0.5, 0.2, 0.3]))
    -> array([0.7, 0.3])
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def answer_text(token_text: str) -> str:
    """How an answer that matches this token is written: NFC, no surrounding spaces.

    Example: answer_text(" Paris") -> "Paris"
    """
    return unicodedata.normalize("NFC", token_text).strip()


@dataclass(frozen=True)
class AnswerReading:
    """The vocabulary grouped by answer text. ``texts[g]`` is group g's text; ``group[i]`` the
    group of token id i."""

    texts: tuple[str, ...]
    group: np.ndarray  # (vocab,) int: token id -> index into texts
    index: Mapping[str, int]  # text -> group

    @classmethod
    def of(cls, token_texts: Sequence[str]) -> AnswerReading:
        keys = [answer_text(t) for t in token_texts]
        texts, group = np.unique(np.asarray(keys, dtype=object), return_inverse=True)
        names = tuple(str(t) for t in texts)
        return cls(names, np.asarray(group, dtype=np.int64).reshape(-1), {t: i for i, t in enumerate(names)})

    def probabilities(self, token_probs: np.ndarray) -> np.ndarray:
        """Each reading's probability: the sum over its tokens (float64; sums to what the tokens do)."""
        probs = np.asarray(token_probs, dtype=np.float64).reshape(-1)
        if probs.shape[0] != self.group.shape[0]:
            raise ValueError(f"{probs.shape[0]} probabilities for a vocabulary of {self.group.shape[0]}")
        return np.bincount(self.group, weights=probs, minlength=len(self.texts))

    def probability_of(self, answer: str, reading_probs: np.ndarray) -> float | None:
        """The model's probability of an answer as counted, or None when no token reads as it."""
        g = self.index.get(answer_text(answer))
        return None if g is None else float(reading_probs[g])

    def top(self, reading_probs: np.ndarray, k: int,
            usable: Callable[[str], bool] = lambda text: bool(text)) -> list[tuple[str, float]]:
        """The ``k`` most probable readings a student could type (``usable``), most probable first;
        ties by text so every server lists them in the same order."""
        order = sorted(range(len(self.texts)), key=lambda g: (-float(reading_probs[g]), self.texts[g]))
        out: list[tuple[str, float]] = []
        for g in order:
            if usable(self.texts[g]):
                out.append((self.texts[g], float(reading_probs[g])))
                if len(out) == k:
                    break
        return out


@dataclass(frozen=True)
class VoteRow:
    """One bar pair of the reveal: the share of the class that answered ``answer`` and the model's
    probability of it (None: no single token reads as it)."""

    answer: str
    count: int
    share: float
    model: float | None


def class_vs_model(counts: Mapping[str, int], reading: AnswerReading, reading_probs: np.ndarray,
                   model_top: Sequence[tuple[str, float]], max_rows: int = 12) -> list[VoteRow]:
    """The class's answers (most chosen first) and the model's top readings, each with both numbers.

    Shares are count / all answers (so they sum to 1 over every answer given); rows beyond
    ``max_rows`` are dropped from the least chosen class answers, never the model's top.

    Example: class_vs_model({"Paris": 3, "Rome": 1}, reading, p, [("Paris", 0.7)])[0]
        -> VoteRow("Paris", 3, 0.75, 0.7)
    """
    total = sum(counts.values())
    shown = [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    tops = [text for text, _ in model_top]
    room = max(0, max_rows - len(tops))  # the model's top always shows; class answers fill the rest
    kept = []
    for answer in shown:
        if answer in tops:
            kept.append(answer)
        elif room > 0:
            kept.append(answer)
            room -= 1
    kept += [t for t in tops if t not in counts]
    return [VoteRow(a, int(counts.get(a, 0)), counts.get(a, 0) / total if total else 0.0,
                    reading.probability_of(a, reading_probs)) for a in kept]
