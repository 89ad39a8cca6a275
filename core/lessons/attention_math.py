"""Self-attention written out on small numbers, one step at a time.

The model in ``core.engine.model`` does all of this in a few fused tensor operations; here every
intermediate is kept so a page can show it and a student can check it by hand:

    Q = X W_Q,  K = X W_K,  V = X W_V
    scores  = Q Kᵀ                      (how well each query matches each key)
    scaled  = scores / √d_k             (optional: keeps the spread of scores near 1)
    masked  = scaled, with −∞ above the diagonal  (optional: a GPT may not look ahead)
    weights = softmax of each row       (each row sums to 1)
    output  = weights V                 (a weighted mix of the value vectors)

Also here: the softmax lab (softmax next to plain normalisation, which breaks on scores
that sum to zero), the √d_k experiment on random vectors, and multi-head attention
(split into heads, one softmax per head, concatenate, W_O). Pure numpy; no streamlit.

The worked example is the curriculum's "我 爱 你" (seeds, station 3). Its hand-written
numbers cannot all come from its own X: that X has 你 = 我 + ½·爱, so every projection of
你 is forced to be the same mix of the other two, and the stated keys K₂ = [1, 0, 1] and
scores [2, 3, 3] are impossible for any W. ``SEED_X`` therefore changes one number of 你
([1, 1, 1, 1] → [1, 1, 1, 0]); with the W matrices below every other number of the
example (Q₀, K, V, the full score matrix, 0.155/0.422, Output₀) comes out exactly.
``SEED_X_AS_WRITTEN`` keeps the original so a page can show what goes wrong.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.engine import numeric

NEG_INF = float("-inf")

# --- the curriculum's worked example --------------------------------------------------

SEED_TOKENS: tuple[str, ...] = ("我", "爱", "你")
SEED_X_AS_WRITTEN = np.array([
    [1.0, 0.0, 1.0, 0.0],  # 我
    [0.0, 2.0, 0.0, 2.0],  # 爱
    [1.0, 1.0, 1.0, 1.0],  # 你  (= 我 + ½·爱: the rows are linearly dependent)
])
SEED_X = np.array([
    [1.0, 0.0, 1.0, 0.0],  # 我
    [0.0, 2.0, 0.0, 2.0],  # 爱
    [1.0, 1.0, 1.0, 0.0],  # 你  (last number 1 → 0, so the three rows are independent)
])
# Chosen (simplest entries, multiples of ½) so that SEED_X reproduces the seeds' vectors:
# Q₀ = [1, 0, 2]; K = [[0, 1, 1], [1, 2, 1], [1, 0, 1]]; V = [[1, 2, 3], [2, 8, 0], [2, 6, 3]];
# Q₁, Q₂ are the unique queries that give the seeds' score rows [2, 4, 4] and [1, 2, 3].
SEED_W_Q = np.array([
    [0.0, 0.0, 0.0],
    [0.5, -0.5, -0.5],
    [1.0, 0.0, 2.0],
    [0.5, 0.5, 1.5],
])
SEED_W_K = np.array([
    [0.0, 1.0, 0.0],
    [1.0, -1.0, 0.0],
    [0.0, 0.0, 1.0],
    [-0.5, 2.0, 0.5],
])
SEED_W_V = np.array([
    [0.0, 2.0, 0.0],
    [1.0, 4.0, 0.0],
    [1.0, 0.0, 3.0],
    [0.0, 0.0, 0.0],
])

# Station 4: "我 爱 你" with d = 6, split into h = 2 heads of 3 dimensions.
SEED_MULTIHEAD_X = np.array([
    [1.0, 0.0, 1.0, 0.0, 0.5, 0.5],  # 我
    [0.0, 2.0, 0.0, 2.0, 1.0, 0.0],  # 爱
    [1.0, 1.0, 1.0, 1.0, 0.0, 1.0],  # 你
])

# Softmax cases the seeds compute by hand, with the values they print.
SEED_SOFTMAX_CASES: tuple[tuple[str, tuple[float, ...], tuple[float, ...]], ...] = (
    ("row0", (2.0, 3.0, 3.0), (0.155, 0.422, 0.422)),
    ("negative", (1.0, -2.0, 1.0), (0.488, 0.024, 0.488)),
    ("masked0", (2.0, NEG_INF, NEG_INF), (1.0, 0.0, 0.0)),
    ("masked1", (2.0, 4.0, NEG_INF), (0.12, 0.88, 0.0)),
    ("masked2", (1.0, 2.0, 3.0), (0.09, 0.24, 0.67)),
    ("equal", (1.0, 1.0, 1.0), (0.333, 0.333, 0.333)),
    ("winner", (1.0, 3.0, 10.0), (0.0, 0.001, 0.999)),
    ("ignored", (1.0, -100.0, 1.0), (0.5, 0.0, 0.5)),
    ("small_gap", (1.0, 2.0), (0.27, 0.73)),
    ("big_gap", (1.0, 5.0), (0.018, 0.982)),
)

# Bounds that keep every widget value harmless.
MAX_TOKENS = 12
MAX_DIM = 16
MAX_ABS_VALUE = 1e6
MAX_D_K = 4096


class InputProblem(ValueError):
    """Text that is not a usable vector or matrix; ``code`` lets a page translate it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# --- parsing what a student types -------------------------------------------------------

