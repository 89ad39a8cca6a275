"""How a model knows word order: the sinusoidal table, its rotation property, and RoPE.

Sinusoidal encoding (Vaswani et al. 2017). For pair k = 0 … d/2 − 1 with frequency
ω_k = 1 / base^(2k/d):

    PE(pos, 2k) = sin(pos · ω_k)      PE(pos, 2k+1) = cos(pos · ω_k)

The curriculum's worked row (d = 8, pos = 3, base 10000):
    [0.141, −0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000]

Because sin(a + b) and cos(a + b) expand into sin a, cos a, shifting every position by k is
one fixed linear map: PE(pos + k) = M_k · PE(pos), with M_k block-diagonal, one 2×2
rotation by k·ω_k per pair. RoPE (RoFormer, Llama) uses the same rotations the other way
round: it rotates q and k themselves by their positions, so q·k depends only on the offset.

Plain numpy in float64; ``core.engine.model`` has the torch versions the models run, and the unit
tests check that both agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence

import numpy as np

MAX_D_MODEL = 4096  # widest table we draw; LLaMA-7B's width, far above any slider
MAX_POSITIONS = 100_000  # rows of a table: plenty for a chart, small enough for memory
MAX_POSITION = 10_000_000  # a single position may be large (long-context models)
DEFAULT_BASE = 10000.0  # the 2017 paper's base; Llama 3 raised RoPE's to 500000


def _whole(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{what} must be a whole number, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{what} must be between {low} and {high}, got {value}")
    return int(value)


def _even_width(d_model: object, what: str = "d_model") -> int:
    width = _whole(d_model, what, 2, MAX_D_MODEL)
    if width % 2:
        raise ValueError(f"{what} must be even: dimensions come in sin/cos pairs, got {width}")
    return width


def _base(base: object) -> float:
    try:
        value = float(base)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"base must be a number, got {base!r}") from None
    if not math.isfinite(value) or value <= 1.0 or value > 1e12:
        raise ValueError(f"base must be a number above 1 (and at most 1e12), got {base!r}")
    return value


# --- sinusoidal table --------------------------------------------------------------------


def pair_frequencies(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """ω_k = base^(−2k/d): radians per position of pair k (pair 0 is the fastest).

    Example: pair_frequencies(8) -> array([1.   , 0.1  , 0.01 , 0.001])
    """
    width = _even_width(d_model)
    two_k = np.arange(0, width, 2, dtype=np.float64)
    return _base(base) ** (-two_k / width)


def pair_divisors(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """base^(2k/d): what the position is divided by inside sin/cos (1, 10, 100, 1000 for d = 8).

    Example: pair_divisors(8) -> array([   1.,   10.,  100., 1000.])
    """
    return 1.0 / pair_frequencies(d_model, base)


def pair_periods(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Wavelength in positions, 2π · base^(2k/d): after this many positions pair k repeats.

    Example: round(pair_periods(8)[0], 3) -> 6.283
    """
    return 2.0 * math.pi * pair_divisors(d_model, base)


