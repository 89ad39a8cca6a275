"""From logits to the next token: temperature, top-k, top-p, then a draw.

Written out step by step because this IS the lesson. The order is fixed and documented:

    1. temperature   divide the logits by T, softmax. T = 0 means greedy: all mass on the argmax.
    2. top-k         keep the k most probable tokens (None or 0 = off).
    3. top-p         of what is left (renormalised), keep the smallest set of most probable
                     tokens whose probabilities add up to at least p (1.0 = off).
    4. renormalise   the survivors' probabilities are divided by their sum.

Top-k and top-p rank tokens by their *logits*, not by the tempered probabilities: dividing
by T > 0 keeps the order, but at T = 0 (or a tiny T) the probabilities are one-hot or
underflow to exact zeros, and ranking those would hand top-k's places to the lowest ids.
Tie-breaking is deterministic: when logits are equal, the lower token id ranks first (for
the argmax, for top-k's k-th place and for top-p's cut).

Worked example (T = 1, p = 0.9): probabilities [0.5, 0.3, 0.15, 0.05] -> the running sum
reaches 0.8 after two tokens and 0.95 after three, so top-p keeps three and renormalises
them to [0.526, 0.316, 0.158, 0].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.engine.numeric import softmax  # re-exported: the Sampling page shows softmax(logits)


def _check_logits(logits: np.ndarray | list[float]) -> np.ndarray:
    array = np.asarray(logits, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"logits must be a non-empty 1-D array over the vocabulary, got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError("logits contain NaN; the model output is broken")
    if np.isposinf(array).any():
        raise ValueError("logits contain +infinity; scores must be finite (or -inf for banned tokens)")
    if np.isneginf(array).all():
        raise ValueError("every logit is -infinity: no token can be chosen")
    return array


def check_params(temperature: float, top_k: int | None, top_p: float) -> None:
    """Raise ValueError with a readable message when a sampling setting is out of range.

    Example: check_params(0.7, 50, 0.9)  # fine; check_params(-1, None, 1.0) raises
    """
    if not isinstance(temperature, (int, float, np.floating, np.integer)) or isinstance(temperature, bool):
        raise ValueError(f"temperature must be a number, got {temperature!r}")
    if math.isnan(temperature) or math.isinf(temperature):
        raise ValueError(f"temperature must be a finite number, got {temperature}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 means greedy), got {temperature}")
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)):
            raise ValueError(f"top_k must be an int or None, got {top_k!r}")
        if top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 or None turns it off), got {top_k}")
    if not isinstance(top_p, (int, float, np.floating, np.integer)) or isinstance(top_p, bool):
        raise ValueError(f"top_p must be a number, got {top_p!r}")
    if math.isnan(top_p) or not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1] (1.0 turns it off), got {top_p}")


def entropy_bits(probs: np.ndarray) -> float:
    """Shannon entropy in bits (0 for a certain outcome, log2(n) for n equally likely ones).

    Example: entropy_bits(np.array([0.5, 0.5])) -> 1.0
    """
    p = np.asarray(probs, dtype=np.float64)
    nonzero = p[p > 0]
    return float(-(nonzero * np.log2(nonzero)).sum()) + 0.0  # + 0.0 turns -0.0 into 0.0


def _rank(scores: np.ndarray) -> np.ndarray:
    """Token ids from highest to lowest score (logit or probability), lower id first among equals."""
    return np.lexsort((np.arange(scores.size), -scores))


def apply_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T); T = 0 puts all probability on the argmax (lowest id among ties).

    Example: apply_temperature(np.array([1.0, 2.0]), 0.0) -> array([0., 1.])
    """
    array = _check_logits(logits)
    if temperature == 0:
        one_hot = np.zeros_like(array)
        one_hot[int(np.argmax(array))] = 1.0  # np.argmax returns the first maximum
        return one_hot
    shifted = array - array.max()  # shift first: the max becomes 0, the rest go to -inf, never to +inf
    with np.errstate(over="ignore"):  # a tiny T sends non-max scores to -inf: that is the greedy limit
        return softmax(shifted / temperature)


def top_k_cut(scores: np.ndarray, top_k: int | None) -> np.ndarray:
    """Boolean mask of the tokens top-k removes (everything outside the k highest scores).

    Pass logits (``sampling_steps`` does): probabilities after T = 0 are all ties.

    Example: top_k_cut(np.array([0.1, 0.6, 0.3]), 2) -> array([ True, False, False])
    """
    scores = np.asarray(scores, dtype=np.float64)
    cut = np.zeros(scores.size, dtype=bool)
    if not top_k or top_k >= scores.size:
        return cut
    cut[_rank(scores)[top_k:]] = True
    return cut