_NEG_INF_WORDS = {"-inf", "−inf", "-∞", "−∞", "-infinity", "−infinity"}
_SEPARATORS = re.compile(r"[,\s，;；]+")


def parse_number(text: str) -> float:
    """One number as a student types it; "-inf" and "−∞" mean minus infinity.

    Example: parse_number("−∞") -> -inf
    """
    word = text.strip().lower().replace("＋", "+")
    if word in _NEG_INF_WORDS:
        return NEG_INF
    word = word.replace("−", "-")  # the typographic minus sign
    try:
        value = float(word)
    except ValueError:
        raise InputProblem("not_a_number", f"{text!r} is not a number") from None
    if math.isnan(value) or value == math.inf:
        raise InputProblem("not_finite", f"{text!r} is not allowed: only −∞ may stand for a masked score")
    if value == NEG_INF:  # "-1e999" and the like
        return NEG_INF
    if abs(value) > MAX_ABS_VALUE:
        raise InputProblem("too_large", f"{text!r} is larger than {MAX_ABS_VALUE:g} in size")
    return value


def parse_vector(text: str, max_len: int = MAX_TOKENS, allow_neg_inf: bool = True) -> np.ndarray:
    """Numbers separated by commas or spaces (brackets allowed).

    Example: parse_vector("[2, 3, -inf]") -> array([ 2.,  3., -inf])
    """
    if not isinstance(text, str):
        raise InputProblem("not_a_number", f"expected text, got {type(text).__name__}")
    body = text.strip().strip("[]()（）【】").strip()
    if not body:
        raise InputProblem("empty", "no numbers were given")
    parts = [p for p in _SEPARATORS.split(body) if p]
    if len(parts) > max_len:
        raise InputProblem("too_many", f"{len(parts)} numbers given; at most {max_len}")
    values = np.array([parse_number(p) for p in parts], dtype=float)
    if not allow_neg_inf and np.isinf(values).any():
        raise InputProblem("not_finite", "−∞ is only allowed for scores")
    return values


def parse_matrix(text: str, max_rows: int = MAX_TOKENS, max_cols: int = MAX_DIM) -> np.ndarray:
    """One row per line, numbers separated by commas or spaces; all rows the same length.

    Example: parse_matrix("1 0\\n0 1") -> array([[1., 0.], [0., 1.]])
    """
    if not isinstance(text, str):
        raise InputProblem("not_a_number", f"expected text, got {type(text).__name__}")
    lines = [line for line in text.strip().splitlines() if line.strip().strip("[](),")]
    if not lines:
        raise InputProblem("empty", "the matrix is empty")
    if len(lines) > max_rows:
        raise InputProblem("too_many", f"{len(lines)} rows given; at most {max_rows}")
    rows = [parse_vector(line, max_len=max_cols, allow_neg_inf=False) for line in lines]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise InputProblem("ragged", f"rows have different lengths: {[len(r) for r in rows]}")
    return np.vstack(rows)


def format_matrix(matrix: np.ndarray) -> str:
    """The text form ``parse_matrix`` reads back (what an editable box starts with).

    Example: format_matrix(np.array([[1.0, -0.5]])) -> "1 -0.5"
    """
    return "\n".join(" ".join(f"{v:g}" for v in row) for row in np.asarray(matrix, dtype=float))


# --- softmax and plain normalisation ---------------------------------------------------


