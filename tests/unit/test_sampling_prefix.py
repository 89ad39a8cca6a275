"""The browser's number of draws (ui/components/sampling_lab: draws) relies on one property of
``core.engine.sampling.sample``: N draws with a seed are the first N of 1000 with it (numpy's
generator draws one uniform per token, in order, through the same inverse CDF)."""

from __future__ import annotations

import numpy as np
import pytest

from core.engine.sampling import sample


@pytest.mark.parametrize("case", range(60))
def test_n_draws_are_the_first_n_of_a_thousand(case: int) -> None:
    rng = np.random.default_rng(case)
    vocab = int(rng.integers(1, 6000))
    probs = rng.random(vocab) ** float(rng.uniform(0.5, 12))
    probs[rng.random(vocab) < 0.3] = 0.0  # cut tokens (top-k / top-p) have probability 0
    if probs.sum() == 0:
        probs[0] = 1.0
    probs /= probs.sum()
    seed = int(rng.integers(0, 2**31))
    thousand = sample(probs, n=1000, seed=seed)
    for n in (1, 2, int(rng.integers(1, 1001)), 999, 1000):
        np.testing.assert_array_equal(sample(probs, n=n, seed=seed), thousand[:n])
