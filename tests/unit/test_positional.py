"""core.lessons.positional against the curriculum's worked rows, the model's torch code, and the algebra."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.lessons import positional as p

# The seeds' table for d = 8, base 10000 (rounded to 3 decimals).
SEED_ROW_3 = [0.141, -0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000]


def test_seed_row_pos_3_by_hand() -> None:
    row = p.sinusoidal_vector(3, 8)
    assert list(np.round(row, 3)) == pytest.approx(SEED_ROW_3)
    # Written out: sin(3/1), cos(3/1), sin(3/10), cos(3/10), sin(3/100), ...
    by_hand = [math.sin(3), math.cos(3), math.sin(0.3), math.cos(0.3), math.sin(0.03), math.cos(0.03),
               math.sin(0.003), math.cos(0.003)]
    assert row == pytest.approx(by_hand)


def test_seed_rows_0_to_2() -> None:
    table = np.round(p.sinusoidal_table(4, 8), 3)
    assert list(table[0]) == [0, 1, 0, 1, 0, 1, 0, 1]
    # The seeds print 0.842 for sin(1) = 0.8415 (a rounding slip); every other entry agrees.
    assert list(table[1]) == pytest.approx([0.841, 0.540, 0.100, 0.995, 0.010, 1.000, 0.001, 1.000])
    assert list(table[2]) == pytest.approx([0.909, -0.416, 0.199, 0.980, 0.020, 1.000, 0.002, 1.000])


def test_divisors_and_periods() -> None:
    assert p.pair_divisors(8) == pytest.approx([1, 10, 100, 1000])  # the seeds' "波长" column
    assert p.pair_frequencies(8) == pytest.approx([1, 0.1, 0.01, 0.001])
    assert p.pair_periods(8) == pytest.approx(2 * math.pi * np.array([1, 10, 100, 1000]))
    assert p.pair_divisors(8, base=100) == pytest.approx([1, 10 ** 0.5, 10, 10 ** 1.5])


@pytest.mark.parametrize(("n", "d", "base"), [(4, 8, 10000.0), (33, 64, 10000.0), (17, 6, 500.0), (128, 512, 1e6)])
def test_matches_the_models_torch_table(n: int, d: int, base: float) -> None:
    from core.engine.model import sinusoidal_table as torch_table

    ours = p.sinusoidal_table(n, d, base)
    theirs = torch_table(n, d, base).double().numpy()
    assert ours.shape == (n, d)
    assert np.allclose(ours, theirs, atol=1e-6)  # the model keeps float32


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="even"):
        p.sinusoidal_table(4, 7)
    with pytest.raises(ValueError, match="between"):
        p.sinusoidal_table(0, 8)
    with pytest.raises(ValueError, match="between"):
        p.sinusoidal_table(4, p.MAX_D_MODEL + 2)
    with pytest.raises(ValueError, match="base"):
        p.sinusoidal_table(4, 8, base=1.0)
    with pytest.raises(ValueError, match="base"):
        p.sinusoidal_table(4, 8, base=float("nan"))
    with pytest.raises(ValueError, match="base"):
        p.sinusoidal_table(4, 8, base="ten")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole number"):
        p.sinusoidal_vector(2.5, 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole number"):
        p.sinusoidal_vector(True, 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="between"):
        p.sinusoidal_vector(-1, 8)


# --- relative positions --------------------------------------------------------------------


def test_shift_matrix_structure() -> None:
    m = p.relative_shift_matrix(2, 8)
    assert m.shape == (8, 8)
    # Block-diagonal: nothing outside the 2×2 blocks.
    mask = np.kron(np.eye(4), np.ones((2, 2))).astype(bool)
    assert np.all(m[~mask] == 0)
    # First block rotates by k·ω_0 = 2 radians.
    assert m[:2, :2] == pytest.approx(np.array([[math.cos(2), math.sin(2)], [-math.sin(2), math.cos(2)]]))
    # Orthogonal (a rotation), M_0 = I, and M_{-k} undoes M_k.
    assert m @ m.T == pytest.approx(np.eye(8))
    assert p.relative_shift_matrix(0, 8) == pytest.approx(np.eye(8))
    assert p.relative_shift_matrix(-2, 8) @ m == pytest.approx(np.eye(8))


@settings(max_examples=50, deadline=None)
@given(
    pos=st.integers(0, 5000),
    k=st.integers(-200, 200),
    half=st.integers(1, 64),
    base=st.sampled_from([100.0, 10000.0, 500000.0]),
)
def test_shift_by_k_is_one_fixed_matrix(pos: int, k: int, half: int, base: float) -> None:
    if pos + k < 0:
        k = -pos
    check = p.check_relative_position(pos, k, 2 * half, base)
    assert check.max_abs_error < 1e-9
    assert np.allclose(check.pe_target, p.sinusoidal_vector(pos + k, 2 * half, base))


def test_seed_shift_example() -> None:
    # pos 5 and pos 8 differ by Δ = 3: one matrix maps one to the other.
    check = p.check_relative_position(5, 3, 8)
    assert check.rotated == pytest.approx(p.sinusoidal_vector(8, 8))
    with pytest.raises(ValueError, match="pos \\+ k"):
        p.check_relative_position(2, -5, 8)


# --- RoPE --------------------------------------------------------------------------------


def test_rope_frequencies_match_the_model() -> None:
    from core.engine.model import rope_inverse_frequencies

    assert p.rope_frequencies(4) == pytest.approx([1.0, 0.01])
    for d_head, base in [(32, 10000.0), (16, 500000.0)]:
        assert p.rope_frequencies(d_head, base) == pytest.approx(
            rope_inverse_frequencies(d_head, base).double().numpy(), rel=1e-6)


def test_rope_rotate_matches_the_models_apply_rope() -> None:
    import torch

    from core.engine.model import apply_rope, rope_inverse_frequencies

    rng = np.random.default_rng(0)
    d_head = 16
    x = rng.normal(size=(5, d_head))
    inv = rope_inverse_frequencies(d_head)
    theirs = apply_rope(torch.tensor(x, dtype=torch.float32)[None, None], torch.arange(5), inv)[0, 0].double().numpy()
    ours = np.stack([p.rope_rotate(x[pos], pos, inv.double().numpy()) for pos in range(5)])
    assert np.allclose(ours, theirs, atol=1e-5)


def test_rope_quarter_turn_and_length_kept() -> None:
    assert p.rope_rotate([1.0, 0.0], 1, [math.pi / 2]) == pytest.approx([0.0, 1.0])
    x = np.array([3.0, 4.0, -1.0, 2.0])
    rotated = p.rope_rotate(x, 17, p.rope_frequencies(4))
    assert np.linalg.norm(rotated) == pytest.approx(np.linalg.norm(x))
    with pytest.raises(ValueError, match="4 numbers"):
        p.rope_rotate([1.0, 2.0], 1, [1.0, 0.1])


def test_rope_score_depends_only_on_offset() -> None:
    q, k = p.demo_query_key(16, seed=3)
    theta = p.rope_frequencies(16)
    scores = p.rope_scores_by_offset(q, k, theta, [10, 25, 40], max_offset=10)
    assert np.allclose(scores[0], scores[1]) and np.allclose(scores[1], scores[2])
    # Offset 0: both turned by the same angle, so the score is the plain q·k.
    assert scores[0, 0] == pytest.approx(float(q @ k))
    early = p.rope_scores_by_offset(q, k, theta, [2], max_offset=4)
    assert np.isnan(early[0, 3]) and np.isnan(early[0, 4])  # key would sit before position 0
    assert early[0, :3] == pytest.approx(scores[0, :3])


def test_rope_pair_picture_angle_grows_with_offset() -> None:
    picture = p.rope_pair_picture([1.0, 0.0], [0.0, 1.0], 5, 2, 0.2)
    assert picture.angle_before == pytest.approx(-math.pi / 2)
    assert picture.angle_after == pytest.approx(-math.pi / 2 + 3 * 0.2)
    assert picture.dot_after == pytest.approx(math.cos(picture.angle_after))
    with pytest.raises(ValueError, match="two numbers"):
        p.rope_pair_picture([1.0], [0.0, 1.0], 1, 0, 0.1)


def test_demo_query_key_is_reproducible() -> None:
    q1, k1 = p.demo_query_key(8, seed=5)
    q2, k2 = p.demo_query_key(8, seed=5)
    assert np.array_equal(q1, q2) and np.array_equal(k1, k2)
    assert not np.array_equal(q1, p.demo_query_key(8, seed=6)[0])