def _check_scores(scores: np.ndarray) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    if scores.ndim == 0 or scores.shape[-1] == 0:
        raise InputProblem("empty", "softmax needs at least one score")
    if np.isnan(scores).any() or (scores == math.inf).any():
        raise InputProblem("not_finite", "scores may be numbers or −∞, not NaN or +∞")
    if np.isneginf(scores).all(axis=-1).any():
        raise InputProblem("all_masked", "every score in a row is −∞: softmax would divide 0 by 0")
    return scores


def softmax(scores: np.ndarray | Sequence[float], axis: int = -1) -> np.ndarray:
    """exp(x) / Σ exp(x) along ``axis``; −∞ becomes exactly 0 (``core.engine.numeric.softmax``).

    The lab's scores are typed by the student, so they are checked first: a row of only −∞,
    a NaN or +∞ is an ``InputProblem`` the page explains, not a silent NaN.

    Example: softmax([2, 3, 3]).round(3) -> array([0.155, 0.422, 0.422])
    """
    rows = _check_scores(np.moveaxis(np.asarray(scores, dtype=float), axis, -1))  # (..., n): checked along the softmax axis
    return np.moveaxis(numeric.softmax(rows), -1, axis)


@dataclass(frozen=True)
class SoftmaxSteps:
    """The seeds' hand calculation: e^x for each score, their sum, each e^x over the sum.

    ``shift`` is subtracted first only when e^x would overflow (then the page shows e^(x − shift)).
    """

    scores: np.ndarray
    shift: float
    exps: np.ndarray
    total: float
    weights: np.ndarray


def softmax_steps(scores: np.ndarray | Sequence[float]) -> SoftmaxSteps:
    """Softmax of one row with its intermediate numbers.

    Example: softmax_steps([2, 3, 3]).total -> 47.56...  (7.389 + 20.086 + 20.086)
    """
    row = _check_scores(np.asarray(scores, dtype=float))
    if row.ndim != 1:
        raise InputProblem("not_a_vector", f"expected one row of scores, got shape {row.shape}")
    # Written out, not numeric.softmax: the exps and their sum ARE the lesson (the page shows each).
    top = float(row.max())
    shift = top if top > 50.0 else 0.0  # e^50 ≈ 5e21 is still exact enough; beyond, shift
    exps = np.exp(row - shift)
    total = float(exps.sum())
    return SoftmaxSteps(scores=row, shift=shift, exps=exps, total=total, weights=exps / total)


@dataclass(frozen=True)
class PlainNormalisation:
    """x / Σ x: what "just divide by the total" gives, or why it cannot.

    ``problem`` is None, "division_by_zero" (the scores sum to 0), "masked" (a −∞ score),
    or "negative" (it divided, but some weights are negative: not a distribution).
    """

    scores: np.ndarray
    total: float
    weights: np.ndarray | None
    problem: str | None


def plain_normalise(scores: np.ndarray | Sequence[float]) -> PlainNormalisation:
    """Divide each score by the sum of the scores, detecting the seeds' division by zero.

    Example: plain_normalise([1, -2, 1]).problem -> "division_by_zero"
    """
    row = np.asarray(scores, dtype=float)
    if row.ndim != 1 or row.size == 0:
        raise InputProblem("empty", "plain normalisation needs one non-empty row of scores")
    if np.isnan(row).any() or (row == math.inf).any():
        raise InputProblem("not_finite", "scores may be numbers or −∞, not NaN or +∞")
    if np.isneginf(row).any():
        return PlainNormalisation(row, NEG_INF, None, "masked")
    total = float(row.sum())
    # Relative tolerance: 0.1 + 0.2 − 0.3 is "zero" for a student even if not for a float.
    if abs(total) <= 1e-12 * max(1.0, float(np.abs(row).max())):
        return PlainNormalisation(row, 0.0, None, "division_by_zero")
    weights = row / total
    problem = "negative" if (weights < 0).any() else None
    return PlainNormalisation(row, total, weights, problem)


