"""The Training page's numbers (core.training.replay): the textbook example's loss values and the helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.training.replay import cross_entropy, loss_curve, next_token, strongest_coref_head, uniform_loss


def test_textbook_loss_numbers() -> None:
    assert cross_entropy(0.9) == pytest.approx(0.105, abs=5e-4)
    assert cross_entropy(0.01) == pytest.approx(4.6, abs=0.01)
    assert cross_entropy(1.0) == 0.0
    assert uniform_loss(5922) == pytest.approx(math.log(5922))
    assert cross_entropy(1 / 5922) == pytest.approx(uniform_loss(5922))
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            cross_entropy(bad)


def test_next_token_against_a_hand_softmax() -> None:
    logits = np.array([1.0, 3.0, 2.0, 3.0])
    nt = next_token(logits, target_id=2, k=3)
    probs = np.exp(logits) / np.exp(logits).sum()
    assert nt.top_ids == (1, 3, 2)  # ties: the lower id first
    assert nt.target_prob == pytest.approx(probs[2])
    assert nt.target_rank == 3
    assert nt.target_loss == pytest.approx(-math.log(probs[2]))
    assert nt.entropy == pytest.approx(-(probs * np.log(probs)).sum())
    uniform = next_token(np.zeros(100), 7)
    assert uniform.target_loss == pytest.approx(uniform_loss(100))
    with pytest.raises(ValueError):
        next_token(logits, target_id=9)


def test_loss_curve_keeps_short_logs_and_buckets_long_ones() -> None:
    assert loss_curve([3.0, 2.0]) == ([1, 2], [3.0, 2.0])
    steps, values = loss_curve([float(i) for i in range(1, 2001)], max_points=50)
    assert len(steps) <= 50 and steps[-1] == 2000 and steps == sorted(set(steps))
    assert steps[0] <= 2  # the early steps keep their detail (log spacing)
    assert values[-1] > values[0]
    assert loss_curve([]) == ([], [])


def test_strongest_coref_head() -> None:
    assert strongest_coref_head({"coref_heads": {"top_heads": [{"layer": 2, "head": 3}, {"layer": 0, "head": 1}]}}) == (2, 3)
    assert strongest_coref_head({}) is None
    assert strongest_coref_head({"coref_heads": {"top_heads": []}}) is None
