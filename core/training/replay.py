"""What the Training page's replay shows at one snapshot: pure numpy helpers, unit-tested.

Cross-entropy is the loss the model was trained with: for one prediction it is −ln p(correct).
The textbook example's numbers: p = 0.9 → 0.105, p = 0.01 → 4.6; a model that knows nothing
spreads p = 1/vocab over every token and starts at ln(vocab).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.numeric import softmax

__all__ = ["NextToken", "cross_entropy", "loss_curve", "next_token", "strongest_coref_head", "uniform_loss"]


def cross_entropy(p: float) -> float:
    """−ln p, the loss of one prediction that gave the correct token probability p.

    Example: round(cross_entropy(0.9), 3) -> 0.105; round(cross_entropy(0.01), 1) -> 4.6
    """
    if not 0 < p <= 1:
        raise ValueError("p must be in (0, 1]")
    return -math.log(p)


def uniform_loss(vocab_size: int) -> float:
    """The loss of a model that spreads its bet evenly over the vocabulary: ln(vocab).

    Example: round(uniform_loss(5000), 2) -> 8.52
    """
    if vocab_size < 1:
        raise ValueError("vocab_size must be >= 1")
    return math.log(vocab_size)


@dataclass(frozen=True)
class NextToken:
    top_ids: tuple[int, ...]  # most probable first
    top_probs: tuple[float, ...]
    target_id: int
    target_prob: float
    target_rank: int  # 1 = the model's first choice
    target_loss: float  # −ln p(target)
    entropy: float  # nats


def next_token(logits: np.ndarray, target_id: int, k: int = 10) -> NextToken:
    """The next-token distribution from one position's logits, and how the target fares.

    Example: next_token(np.array([0.0, 2.0, 1.0]), target_id=2, k=2).target_rank -> 2
    """
    z = np.asarray(logits, dtype=np.float64).reshape(-1)
    if not 0 <= target_id < z.size:
        raise ValueError("target_id is outside the vocabulary")
    probs = softmax(z)
    order = np.lexsort((np.arange(z.size), -probs))  # most probable first, lower id among equals
    top = order[: max(1, min(k, z.size))]
    p = float(probs[target_id])
    rank = int(np.nonzero(order == target_id)[0][0]) + 1
    nz = probs[probs > 0]
    return NextToken(
        top_ids=tuple(int(i) for i in top), top_probs=tuple(float(probs[i]) for i in top), target_id=int(target_id),
        target_prob=p, target_rank=rank, target_loss=float(-np.log(max(p, 1e-300))),
        entropy=float(-(nz * np.log(nz)).sum()),
    )


def strongest_coref_head(metrics: Mapping[str, Any]) -> tuple[int, int] | None:
    """(layer, head) of the model's strongest coreference head from metrics.json, if recorded.

    Example: strongest_coref_head({"coref_heads": {"top_heads": [{"layer": 2, "head": 3}]}}) -> (2, 3)
    """
    try:
        top = metrics["coref_heads"]["top_heads"][0]
        return int(top["layer"]), int(top["head"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def loss_curve(train_log: Sequence[float], max_points: int = 300) -> tuple[list[int], list[float]]:
    """(steps, mean loss) of a per-step training log, averaged into at most ``max_points`` buckets
    spaced evenly on a log scale of the step (the early fall keeps its detail).

    Example: loss_curve([4.0, 3.0, 2.0, 1.0], max_points=4) -> ([1, 2, 3, 4], [4.0, 3.0, 2.0, 1.0])
    """
    values = np.asarray(train_log, dtype=float)
    n = values.size
    if n == 0:
        return [], []
    if n <= max_points:
        return list(range(1, n + 1)), [float(v) for v in values]
    edges = np.unique(np.round(np.geomspace(1, n + 1, max_points + 1)).astype(int))
    steps, means = [], []
    for lo, hi in zip(edges[:-1], edges[1:]):
        chunk = values[lo - 1 : hi - 1]
        if chunk.size:
            steps.append(int(hi - 1))
            means.append(float(chunk.mean()))
    return steps, means
