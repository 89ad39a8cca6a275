"""Attention written out: the seeds' hand-computed numbers, torch as the reference, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.lessons import attention_math as am

torch.set_num_threads(1)

SEED_Q = np.array([[1, 0, 2], [2, 0, 2], [1.5, -0.5, 1.5]])
SEED_K = np.array([[0, 1, 1], [1, 2, 1], [1, 0, 1]])
SEED_V = np.array([[1, 2, 3], [2, 8, 0], [2, 6, 3]])
SEED_SCORES = np.array([[2, 3, 3], [2, 4, 4], [1, 2, 3]])


def seed_steps(**kw) -> am.AttentionSteps:
    kw.setdefault("scale", False)  # the seeds' hand calculation does not scale
    return am.attention_steps(am.SEED_X, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V, **kw)


# --- the seeds' worked example -----------------------------------------------------------------


def test_seed_example_reproduces_q0_k_v_and_the_score_matrix() -> None:
    steps = seed_steps()
    np.testing.assert_allclose(steps.q[0], [1, 0, 2])  # "我" × W_Q → Q₀ = [1, 0, 2]
    np.testing.assert_allclose(steps.k, SEED_K)  # K₀ = [0, 1, 1], and the K₁, K₂ of Q₀·K₁, Q₀·K₂
    np.testing.assert_allclose(steps.v, SEED_V)  # V₀ = [1, 2, 3], V₁ = [2, 8, 0], V₂ = [2, 6, 3]
    np.testing.assert_allclose(steps.q, SEED_Q)
    np.testing.assert_allclose(steps.scores, SEED_SCORES)  # the seeds' full score matrix


def test_seed_row0_softmax_and_output() -> None:
    steps = seed_steps()
    np.testing.assert_allclose(steps.weights[0], [0.155, 0.422, 0.422], atol=5e-4)
    # The seeds multiply the rounded weights (0.155, 0.422, 0.422) and print [1.843, 6.218, 1.731];
    # with the exact weights the output is [1.845, 6.223, 1.733].
    np.testing.assert_allclose(steps.output[0], [1.843, 6.218, 1.731], atol=6e-3)
    rounded = np.array([0.155, 0.422, 0.422]) @ SEED_V
    np.testing.assert_allclose(rounded, [1.843, 6.218, 1.731], atol=1e-9)


def test_seed_hand_calculation_of_row0() -> None:
    walk = am.row_walkthrough(seed_steps(), 0)
    np.testing.assert_allclose(walk.dots, [2, 3, 3])
    np.testing.assert_allclose(walk.products[1], [1 * 1, 0 * 2, 2 * 1])  # Q₀·K₁ = 1×1 + 0×2 + 2×1
    np.testing.assert_allclose(walk.softmax.exps, [7.389, 20.086, 20.086], atol=1e-3)  # e², e³, e³
    assert walk.softmax.total == pytest.approx(47.561, abs=1e-3)
    assert walk.softmax.shift == 0.0
    np.testing.assert_allclose(walk.weighted_values[1], 0.4223 * np.array([2, 8, 0]), atol=1e-3)


def test_seed_causal_rows() -> None:
    weights = seed_steps(causal=True).weights
    np.testing.assert_allclose(weights[0], [1, 0, 0])
    np.testing.assert_allclose(weights[1], [0.12, 0.88, 0], atol=5e-3)
    np.testing.assert_allclose(weights[2], [0.09, 0.24, 0.67], atol=6e-3)
    masked = seed_steps(causal=True).masked
    assert np.isneginf(masked[0, 1]) and np.isneginf(masked[0, 2]) and np.isneginf(masked[1, 2])
    assert masked[1, 1] == 4


def test_seed_x_as_written_cannot_give_the_seeds_keys() -> None:
    # 你 = 我 + ½·爱 in the seeds' X, so every projection of 你 is that same mix: no W can
    # give K₂ = [1, 0, 1] together with K₀ = [0, 1, 1] and K₁ = [1, 2, 1].
    x = am.SEED_X_AS_WRITTEN
    np.testing.assert_allclose(x[2], x[0] + 0.5 * x[1])
    assert np.linalg.matrix_rank(x) == 2
    assert np.linalg.matrix_rank(am.SEED_X) == 3
    steps = am.attention_steps(x, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V, scale=False)
    np.testing.assert_allclose(steps.scores[:, 2], steps.scores[:, 0] + 0.5 * steps.scores[:, 1])
    # Only one number of X changed:
    assert int((am.SEED_X != am.SEED_X_AS_WRITTEN).sum()) == 1


def test_scaling_divides_by_sqrt_dk() -> None:
    steps = seed_steps(scale=True)
    assert steps.divisor == pytest.approx(math.sqrt(3))
    np.testing.assert_allclose(steps.scaled, SEED_SCORES / math.sqrt(3))
    np.testing.assert_allclose(steps.weights[0], am.softmax(np.array([2, 3, 3]) / math.sqrt(3)))


@pytest.mark.parametrize("name,scores,expected", am.SEED_SOFTMAX_CASES)
def test_seed_softmax_cases(name: str, scores: tuple, expected: tuple) -> None:
    got = am.softmax(np.array(scores))
    decimals = max(len(f"{v}".split(".")[-1]) for v in expected)
    np.testing.assert_allclose(got, expected, atol=0.51 * 10 ** -decimals + 1e-12), name


def test_softmax_steps_of_223() -> None:
    steps = am.softmax_steps([2, 3, 3])
    np.testing.assert_allclose(steps.exps, [math.e ** 2, math.e ** 3, math.e ** 3])
    np.testing.assert_allclose(steps.weights.round(3), [0.155, 0.422, 0.422])


def test_softmax_steps_shift_only_when_needed() -> None:
    steps = am.softmax_steps([1000.0, 999.0])
    assert steps.shift == 1000.0 and np.isfinite(steps.exps).all()
    np.testing.assert_allclose(steps.weights, am.softmax([1000.0, 999.0]))


# --- plain normalisation -------------------------------------------------------------------------


def test_plain_normalisation_of_223() -> None:
    result = am.plain_normalise([2, 3, 3])
    assert result.problem is None
    np.testing.assert_allclose(result.weights, [0.25, 0.375, 0.375])


def test_plain_normalisation_divides_by_zero_on_the_seeds_case() -> None:
    result = am.plain_normalise([1, -2, 1])
    assert result.problem == "division_by_zero" and result.weights is None and result.total == 0.0
    np.testing.assert_allclose(am.softmax([1, -2, 1]), [0.488, 0.024, 0.488], atol=5e-4)


def test_plain_normalisation_detects_float_near_zero_and_negative_and_masked() -> None:
    assert am.plain_normalise([0.1, 0.2, -0.3]).problem == "division_by_zero"
    negative = am.plain_normalise([3, -1])
    assert negative.problem == "negative"
    np.testing.assert_allclose(negative.weights, [1.5, -0.5])
    assert am.plain_normalise([2, am.NEG_INF]).problem == "masked"


def test_seed_gap_examples() -> None:
    np.testing.assert_allclose(am.plain_normalise([1, 2]).weights, [0.33, 0.67], atol=5e-3)
    np.testing.assert_allclose(am.plain_normalise([1, 5]).weights, [0.17, 0.83], atol=5e-3)


# --- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("2, 3, 3", [2, 3, 3]),
    ("[2 3 3]", [2, 3, 3]),
    ("2，−2；1", [2, -2, 1]),
    ("2, -inf, −∞", [2, -math.inf, -math.inf]),
    ("1e2 -0.5", [100, -0.5]),
])
def test_parse_vector(text: str, expected: list) -> None:
    np.testing.assert_array_equal(am.parse_vector(text), expected)


@pytest.mark.parametrize("text,code", [
    ("", "empty"), ("   ", "empty"), ("1, two", "not_a_number"), ("nan", "not_finite"),
    ("inf", "not_finite"), ("1e300", "too_large"), (", ".join(["1"] * 50), "too_many"),
    ("\x00\x01", "not_a_number"), ("<script>", "not_a_number"),
])
def test_parse_vector_refuses_bad_text(text: str, code: str) -> None:
    with pytest.raises(am.InputProblem) as err:
        am.parse_vector(text)
    assert err.value.code == code


def test_parse_matrix_round_trip_and_errors() -> None:
    np.testing.assert_array_equal(am.parse_matrix(am.format_matrix(am.SEED_W_K)), am.SEED_W_K)
    for text, code in (("1 2\n3", "ragged"), ("", "empty"), ("1 -inf", "not_finite"),
                       ("\n".join(["1"] * 40), "too_many"), (" ".join(["1"] * 40), "too_many")):
        with pytest.raises(am.InputProblem) as err:
            am.parse_matrix(text)
        assert err.value.code == code, text


def test_softmax_refuses_all_masked_and_nan() -> None:
    for bad in ([am.NEG_INF, am.NEG_INF], [float("nan"), 1.0], [math.inf, 1.0], []):
        with pytest.raises(am.InputProblem):
            am.softmax(np.array(bad))


def test_attention_steps_shape_errors_are_clear() -> None:
    with pytest.raises(am.InputProblem, match="W_Q has 3 rows but X has 4 columns"):
        am.attention_steps(am.SEED_X, np.ones((3, 3)), am.SEED_W_K, am.SEED_W_V)
    with pytest.raises(am.InputProblem, match="same width"):
        am.attention_steps(am.SEED_X, np.ones((4, 2)), am.SEED_W_K, am.SEED_W_V)


# --- the reference: torch ----------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_one_head_matches_torch_sdpa(causal: bool) -> None:
    x, w_q, w_k, w_v = am.random_example(seed=3, n_tokens=5, d_model=4, d_k=3)
    steps = am.attention_steps(x, w_q, w_k, w_v, scale=True, causal=causal)
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    ref = torch.nn.functional.scaled_dot_product_attention(
        t(x @ w_q)[None], t(x @ w_k)[None], t(x @ w_v)[None], is_causal=causal)[0]
    np.testing.assert_allclose(steps.output, ref.numpy(), atol=1e-10)


@pytest.mark.parametrize("n_heads", [1, 2, 3, 6])
def test_multi_head_matches_torch_multihead_attention(n_heads: int) -> None:
    rng = np.random.default_rng(7)
    d = 6
    x = am.SEED_MULTIHEAD_X
    w_q, w_k, w_v = (rng.normal(size=(d, d)) for _ in range(3))
    w_o = am.random_w_o(d, seed=1)
    steps = am.multi_head_steps(x, n_heads, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, causal=True)
    mha = torch.nn.MultiheadAttention(d, n_heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        # torch computes x @ W.T, so its weights are our W transposed.
        mha.in_proj_weight.copy_(torch.tensor(np.concatenate([w_q.T, w_k.T, w_v.T])))
        mha.out_proj.weight.copy_(torch.tensor(w_o.T))
    xt = torch.tensor(x)[None]
    mask = torch.tensor(am.causal_mask(len(x)))
    out, weights = mha(xt, xt, xt, attn_mask=mask, average_attn_weights=False)
    np.testing.assert_allclose(steps.output, out[0].detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(steps.weights, weights[0].detach().numpy(), atol=1e-10)


def test_seed_multihead_heads_see_the_split_vectors() -> None:
    steps = am.multi_head_steps(am.SEED_MULTIHEAD_X, 2, scale=False)
    np.testing.assert_allclose(steps.q[0], [[1, 0, 1], [0, 2, 0], [1, 1, 1]])  # "我"₁, "爱"₁, "你"₁
    np.testing.assert_allclose(steps.q[1], [[0, 0.5, 0.5], [2, 1, 0], [1, 0, 1]])  # "我"₂, "爱"₂, "你"₂
    # Head 1, "我": scores [1·1+0+1·1, 0, 1+0+1] = [2, 0, 2]; head 2, "我": [0.5, 0.5, 0.5].
    np.testing.assert_allclose(steps.weights[0, 0], am.softmax([2, 0, 2]))
    np.testing.assert_allclose(steps.weights[1, 0], [1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(steps.concat, am.concat_heads(steps.head_outputs))
    np.testing.assert_allclose(steps.output, steps.concat)  # W_O defaults to the identity
    one = am.multi_head_steps(am.SEED_MULTIHEAD_X, 1, scale=False)
    np.testing.assert_allclose(one.weights[0], one.single.weights)


def test_split_concat_round_trip_and_errors() -> None:
    m = np.arange(18.0).reshape(3, 6)
    for h in am.head_counts(6):
        np.testing.assert_array_equal(am.concat_heads(am.split_heads(m, h)), m)
    assert am.head_counts(6) == [1, 2, 3, 6]
    with pytest.raises(am.InputProblem):
        am.split_heads(m, 4)


# --- √d_k ------------------------------------------------------------------------------------


def test_scaling_experiment_variance_and_saturation() -> None:
    small, big = am.scaling_experiment(2, seed=0), am.scaling_experiment(512, seed=0)
    assert big.dots.var() == pytest.approx(512, rel=0.15)  # variance ≈ d_k
    assert big.scaled.var() == pytest.approx(1, rel=0.15)  # ÷√d_k brings it back to ≈ 1
    assert big.max_weight_raw > 0.9 > big.max_weight_scaled  # saturated without scaling
    assert big.entropy_raw < 0.5 < 2.0 < big.entropy_scaled <= 3.0  # 8 keys: at most 3 bits
    assert small.max_weight_raw < big.max_weight_raw
    curve = am.saturation_curve([2, 8, 32, 128, 512], seed=0)
    assert np.all(np.diff(curve.max_weight_raw) > 0)
    assert np.ptp(curve.max_weight_scaled) < 0.1


def test_scaling_experiment_refuses_absurd_sizes() -> None:
    for bad in (0, -3, 10**9, 2.5, True):
        with pytest.raises(am.InputProblem):
            am.scaling_experiment(bad, seed=0)


def test_entropy_bits() -> None:
    assert am.entropy_bits(np.full(8, 1 / 8)) == pytest.approx(3.0)
    assert am.entropy_bits(np.array([1.0, 0.0])) == 0.0


def test_random_example_is_repeatable_small_integers() -> None:
    a, b = am.random_example(5), am.random_example(5)
    for m1, m2 in zip(a, b):
        np.testing.assert_array_equal(m1, m2)
        assert np.all(m1 == np.round(m1)) and np.abs(m1).max() <= 2
    assert not np.array_equal(am.random_example(6)[0], a[0])


# --- properties --------------------------------------------------------------------------------


finite = st.floats(-50, 50, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=12), st.lists(st.booleans(), min_size=12, max_size=12))
def test_softmax_rows_are_distributions(values: list, mask_flags: list) -> None:
    scores = np.array(values)
    keep = np.array(mask_flags[: len(values)])
    keep[int(np.argmax(scores))] = True  # at least one visible key
    scores = np.where(keep, scores, am.NEG_INF)
    w = am.softmax(scores)
    assert w.sum() == pytest.approx(1.0)
    assert np.all(w >= 0) and np.all(w[~keep] == 0)
    np.testing.assert_allclose(w, am.softmax(scores + 7.0), atol=1e-12)  # shift-invariant


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8))
def test_causal_weights_never_look_ahead(seed: int, n: int) -> None:
    x, w_q, w_k, w_v = am.random_example(seed, n_tokens=n)
    steps = am.attention_steps(x, w_q, w_k, w_v, causal=True)
    assert np.all(steps.weights[am.causal_mask(n)] == 0)
    np.testing.assert_allclose(steps.weights.sum(axis=1), 1.0)