def top_p_cut(probs: np.ndarray, top_p: float, rank_by: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the tokens top-p removes: all after the running sum first reaches p.

    ``probs`` must already be renormalised. Tokens are taken in the order of ``rank_by``
    (the logits; default: ``probs`` itself). The best-ranked token always survives.

    Example: top_p_cut(np.array([0.5, 0.3, 0.15, 0.05]), 0.9) -> array([False, False, False,  True])
    """
    cut = np.zeros(probs.size, dtype=bool)
    if top_p >= 1.0:
        return cut
    order = _rank(probs if rank_by is None else np.asarray(rank_by, dtype=np.float64))
    mass_before = np.cumsum(probs[order]) - probs[order]  # probability of the better-ranked tokens
    cut[order[mass_before >= top_p]] = True  # once p is reached, everything after is dropped
    cut[order[0]] = False
    return cut


def _renormalise(probs: np.ndarray, cut: np.ndarray) -> np.ndarray:
    # The top-ranked token is never cut and has probability > 0, so the sum is positive.
    kept = np.where(cut, 0.0, probs)
    return kept / kept.sum()


@dataclass(frozen=True)
class SamplingSteps:
    """Every stage of the transform, for the Sampling page. Arrays cover the whole vocabulary."""

    temperature: float
    top_k: int | None
    top_p: float
    original_probs: np.ndarray  # softmax(logits), T = 1
    tempered_probs: np.ndarray  # softmax(logits / T)
    cut_by_top_k: np.ndarray  # bool: True where top-k removed the token
    after_top_k_probs: np.ndarray  # tempered, top-k survivors renormalised
    cut_by_top_p: np.ndarray  # bool: True where top-p removed a token top-k had kept
    final_probs: np.ndarray  # what the draw uses
    entropy_original_bits: float
    entropy_tempered_bits: float
    entropy_after_top_k_bits: float
    entropy_final_bits: float

    @property
    def n_candidates(self) -> int:
        """How many tokens can still be drawn."""
        return int((self.final_probs > 0).sum())


def sampling_steps(
    logits: np.ndarray | list[float],
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
) -> SamplingSteps:
    """Run temperature -> top-k -> top-p -> renormalise and keep every intermediate.

    Example: sampling_steps([2.0, 1.0, 0.0], temperature=1.0, top_k=2).final_probs.round(3) -> array([0.731, 0.269, 0.   ])
    """
    check_params(temperature, top_k, top_p)
    array = _check_logits(logits)
    original = softmax(array)
    tempered = apply_temperature(array, float(temperature))
    k_cut = top_k_cut(array, None if top_k is None else int(top_k))  # ranked on logits, not on tempered ties
    after_k = _renormalise(tempered, k_cut)
    p_cut = top_p_cut(after_k, float(top_p), rank_by=np.where(k_cut, -np.inf, array)) & ~k_cut
    final = _renormalise(after_k, k_cut | p_cut)
    return SamplingSteps(
        temperature=float(temperature),
        top_k=None if not top_k else int(top_k),
        top_p=float(top_p),
        original_probs=original,
        tempered_probs=tempered,
        cut_by_top_k=k_cut,
        after_top_k_probs=after_k,
        cut_by_top_p=p_cut,
        final_probs=final,
        entropy_original_bits=entropy_bits(original),
        entropy_tempered_bits=entropy_bits(tempered),
        entropy_after_top_k_bits=entropy_bits(after_k),
        entropy_final_bits=entropy_bits(final),
    )


def next_token_distribution(
    logits: np.ndarray | list[float],
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
) -> np.ndarray:
    """Probabilities over the whole vocabulary after temperature, top-k and top-p.

    Example: next_token_distribution([2.0, 1.0, 0.0], temperature=0) -> array([1., 0., 0.])
    """
    return sampling_steps(logits, temperature, top_k, top_p).final_probs


def sample(probs: np.ndarray | list[float], n: int = 1, seed: int = 0) -> np.ndarray:
    """Draw n token ids (with replacement) from a distribution, repeatably for a seed.

    Example: sample(np.array([0.0, 1.0, 0.0]), n=3, seed=7) -> array([1, 1, 1])
    """
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"probs must be a non-empty 1-D array, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("probs must be finite and non-negative")
    total = p.sum()
    if not abs(total - 1.0) < 1e-6:
        raise ValueError(f"probs must sum to 1, got {total:.6g}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1 or n > 1_000_000:
        raise ValueError(f"n must be an int in [1, 1000000], got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    rng = np.random.default_rng(int(seed))
    return rng.choice(p.size, size=int(n), p=p / total)