def entropy_bits(weights: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy in bits of probability rows (0·log 0 counts as 0).

    Example: entropy_bits(np.array([0.25, 0.25, 0.25, 0.25])) -> 2.0
    """
    p = np.asarray(weights, dtype=float)
    terms = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=axis)


# --- one attention head, every intermediate kept --------------------------------------


def causal_mask(n: int) -> np.ndarray:
    """True where a query may NOT look: keys after the query (above the diagonal).

    Example: causal_mask(2) -> array([[False,  True], [False, False]])
    """
    return np.triu(np.ones((n, n), dtype=bool), k=1)


@dataclass(frozen=True)
class AttentionSteps:
    """Every intermediate of one head: shapes (n = tokens, d_k = query/key width, d_v)."""

    x: np.ndarray  # (n, d_model)
    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    v: np.ndarray  # (n, d_v)
    scores: np.ndarray  # (n, n)  Q Kᵀ
    divisor: float  # √d_k when scaling, else 1
    scaled: np.ndarray  # (n, n)  scores / divisor
    masked: np.ndarray  # (n, n)  scaled with −∞ where the causal mask forbids
    weights: np.ndarray  # (n, n)  softmax of each row of masked
    output: np.ndarray  # (n, d_v)  weights V
    scale: bool
    causal: bool

    @property
    def d_k(self) -> int:
        return int(self.q.shape[1])


def _check_matrix(name: str, m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, dtype=float)
    if m.ndim != 2 or 0 in m.shape:
        raise InputProblem("shape", f"{name} must be a non-empty matrix, got shape {m.shape}")
    if not np.isfinite(m).all():
        raise InputProblem("not_finite", f"{name} contains NaN or infinity")
    if np.abs(m).max() > MAX_ABS_VALUE:
        raise InputProblem("too_large", f"{name} has a value larger than {MAX_ABS_VALUE:g}")
    return m


def attention_steps(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    *,
    scale: bool = True,
    causal: bool = False,
) -> AttentionSteps:
    """One attention head on X (tokens × d_model), keeping every step.

    Example: attention_steps(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, scale=False).weights[0].round(3) -> [0.155, 0.422, 0.422]
    """
    x = _check_matrix("X", x)
    w_q, w_k, w_v = (_check_matrix(n, m) for n, m in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)))
    d_model = x.shape[1]
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        if w.shape[0] != d_model:
            raise InputProblem(
                "shape", f"{name} has {w.shape[0]} rows but X has {d_model} columns: X {name} needs them equal"
            )
    if w_q.shape[1] != w_k.shape[1]:
        raise InputProblem(
            "shape", f"W_Q gives {w_q.shape[1]} columns and W_K {w_k.shape[1]}: Q·K needs the same width"
        )
    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (n, d_k), (n, d_k), (n, d_v)
    scores = q @ k.T  # (n, n): row i = how well query i matches every key
    divisor = math.sqrt(q.shape[1]) if scale else 1.0
    scaled = scores / divisor
    masked = np.where(causal_mask(len(x)), NEG_INF, scaled) if causal else scaled.copy()
    weights = softmax(masked, axis=-1)
    return AttentionSteps(x, q, k, v, scores, divisor, scaled, masked, weights, weights @ v, scale, causal)


@dataclass(frozen=True)
class RowWalkthrough:
    """One query's row written out as in the seeds: dot products, softmax, weighted sum."""

    query: int
    products: np.ndarray  # (n_keys, d_k): q_i[c] * k_j[c], the terms of each dot product
    dots: np.ndarray  # (n_keys,)  Q_i · K_j
    divisor: float
    masked: np.ndarray  # (n_keys,) bool: key hidden by the causal mask
    softmax: SoftmaxSteps
    weighted_values: np.ndarray  # (n_keys, d_v): weight_j × V_j
    output: np.ndarray  # (d_v,)


def row_walkthrough(steps: AttentionSteps, query: int) -> RowWalkthrough:
    """The hand calculation for one query row of ``steps``.

    Example: row_walkthrough(attention_steps(SEED_X, SEED_W_Q, SEED_W_K, SEED_W_V, scale=False), 0).dots -> [2, 3, 3]
    """
    n = len(steps.x)
    if not 0 <= query < n:
        raise InputProblem("shape", f"query {query} is outside 0..{n - 1}")
    products = steps.q[query][None, :] * steps.k  # (n_keys, d_k)
    weights = steps.weights[query]
    return RowWalkthrough(
        query=query,
        products=products,
        dots=steps.scores[query],
        divisor=steps.divisor,
        masked=np.isneginf(steps.masked[query]),
        softmax=softmax_steps(steps.masked[query]),
        weighted_values=weights[:, None] * steps.v,
        output=steps.output[query],
    )


def random_example(
    seed: int, n_tokens: int = 3, d_model: int = 4, d_k: int = 3, low: int = -2, high: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Small-integer X, W_Q, W_K, W_V from a seed, so a student can still follow by hand.

    Example: x, w_q, w_k, w_v = random_example(0); x.shape -> (3, 4)
    """
    if not (1 <= n_tokens <= MAX_TOKENS and 1 <= d_model <= MAX_DIM and 1 <= d_k <= MAX_DIM):
        raise InputProblem("shape", f"sizes must stay within {MAX_TOKENS} tokens and {MAX_DIM} dimensions")
    rng = np.random.default_rng(seed)
    x = rng.integers(0, high + 1, size=(n_tokens, d_model)).astype(float)  # embeddings: 0..high
    ws = [rng.integers(low, high + 1, size=(d_model, d_k)).astype(float) for _ in range(3)]
    return x, ws[0], ws[1], ws[2]


# --- why divide by √d_k ------------------------------------------------------------------


@dataclass(frozen=True)
class ScalingExperiment:
    """Random unit-variance queries and keys of width d_k: what scaling does to the softmax."""

    d_k: int
    n_keys: int
    dots: np.ndarray  # (n_queries, n_keys) raw q·k
    scaled: np.ndarray  # (n_queries, n_keys) q·k / √d_k
    weights_raw: np.ndarray  # softmax rows of dots
    weights_scaled: np.ndarray  # softmax rows of scaled

    @property
    def entropy_raw(self) -> float:
        """Mean entropy (bits) of the unscaled rows; log2(n_keys) would be perfectly even."""
        return float(entropy_bits(self.weights_raw).mean())

    @property
    def entropy_scaled(self) -> float:
        return float(entropy_bits(self.weights_scaled).mean())

    @property
    def max_weight_raw(self) -> float:
        """Mean of each row's largest weight: near 1 means the softmax is saturated (one-hot)."""
        return float(self.weights_raw.max(axis=-1).mean())

    @property
    def max_weight_scaled(self) -> float:
        return float(self.weights_scaled.max(axis=-1).mean())


def scaling_experiment(d_k: int, seed: int, n_queries: int = 400, n_keys: int = 8) -> ScalingExperiment:
    """Draw standard-normal Q and K (the seeds' "mean 0, variance 1") and compare the softmax.

    Example: scaling_experiment(512, seed=0).max_weight_raw > 0.9  -> True (saturated)
    """
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or not 1 <= d_k <= MAX_D_K:
        raise InputProblem("shape", f"d_k must be an integer from 1 to {MAX_D_K}, got {d_k!r}")
    if not (1 <= n_queries <= 10_000 and 2 <= n_keys <= 256):
        raise InputProblem("shape", "n_queries must be 1..10000 and n_keys 2..256")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_queries, d_k))
    k = rng.standard_normal((n_queries, n_keys, d_k))  # fresh keys for every query
    dots = np.einsum("qd,qkd->qk", q, k)  # variance ≈ d_k
    scaled = dots / math.sqrt(d_k)  # variance ≈ 1
    return ScalingExperiment(int(d_k), n_keys, dots, scaled, softmax(dots), softmax(scaled))


