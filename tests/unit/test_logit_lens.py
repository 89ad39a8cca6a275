"""The logit lens: hand-computed stages, and the last stage equals the model's own output."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.lessons.logit_lens import EMBEDDING_STAGE, logit_lens, stage_residuals
from core.engine.model import GPTConfig, build_model
from core.engine.names import act_name


def _hand_trace() -> dict[str, np.ndarray]:
    # Two positions, d_model = vocab = 3, so the identity can play "final norm + LM head".
    # The last position's residual: uniform -> favours id 1 -> favours id 2.
    pre = np.array([[5.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    after0 = np.array([[0.0, 0.0, 0.0], [np.log(1.0), np.log(2.0), np.log(1.0)]])
    after1 = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, np.log(8.0)]])
    return {
        act_name("resid_pre", layer=0): pre,
        act_name("resid_post", layer=0): after0,
        act_name("resid_post", layer=1): after1,
    }


def test_hand_computed_stages() -> None:
    lens = logit_lens(_hand_trace(), n_layer=2, unembed=lambda x: x, k=3)
    assert lens.stages == [EMBEDDING_STAGE, "0", "1"]
    assert lens.position == 1
    # Uniform: ties broken by the lower id. Then [0.25, 0.5, 0.25]. Then [0.1, 0.1, 0.8].
    np.testing.assert_array_equal(lens.top_ids, [[0, 1, 2], [1, 0, 2], [2, 0, 1]])
    np.testing.assert_allclose(lens.top_probs, [[1 / 3] * 3, [0.5, 0.25, 0.25], [0.8, 0.1, 0.1]])
    assert lens.final_id == 2
    np.testing.assert_allclose(lens.final_id_probs, [1 / 3, 0.25, 0.8])
    np.testing.assert_array_equal(lens.final_id_ranks, [3, 3, 1])
    assert lens.first_stage_with_final_on_top == 2


def test_other_position_and_k() -> None:
    lens = logit_lens(_hand_trace(), n_layer=2, unembed=lambda x: x, position=0, k=1)
    assert lens.position == 0
    assert lens.top_ids[0, 0] == 0 and lens.top_probs[0, 0] > 0.98  # exp(5) dominates
    assert lens.top_ids.shape == (3, 1)


@pytest.mark.parametrize("design", ["classic", "modern"])
def test_last_stage_is_the_models_prediction(design: str) -> None:
    torch.manual_seed(0)
    if design == "classic":
        cfg = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50, positional="sinusoidal")
    else:
        cfg = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50,
                        positional="rope", norm="rmsnorm", mlp="swiglu", bias=False)
    model = build_model(cfg, seed=3)
    logits, trace = model.run_with_trace([3, 14, 15, 9, 2])
    lens = logit_lens(trace, cfg.n_layer, model.final_norm_and_unembed, k=5)
    last = logits[-1].astype(np.float64)
    probs = np.exp(last - last.max())
    probs /= probs.sum()
    expected_top = np.argsort(-probs, kind="stable")[:5]
    np.testing.assert_array_equal(lens.top_ids[-1], expected_top)
    np.testing.assert_allclose(lens.top_probs[-1], probs[expected_top], rtol=1e-5)
    assert lens.final_id == int(np.argmax(last))
    assert lens.final_id_ranks[-1] == 1
    # Every stage is a proper distribution's top slice: sorted, within (0, 1].
    assert np.all(np.diff(lens.top_probs, axis=1) <= 1e-12)
    assert np.all((lens.top_probs > 0) & (lens.top_probs <= 1))


def test_stage_residuals_reads_the_named_trace_entries() -> None:
    trace = _hand_trace()
    stages, vectors = stage_residuals(trace, 2, position=-1)
    assert stages == ["embedding", "0", "1"]
    np.testing.assert_array_equal(vectors[2], trace["blocks.1.hook_resid_post"][-1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_layer": 3}, "lacks blocks.2.hook_resid_post"),
        ({"n_layer": 0}, "n_layer"),
        ({"position": 2}, "position"),
        ({"k": 0}, "k must be"),
        ({"k": 4}, "k must be"),
        ({"unembed": lambda x: x[:, :2] * np.nan}, "NaN"),
        ({"unembed": lambda x: x[0]}, "unembed must map"),
    ],
)
def test_bad_input_is_a_clear_error(kwargs: dict, message: str) -> None:
    args = {"n_layer": 2, "unembed": lambda x: x, "k": 3, **kwargs}
    with pytest.raises(ValueError, match=message):
        logit_lens(_hand_trace(), **args)


@pytest.mark.parametrize("seed", range(6))
def test_top_k_and_ranks_match_a_full_sort_even_with_ties(seed: int) -> None:
    """The partitioned top-k must equal sorting the whole vocabulary (most probable first,
    the lower id first on a tie), ties included: an untrained model gives many equal values."""
    rng = np.random.default_rng(seed)
    vocab, n_stage = 50, 4
    # few distinct values, so every row has ties, also across the k-th place
    logits = rng.integers(0, 4, size=(n_stage, vocab)).astype(float)
    resid = {act_name("resid_pre", layer=0): logits[0][None, :]}
    resid |= {act_name("resid_post", layer=L): logits[L + 1][None, :] for L in range(n_stage - 1)}
    for k in (1, 3, 7, vocab):
        lens = logit_lens(resid, n_layer=n_stage - 1, unembed=lambda x: x, k=k)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        order = np.stack([np.lexsort((np.arange(vocab), -row)) for row in probs])
        np.testing.assert_array_equal(lens.top_ids, order[:, :k])
        assert lens.final_id == order[-1, 0]
        np.testing.assert_array_equal(lens.final_id_ranks, np.argmax(order == lens.final_id, axis=1) + 1)


def test_grid_is_the_single_lens_at_every_position() -> None:
    """One lens, two views: the grid's column p is logit_lens(position=p, k=1), number for number."""
    from core.lessons.logit_lens import logit_lens_grid

    torch.manual_seed(0)
    cfg = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50, positional="rope",
                    norm="rmsnorm", mlp="swiglu", bias=False)
    model = build_model(cfg, seed=5)
    _, trace = model.run_with_trace([3, 14, 15, 9, 2, 6])
    grid = logit_lens_grid(trace, model.final_norm_and_unembed)
    assert grid.stages == (EMBEDDING_STAGE, "0", "1") and grid.top_ids.shape == (3, 6)
    for position in range(6):
        lens = logit_lens(trace, cfg.n_layer, model.final_norm_and_unembed, position=position, k=1)
        np.testing.assert_array_equal(grid.top_ids[:, position], lens.top_ids[:, 0])
        # float32 matmuls of a different batch shape round differently: agree to float32, not to the bit
        np.testing.assert_allclose(grid.top_probs[:, position], lens.top_probs[:, 0], rtol=1e-5, atol=0)
    hand = logit_lens_grid(_hand_trace(), lambda x: x)  # ties: the lower id, as in the single lens
    np.testing.assert_array_equal(hand.top_ids, [[0, 0], [0, 1], [0, 2]])
