"""Sampling: hand-computed examples, the seed's numbers, transformers' warpers as reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.engine.sampling import (
    entropy_bits,
    next_token_distribution,
    sample,
    sampling_steps,
    softmax,
    top_k_cut,
    top_p_cut,
)


def test_softmax_matches_the_seed_causal_mask_example() -> None:
    # Softmax([1, 2, 3]) -> [0.09, 0.24, 0.67]; Softmax([2, 4, -inf]) -> [0.12, 0.88, 0.0].
    np.testing.assert_allclose(softmax(np.array([1.0, 2.0, 3.0])), [0.09, 0.24, 0.67], atol=5e-3)
    np.testing.assert_allclose(softmax(np.array([2.0, 4.0, -np.inf])), [0.12, 0.88, 0.0], atol=5e-3)
    np.testing.assert_allclose(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])  # no overflow


def test_temperature_by_hand() -> None:
    logits = [2.0, 1.0, 0.0]
    # T = 2: softmax([1, 0.5, 0]) = e^1, e^0.5, e^0 over their sum.
    weights = np.array([math.e, math.exp(0.5), 1.0])
    np.testing.assert_allclose(next_token_distribution(logits, temperature=2.0), weights / weights.sum(), rtol=1e-12)
    # T = 0.5: softmax([4, 2, 0]).
    weights = np.array([math.exp(4), math.exp(2), 1.0])
    np.testing.assert_allclose(next_token_distribution(logits, temperature=0.5), weights / weights.sum(), rtol=1e-12)


def test_temperature_zero_is_greedy_and_ties_go_to_the_lower_id() -> None:
    np.testing.assert_array_equal(next_token_distribution([0.1, 3.0, -2.0], temperature=0), [0, 1, 0])
    np.testing.assert_array_equal(next_token_distribution([5.0, 1.0, 5.0], temperature=0), [1, 0, 0])
    np.testing.assert_array_equal(next_token_distribution([1.0, 2.0, 3.0], temperature=1e-300), [0, 0, 1])


def test_seed_paris_example_sharpens_below_one_and_flattens_above() -> None:
    # The seed's logits: 巴黎 15.2, 伦敦 7.1, 苹果 -2.5, 的 0.8.
    logits = [15.2, 7.1, -2.5, 0.8]
    entropies = [entropy_bits(next_token_distribution(logits, temperature=t)) for t in (0.3, 0.7, 1.0, 1.5, 5.0)]
    assert entropies == sorted(entropies)
    assert next_token_distribution(logits, temperature=1.0)[0] == pytest.approx(1 / (1 + math.exp(-8.1) + math.exp(-17.7) + math.exp(-14.4)))
    hot = next_token_distribution(logits, temperature=1000.0)
    np.testing.assert_allclose(hot, 0.25, atol=0.01)  # nearly uniform


def test_top_k_and_top_p_worked_examples() -> None:
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    np.testing.assert_array_equal(top_k_cut(probs, 2), [False, False, True, True])
    np.testing.assert_array_equal(top_p_cut(probs, 0.9), [False, False, False, True])
    np.testing.assert_array_equal(top_p_cut(probs, 0.5), [False, True, True, True])
    np.testing.assert_array_equal(top_p_cut(probs, 0.01), [False, True, True, True])  # the best token always stays
    final = next_token_distribution(np.log(probs), top_p=0.9)
    np.testing.assert_allclose(final, [0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0.0])
    final = next_token_distribution(np.log(probs), top_k=2)
    np.testing.assert_allclose(final, [0.625, 0.375, 0.0, 0.0])


def test_top_k_ties_keep_the_lower_ids() -> None:
    np.testing.assert_array_equal(top_k_cut(np.array([0.2, 0.3, 0.3, 0.2]), 1), [True, False, True, True])
    np.testing.assert_array_equal(top_k_cut(np.array([0.25] * 4), 2), [False, False, True, True])


def test_order_is_temperature_then_top_k_then_top_p() -> None:
    logits = np.log([0.5, 0.3, 0.15, 0.05])
    steps = sampling_steps(logits, temperature=2.0, top_k=3, top_p=0.6)
    tempered = np.sqrt([0.5, 0.3, 0.15, 0.05])
    tempered /= tempered.sum()
    np.testing.assert_allclose(steps.tempered_probs, tempered)
    np.testing.assert_array_equal(steps.cut_by_top_k, [False, False, False, True])
    after_k = tempered[:3] / tempered[:3].sum()  # about [0.43, 0.34, 0.23]
    np.testing.assert_allclose(steps.after_top_k_probs[:3], after_k)
    # top-p on the renormalised top-k survivors: 0.43 < 0.6, then 0.77 >= 0.6 -> keep two.
    np.testing.assert_array_equal(steps.cut_by_top_p, [False, False, True, False])  # token 3 was top-k's, not top-p's
    np.testing.assert_allclose(steps.final_probs, [after_k[0] / after_k[:2].sum(), after_k[1] / after_k[:2].sum(), 0, 0])
    assert steps.n_candidates == 2
    assert steps.entropy_final_bits == pytest.approx(entropy_bits(steps.final_probs))
    assert steps.entropy_original_bits == pytest.approx(entropy_bits(np.array([0.5, 0.3, 0.15, 0.05])))
    assert steps.entropy_tempered_bits > steps.entropy_original_bits
    # Temperature comes before top-p: flattening first lets more tokens into the nucleus.
    assert sampling_steps(logits, temperature=1.0, top_p=0.5).n_candidates == 1  # 0.5 alone reaches p
    assert sampling_steps(logits, temperature=2.0, top_p=0.5).n_candidates == 2  # 0.38 does not


def test_off_switches() -> None:
    logits = np.array([0.3, -1.0, 2.0, 0.0])
    plain = softmax(logits)
    for top_k in (None, 0, 4, 100):
        np.testing.assert_allclose(next_token_distribution(logits, top_k=top_k, top_p=1.0), plain)


@pytest.mark.parametrize("seed", range(5))
def test_matches_transformers_logits_warpers(seed: int) -> None:
    from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 3, size=200)
    for temperature, top_k, top_p in [(0.7, 20, 0.9), (1.3, 50, 0.5), (1.0, None, 0.95), (0.5, 5, 1.0)]:
        scores = torch.tensor(logits, dtype=torch.float64)[None, :]
        scores = TemperatureLogitsWarper(temperature)(None, scores)
        if top_k:
            scores = TopKLogitsWarper(top_k)(None, scores)
        if top_p < 1.0:
            scores = TopPLogitsWarper(top_p)(None, scores)
        expected = torch.softmax(scores, dim=-1)[0].numpy()
        ours = next_token_distribution(logits, temperature=temperature, top_k=top_k, top_p=top_p)
        np.testing.assert_allclose(ours, expected, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    logits=st.lists(st.floats(-30, 30), min_size=1, max_size=40),
    temperature=st.floats(0, 5),
    top_k=st.one_of(st.none(), st.integers(0, 50)),
    top_p=st.floats(0.01, 1.0),
)
def test_properties(logits: list[float], temperature: float, top_k: int | None, top_p: float) -> None:
    steps = sampling_steps(logits, temperature, top_k, top_p)
    final = steps.final_probs
    assert final.shape == (len(logits),)
    assert (final >= 0).all() and final.sum() == pytest.approx(1.0)
    assert not (final[steps.cut_by_top_k | steps.cut_by_top_p] > 0).any()
    if top_k:
        assert steps.n_candidates <= top_k
    assert final[int(np.argmax(logits))] > 0  # the best token is never removed
    assert 0 <= steps.entropy_final_bits <= math.log2(len(logits)) + 1e-9


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": -0.1}, "temperature must be >= 0"),
        ({"temperature": float("nan")}, "temperature must be a finite"),
        ({"temperature": float("inf")}, "temperature must be a finite"),
        ({"temperature": "hot"}, "temperature must be a number"),
        ({"top_p": 0.0}, "top_p must be in \\(0, 1\\]"),
        ({"top_p": 1.5}, "top_p must be in"),
        ({"top_p": float("nan")}, "top_p must be in"),
        ({"top_k": -1}, "top_k must be >= 0"),
        ({"top_k": 2.5}, "top_k must be an int"),
    ],
)
def test_bad_parameters_raise_clear_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        next_token_distribution([1.0, 2.0], **kwargs)


@pytest.mark.parametrize(
    ("logits", "message"),
    [
        ([], "non-empty 1-D"),
        ([[1.0, 2.0]], "non-empty 1-D"),
        ([1.0, float("nan")], "NaN"),
        ([1.0, float("inf")], "infinity"),
        ([float("-inf"), float("-inf")], "every logit is -infinity"),
    ],
)
def test_bad_logits_raise_clear_errors(logits: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        next_token_distribution(logits)


def test_sample_is_repeatable_and_follows_the_distribution() -> None:
    probs = np.array([0.1, 0.6, 0.3])
    draws = sample(probs, n=20_000, seed=42)
    np.testing.assert_array_equal(draws, sample(probs, n=20_000, seed=42))
    assert not np.array_equal(draws, sample(probs, n=20_000, seed=43))
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / draws.size, probs, atol=0.015)
    np.testing.assert_array_equal(sample(np.array([0.0, 1.0, 0.0]), n=3, seed=7), [1, 1, 1])


@pytest.mark.parametrize(
    ("probs", "n", "seed", "message"),
    [
        ([0.5, 0.6], 1, 0, "sum to 1"),
        ([-0.5, 1.5], 1, 0, "non-negative"),
        ([0.5, float("nan")], 1, 0, "finite"),
        ([], 1, 0, "non-empty"),
        ([1.0], 0, 0, "n must be"),
        ([1.0], 10**9, 0, "n must be"),
        ([1.0], 1, -3, "seed must be"),
    ],
)
def test_sample_validation(probs: list, n: int, seed: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sample(np.array(probs, dtype=float), n=n, seed=seed)


def test_top_k_ranks_on_logits_not_on_tempered_ties() -> None:
    # At T = 0 the tempered probabilities are one-hot: ranking them would keep ids 0, 1, 2.
    steps = sampling_steps([3, 0.5, 2, 1, 2.5], 0.0, 3)
    np.testing.assert_array_equal(np.flatnonzero(~steps.cut_by_top_k), [0, 2, 4])
    np.testing.assert_array_equal(steps.final_probs, [1, 0, 0, 0, 0])
    # A tiny T underflows every non-max probability to 0: still ranked on the logits.
    tiny = sampling_steps([3, 0.5, 2, 1, 2.5], 1e-4, 3)
    np.testing.assert_array_equal(np.flatnonzero(~tiny.cut_by_top_k), [0, 2, 4])
    # Equal logits: the lower id keeps the place.
    np.testing.assert_array_equal(np.flatnonzero(~sampling_steps([1, 2, 2, 0], 0.0, 2).cut_by_top_k), [1, 2])
