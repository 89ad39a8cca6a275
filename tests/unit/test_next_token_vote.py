"""core.lessons.next_token_vote: the model's odds read the way students answer, against brute force."""

from __future__ import annotations

import random

import numpy as np
import pytest

from core.engine.numeric import softmax
from core.lessons.next_token_vote import AnswerReading, answer_text, class_vs_model

PIECES = [" Paris", "Paris", "Paris ", " Rome", "Rome", "巴黎", " 巴黎", "e\u0301", "\u00e9", " ", "", "\n", "x"]


def _brute(texts: list[str], probs: np.ndarray, answer: str) -> float | None:
    hits = [p for t, p in zip(texts, probs) if answer_text(t) == answer_text(answer)]
    return float(sum(hits)) if hits else None


def test_worked_example() -> None:
    reading = AnswerReading.of([" Paris", "Paris", " Rome"])
    p = reading.probabilities(np.array([0.5, 0.2, 0.3]))
    assert reading.texts == ("Paris", "Rome")
    assert p.tolist() == pytest.approx([0.7, 0.3])
    assert reading.probability_of(" Paris ", p) == pytest.approx(0.7)
    assert reading.probability_of("Berlin", p) is None
    assert answer_text("e\u0301") == "\u00e9"  # NFC, as the class store counts answers


@pytest.mark.parametrize("seed", range(20))
def test_random_vocabularies_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    texts = [rng.choice(PIECES) + rng.choice(["", "s", "街"]) for _ in range(rng.randint(1, 60))]
    probs = softmax(np.array([rng.gauss(0, 3) for _ in texts]))
    reading = AnswerReading.of(texts)
    grouped = reading.probabilities(probs)
    assert grouped.sum() == pytest.approx(1.0)
    for answer in set(texts) | {"Berlin"}:
        assert reading.probability_of(answer, grouped) == pytest.approx(_brute(texts, probs, answer))
    top = reading.top(grouped, 5)
    assert [p for _, p in top] == sorted((p for _, p in top), reverse=True)
    best = max((p, t) for t, p in zip(reading.texts, grouped) if t)
    assert top[0][1] == pytest.approx(best[0])
    assert all(text for text, _ in top)  # the empty reading (spaces only) is never offered


def test_wrong_vocabulary_size_is_refused() -> None:
    with pytest.raises(ValueError):
        AnswerReading.of(["a", "b"]).probabilities(np.array([1.0]))


def test_class_vs_model_shares_and_rows() -> None:
    reading = AnswerReading.of([" Paris", "Paris", " Rome", " Lyon", " Nice"])
    p = reading.probabilities(np.array([0.5, 0.2, 0.2, 0.06, 0.04]))
    top = reading.top(p, 2)
    rows = class_vs_model({"Paris": 3, "Berlin": 1}, reading, p, top)
    by = {r.answer: r for r in rows}
    assert [r.answer for r in rows] == ["Paris", "Berlin", "Rome"]
    assert by["Paris"].share == pytest.approx(0.75) and by["Paris"].model == pytest.approx(0.7)
    assert by["Berlin"].share == pytest.approx(0.25) and by["Berlin"].model is None
    assert by["Rome"].count == 0 and by["Rome"].model == pytest.approx(0.2)
    # many class answers: the model's top stays, the least chosen class answers go
    counts = {f"w{i:02d}": 20 - i for i in range(20)}
    rows = class_vs_model(counts, reading, p, top, max_rows=6)
    assert len(rows) == 6 and {"Paris", "Rome"} <= {r.answer for r in rows}
    assert [r.answer for r in rows][:4] == ["w00", "w01", "w02", "w03"]
    assert class_vs_model({}, reading, p, top)[0].share == 0.0
