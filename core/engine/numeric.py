"""The one numeric softmax of the core: scores to probabilities, in float64, never overflowing.

Why a module of its own, and not ``core.engine.sampling``: the softmax is used by the
sampling lesson, the attention lab, the logit lens, the block page's ablations, the probes
and the replay of training, and none of those should have to import the sampling pipeline
(or each other) to turn scores into probabilities. One function here means one place where
the numerics are decided:

- float64 always: the pages compare probabilities across 50k-150k tokens and show them to
  3-4 digits; float32 would lose the small ones the tails and the entropy are made of.
- shifted by the max along ``axis`` first, so exp() never overflows; exp(-inf) is exactly 0,
  so masked scores get no weight (a row of only -inf is the caller's to refuse: it has no
  distribution).
- the reduced axis is moved last and back, so every axis sums in the same (contiguous) order
  and a row gives bit-for-bit the same probabilities whatever array it sits in.

Lesson code that *teaches* the formula (``core.lessons.attention_math.softmax_steps``) spells
the exp and the sum out itself, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def softmax(scores: np.ndarray | Sequence[float], axis: int = -1) -> np.ndarray:
    """exp(x − max) / Σ exp(x − max) along ``axis``, in float64; −∞ becomes exactly 0.

    Example: softmax([1.0, 2.0, 3.0]).round(2) -> array([0.09, 0.24, 0.67])
    Example: softmax([[0.0, 0.0], [0.0, -np.inf]]) -> array([[0.5, 0.5], [1. , 0. ]])
    """
    moved = np.moveaxis(np.asarray(scores, dtype=np.float64), axis, -1)  # (..., n): reduce over the last axis
    shifted = moved - moved.max(axis=-1, keepdims=True)  # the largest becomes 0: exp never overflows
    weights = np.exp(shifted)  # exp(−∞) = 0: masked scores get no weight
    return np.moveaxis(weights / weights.sum(axis=-1, keepdims=True), -1, axis)