def sinusoidal_table(n_positions: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The table [n_positions, d_model]: row = position, even columns sin, odd columns cos.

    Example: sinusoidal_table(4, 8)[3].round(3) -> array([ 0.141, -0.99 ,  0.296,  0.955,  0.03 ,  1.   ,  0.003,  1.   ])
    """
    count = _whole(n_positions, "number of positions", 1, MAX_POSITIONS)
    return sinusoidal_rows(np.arange(count), d_model, base)


def sinusoidal_rows(positions: Sequence[int] | np.ndarray, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """PE rows for arbitrary positions [len(positions), d_model].

    Example: sinusoidal_rows([0], 4) -> array([[0., 1., 0., 1.]])
    """
    pos = np.asarray(positions)
    if pos.ndim != 1 or pos.size == 0 or not np.issubdtype(pos.dtype, np.integer):
        raise ValueError("positions must be a non-empty list of whole numbers")
    if pos.min() < 0 or pos.max() > MAX_POSITION:
        raise ValueError(f"positions must be between 0 and {MAX_POSITION}")
    omega = pair_frequencies(d_model, base)
    angle = pos.astype(np.float64)[:, None] * omega[None, :]  # (pos, d/2)
    table = np.empty((pos.size, 2 * omega.size))
    table[:, 0::2] = np.sin(angle)
    table[:, 1::2] = np.cos(angle)
    return table


def sinusoidal_vector(position: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """One position's encoding.

    Example: sinusoidal_vector(0, 4) -> array([0., 1., 0., 1.])
    """
    pos = _whole(position, "position", 0, MAX_POSITION)
    return sinusoidal_rows([pos], d_model, base)[0]


# --- the relative-position property ------------------------------------------------------


def rotation_2d(angle: float) -> np.ndarray:
    """The 2×2 matrix that turns a (sin, cos) pair forward by ``angle``.

    [sin(a+b), cos(a+b)] = [[cos b, sin b], [−sin b, cos b]] · [sin a, cos a]

    Example: rotation_2d(0.0) -> array([[ 1.,  0.], [-0.,  1.]])
    """
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, s], [-s, c]])


def relative_shift_matrix(offset: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """M_k [d_model, d_model]: block-diagonal 2×2 rotations by k·ω_j, so PE(pos + k) = M_k · PE(pos).

    M_k does not depend on pos — that is the point: a fixed linear map for each offset,
    which attention can learn to use. A negative offset shifts backwards.

    Example: relative_shift_matrix(0, 4) -> the 4×4 identity
    """
    k = _whole(offset, "offset k", -MAX_POSITION, MAX_POSITION)
    omega = pair_frequencies(d_model, base)
    matrix = np.zeros((2 * omega.size, 2 * omega.size))
    for j, w in enumerate(omega):
        matrix[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = rotation_2d(k * w)
    return matrix


@dataclass(frozen=True)
class RelativeCheck:
    """The numeric check PE(pos + k) = M_k · PE(pos)."""

    position: int
    offset: int
    pe_position: np.ndarray  # PE(pos)
    pe_target: np.ndarray  # PE(pos + k), computed directly
    rotated: np.ndarray  # M_k · PE(pos)
    matrix: np.ndarray  # M_k

    @property
    def max_abs_error(self) -> float:
        return float(np.max(np.abs(self.rotated - self.pe_target)))


def check_relative_position(position: int, offset: int, d_model: int, base: float = DEFAULT_BASE) -> RelativeCheck:
    """Compute PE(pos + k) both ways; they agree to rounding error.

    Example: check_relative_position(3, 2, 8).max_abs_error < 1e-12 -> True
    """
    pos = _whole(position, "position", 0, MAX_POSITION)
    k = _whole(offset, "offset k", -MAX_POSITION, MAX_POSITION)
    if not 0 <= pos + k <= MAX_POSITION:
        raise ValueError(f"pos + k = {pos + k} must be between 0 and {MAX_POSITION}")
    matrix = relative_shift_matrix(k, d_model, base)
    start = sinusoidal_vector(pos, d_model, base)
    return RelativeCheck(
        position=pos,
        offset=k,
        pe_position=start,
        pe_target=sinusoidal_vector(pos + k, d_model, base),
        rotated=matrix @ start,
        matrix=matrix,
    )


# --- RoPE --------------------------------------------------------------------------------


def rope_frequencies(d_head: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """θ_i = base^(−2i/d_head): radians pair i of q and k turns per position.

    Example: rope_frequencies(4) -> array([1.  , 0.01])
    """
    return pair_frequencies(_even_width(d_head, "d_head"), base)


def _frequencies(inv_freq: object) -> np.ndarray:
    theta = np.asarray(inv_freq, dtype=np.float64)
    if theta.ndim != 1 or theta.size == 0 or not np.isfinite(theta).all():
        raise ValueError("rotation frequencies must be a non-empty row of finite numbers")
    return theta


def rope_rotate(x: object, position: int, inv_freq: object) -> np.ndarray:
    """Rotate each pair (x[2i], x[2i+1]) by position · θ_i (counter-clockwise), as RoPE does to q and k.

    Example: rope_rotate([1.0, 0.0], 1, [math.pi / 2]).round(6) -> array([0., 1.])
    """
    theta = _frequencies(inv_freq)
    vector = np.asarray(x, dtype=np.float64)
    if vector.ndim != 1 or vector.size != 2 * theta.size:
        raise ValueError(f"the vector must have {2 * theta.size} numbers (two per frequency), got shape {vector.shape}")
    if not np.isfinite(vector).all():
        raise ValueError("the vector contains NaN or infinity")
    pos = _whole(position, "position", 0, MAX_POSITION)
    angle = pos * theta
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = vector[0::2], vector[1::2]
    out = np.empty_like(vector)
    out[0::2] = even * cos - odd * sin
    out[1::2] = even * sin + odd * cos
    return out


def rope_scores_by_offset(
    q: object, k: object, inv_freq: object, query_positions: Sequence[int], max_offset: int
) -> np.ndarray:
    """rot(q, m) · rot(k, m − Δ) for each query position m (rows) and offset Δ = 0 … max_offset (columns).

    Offsets that would put the key before position 0 are NaN. Every row is the same curve
    shifted nowhere: the score depends on Δ only, never on m.

    Example: rope_scores_by_offset([1, 0], [1, 0], [0.5], [3, 7], 2).round(3) -> [[1, 0.878, 0.54], [1, 0.878, 0.54]]
    """
    theta = _frequencies(inv_freq)
    query, key = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    if query.shape != key.shape:
        raise ValueError(f"q and k must have the same shape, got {query.shape} and {key.shape}")
    span = _whole(max_offset, "largest offset", 0, 10_000)
    if len(query_positions) == 0:
        raise ValueError("give at least one query position")
    scores = np.full((len(query_positions), span + 1), np.nan)
    for row, m in enumerate(query_positions):
        rotated_q = rope_rotate(query, m, theta)
        for delta in range(span + 1):
            if m - delta >= 0:
                scores[row, delta] = float(rotated_q @ rope_rotate(key, m - delta, theta))
    return scores


@dataclass(frozen=True)
class PairRotation:
    """One frequency's 2-D picture: q at position m and k at position n, before and after."""

    theta: float  # radians per position for this pair
    q: np.ndarray  # (2,) before rotation
    k: np.ndarray  # (2,)
    q_rotated: np.ndarray  # turned by m·θ
    k_rotated: np.ndarray  # turned by n·θ
    angle_before: float  # angle from k to q before rotation, radians, in (−π, π]
    angle_after: float  # … after: angle_before + (m − n)·θ, wrapped

    @property
    def dot_before(self) -> float:
        return float(self.q @ self.k)

    @property
    def dot_after(self) -> float:
        return float(self.q_rotated @ self.k_rotated)


def _angle(v: np.ndarray) -> float:
    return math.atan2(float(v[1]), float(v[0]))


def _wrap(angle: float) -> float:
    """An angle in (−π, π]."""
    wrapped = math.remainder(angle, 2 * math.pi)
    return math.pi if wrapped == -math.pi else wrapped


def rope_pair_picture(q_pair: object, k_pair: object, query_position: int, key_position: int, theta: float) -> PairRotation:
    """Rotate a 2-D slice of q by m·θ and of k by n·θ; the angle between them changes by (m − n)·θ.

    Example: rope_pair_picture([1, 0], [1, 0], 2, 1, 0.5).angle_after -> 0.5
    """
    q2, k2 = np.asarray(q_pair, dtype=np.float64), np.asarray(k_pair, dtype=np.float64)
    if q2.shape != (2,) or k2.shape != (2,):
        raise ValueError("a RoPE pair has exactly two numbers")
    if not (np.isfinite(q2).all() and np.isfinite(k2).all()) or not math.isfinite(theta):
        raise ValueError("the pair or its frequency contains NaN or infinity")
    q_rot = rope_rotate(q2, query_position, [theta])
    k_rot = rope_rotate(k2, key_position, [theta])
    return PairRotation(
        theta=float(theta),
        q=q2,
        k=k2,
        q_rotated=q_rot,
        k_rotated=k_rot,
        angle_before=_wrap(_angle(q2) - _angle(k2)),
        angle_after=_wrap(_angle(q_rot) - _angle(k_rot)),
    )


def demo_query_key(d_head: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A reproducible random q and k of width d_head (standard normal), for models without RoPE.

    Example: demo_query_key(4, seed=1)[0].shape -> (4,)
    """
    width = _even_width(d_head, "d_head")
    rng = np.random.default_rng(_whole(seed, "seed", 0, 2**63 - 1))
    return rng.standard_normal(width), rng.standard_normal(width)