@dataclass(frozen=True)
class SaturationCurve:
    """How the softmax of random scores changes with d_k, with and without ÷√d_k."""

    d_ks: np.ndarray
    dot_std_raw: np.ndarray
    dot_std_scaled: np.ndarray
    max_weight_raw: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_raw: np.ndarray
    entropy_scaled: np.ndarray


def saturation_curve(
    d_ks: Sequence[int], seed: int, n_queries: int = 200, n_keys: int = 8
) -> SaturationCurve:
    """Run ``scaling_experiment`` for each d_k and keep the summary numbers.

    Example: saturation_curve([2, 512], seed=0).max_weight_raw -> rising towards 1
    """
    runs = [scaling_experiment(int(d), seed, n_queries, n_keys) for d in d_ks]
    return SaturationCurve(
        d_ks=np.array([r.d_k for r in runs]),
        dot_std_raw=np.array([r.dots.std() for r in runs]),
        dot_std_scaled=np.array([r.scaled.std() for r in runs]),
        max_weight_raw=np.array([r.max_weight_raw for r in runs]),
        max_weight_scaled=np.array([r.max_weight_scaled for r in runs]),
        entropy_raw=np.array([r.entropy_raw for r in runs]),
        entropy_scaled=np.array([r.entropy_scaled for r in runs]),
    )


# --- multi-head: split, one softmax per head, concatenate, W_O --------------------------


def split_heads(m: np.ndarray, n_heads: int) -> np.ndarray:
    """(n, d) → (heads, n, d / heads): head h gets columns h·d/heads … (h+1)·d/heads − 1.

    Example: split_heads(np.arange(4.0)[None, :], 2) -> [[[0, 1]], [[2, 3]]]
    """
    m = np.asarray(m, dtype=float)
    n, d = m.shape
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1 or d % n_heads:
        raise InputProblem("shape", f"{d} dimensions cannot be split into {n_heads!r} equal heads")
    return m.reshape(n, n_heads, d // n_heads).transpose(1, 0, 2)  # (head, n, d_head)


def concat_heads(heads: np.ndarray) -> np.ndarray:
    """(heads, n, d_head) → (n, heads · d_head): the inverse of ``split_heads``.

    Example: concat_heads(split_heads(m, 2)) == m
    """
    h, n, d_head = heads.shape
    return heads.transpose(1, 0, 2).reshape(n, h * d_head)


@dataclass(frozen=True)
class MultiHeadSteps:
    """h heads, each with its own softmax, next to one big head over all d dimensions."""

    n_heads: int
    q: np.ndarray  # (heads, n, d_head)
    k: np.ndarray
    v: np.ndarray
    divisor: float  # √d_head when scaling
    masked: np.ndarray  # (heads, n, n) scaled scores with −∞ where masked
    weights: np.ndarray  # (heads, n, n) one softmax per head
    head_outputs: np.ndarray  # (heads, n, d_head)
    concat: np.ndarray  # (n, d)
    w_o: np.ndarray  # (d, d)
    output: np.ndarray  # (n, d) = concat W_O
    single: AttentionSteps  # one head over all d dimensions (same W_Q, W_K, W_V), for comparison

    @property
    def d_head(self) -> int:
        return int(self.q.shape[2])


def multi_head_steps(
    x: np.ndarray,
    n_heads: int,
    *,
    w_q: np.ndarray | None = None,
    w_k: np.ndarray | None = None,
    w_v: np.ndarray | None = None,
    w_o: np.ndarray | None = None,
    scale: bool = True,
    causal: bool = False,
) -> MultiHeadSteps:
    """Multi-head attention written out. Missing W matrices are the identity, as in the seeds,
    where each head simply takes its slice of the token vectors.

    Example: multi_head_steps(SEED_MULTIHEAD_X, 2).weights.shape -> (2, 3, 3)
    """
    x = _check_matrix("X", x)
    n, d = x.shape
    eye = np.eye(d)
    w_q, w_k, w_v, w_o = (eye if w is None else _check_matrix(name, w)
                          for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v), ("W_O", w_o)))
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v), ("W_O", w_o)):
        if w.shape != (d, d):
            raise InputProblem("shape", f"{name} must be {d}×{d} here, got {w.shape[0]}×{w.shape[1]}")
    q = split_heads(x @ w_q, n_heads)  # (head, n, d_head)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    divisor = math.sqrt(d // n_heads) if scale else 1.0
    scaled = q @ k.transpose(0, 2, 1) / divisor  # (head, n, n)
    masked = np.where(causal_mask(n)[None], NEG_INF, scaled) if causal else scaled
    weights = softmax(masked, axis=-1)  # each head normalises its own rows
    head_outputs = weights @ v  # (head, n, d_head)
    concat = concat_heads(head_outputs)  # (n, d)
    single = attention_steps(x, w_q, w_k, w_v, scale=scale, causal=causal)
    return MultiHeadSteps(n_heads, q, k, v, divisor, masked, weights, head_outputs, concat, w_o,
                          concat @ w_o, single)


def random_w_o(d: int, seed: int) -> np.ndarray:
    """A d×d output projection of small integers (−1, 0, 1) from a seed, easy to multiply by hand.

    Example: random_w_o(6, seed=0).shape -> (6, 6)
    """
    if not 1 <= d <= MAX_DIM:
        raise InputProblem("shape", f"d must be 1..{MAX_DIM}")
    return np.random.default_rng(seed).integers(-1, 2, size=(d, d)).astype(float)


def head_counts(d: int) -> list[int]:
    """The head counts that split d dimensions evenly.

    Example: head_counts(6) -> [1, 2, 3, 6]
    """
    return [h for h in range(1, d + 1) if d % h == 0]
