"""core.lessons.block: DLA sums to the logit, ablation is pure, the textbook's numbers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import core
from core.engine import names
from core.lessons.logit_lens import logit_lens_grid
from core.lessons.block import (
    TEXTBOOK_RELU_IN,
    TEXTBOOK_SAMPLES,
    TEXTBOOK_X,
    activation,
    build_neuron_index,
    direct_logit_attribution,
    gradient_paths,
    layer_norm,
    neuron_output_tokens,
    normalize_table,
    residual_norms,
    rms_norm,
    route,
    swiglu_hidden,
    token_norm_stats,
    top_next,
    toy_router,
)
from core.engine.model import Ablation, GPTConfig, build_model
from tests.floats import assert_close32

PROMPT = "小明把苹果放进书包，因为它太甜了"


@pytest.fixture(scope="module", params=["classic", "modern"])
def loaded(request: pytest.FixtureRequest):
    return core.load_builtin(request.param)


@pytest.fixture(scope="module")
def run(loaded):
    ids = loaded.tokenizer.encode(PROMPT)
    logits, trace = loaded.model.run_with_trace(ids)
    return ids, logits, trace


def test_dla_parts_sum_to_the_real_logit(loaded, run) -> None:
    ids, logits, trace = run
    for position in (-1, 0, len(ids) // 2):
        for token in (int(np.argmax(logits[position])), 7):
            attribution = direct_logit_attribution(loaded.model, trace, token, position)
            real = float(logits[position, token])
            assert attribution.logit == real  # read from the same trace: exactly the same number
            # float64 sum of the float32 parts vs the float32 forward: rounding at the parts' size
            assert_close32(attribution.total, real, scale=attribution.values)
    cfg = loaded.config
    kinds = attribution.kinds
    assert kinds.count("head") == cfg.n_layer * cfg.n_head
    assert kinds.count("mlp") == cfg.n_layer
    assert kinds.count("attn_bias") == (cfg.n_layer if cfg.bias else 0)
    assert ("norm_bias" in kinds) == (cfg.norm == "layernorm" and cfg.bias)
    per_layer = attribution.per_layer()
    assert per_layer["attn"].sum() + per_layer["mlp"].sum() + per_layer["embed"].sum() + per_layer["norm_bias"].sum() \
        == pytest.approx(attribution.total, rel=1e-9)


def test_dla_heads_plus_bias_rebuild_the_attention_output(loaded, run) -> None:
    _, _, trace = run
    model = loaded.model
    z = trace[names.act_name("z", 1)][-1]
    w_o = model.h[1].attn.c_proj.weight.detach().numpy().astype(np.float64)
    dh = z.shape[-1]
    total = sum(w_o[:, h * dh:(h + 1) * dh] @ z[h] for h in range(z.shape[0]))
    if model.h[1].attn.c_proj.bias is not None:
        total = total + model.h[1].attn.c_proj.bias.detach().numpy()
    np.testing.assert_allclose(total, trace[names.act_name("attn_out", 1)][-1], rtol=1e-4, atol=1e-5)


def test_ablating_nothing_changes_nothing_and_the_model_is_untouched(loaded, run) -> None:
    ids, logits, _ = run
    model = loaded.model
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    hooks = (len(model._forward_hooks), len(model._forward_pre_hooks))
    same, _ = model.run_with_trace(ids, ablate=Ablation())
    assert np.array_equal(same, logits)
    changed, trace = model.run_with_trace(ids, ablate=Ablation(mlp_layers=frozenset({0}), heads=frozenset({(1, 0)}),
                                                               no_residual=frozenset({2})))
    assert not np.allclose(changed, logits)
    assert np.all(trace[names.act_name("mlp_out", 0)] == 0)
    again, _ = model.run_with_trace(ids)
    assert np.array_equal(again, logits)  # nothing stayed behind on the shared model
    assert (len(model._forward_hooks), len(model._forward_pre_hooks)) == hooks
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key


def test_ablating_every_head_equals_zeroing_the_layer_up_to_the_bias() -> None:
    model = build_model(GPTConfig.tiny(bias=False), seed=3, device="cpu").eval()
    ids = [1, 5, 9, 2]
    heads, _ = model.run_with_trace(ids, ablate=Ablation(heads=frozenset({(0, 0), (0, 1)})))
    layer, _ = model.run_with_trace(ids, ablate=Ablation(attn_layers=frozenset({0})))
    assert_close32(heads, layer)  # zeroed before vs after the output projection: float32 rounding apart


def test_no_residual_means_the_block_outputs_only_its_writes() -> None:
    model = build_model(GPTConfig.tiny(), seed=1, device="cpu").eval()
    _, trace = model.run_with_trace([3, 4, 5], ablate=Ablation(no_residual=frozenset({1})))
    np.testing.assert_allclose(trace[names.act_name("resid_mid", 1)], trace[names.act_name("attn_out", 1)])
    np.testing.assert_allclose(trace[names.act_name("resid_post", 1)], trace[names.act_name("mlp_out", 1)])


@pytest.mark.parametrize("bad", [Ablation(heads=frozenset({(0, 9)})), Ablation(mlp_layers=frozenset({5})),
                                 Ablation(attn_layers=frozenset({-1}))])
def test_bad_ablation_is_refused(bad: Ablation) -> None:
    model = build_model(GPTConfig.tiny(), seed=1, device="cpu")
    with pytest.raises(ValueError):
        model.run_with_trace([1, 2], ablate=bad)


def test_textbook_layer_norm_numbers() -> None:
    steps = layer_norm(TEXTBOOK_X)
    assert steps.mean == pytest.approx(1.75)
    assert steps.scale == pytest.approx(4.2311, abs=1e-4)  # sqrt(17.9025)
    np.testing.assert_allclose(steps.normalized, [-0.3663, 1.5953, -1.1463, -0.0827], atol=1e-4)
    assert round(float(steps.normalized[1]), 3) == 1.595  # the textbook prints 1.59
    assert steps.normalized.mean() == pytest.approx(0.0, abs=1e-12)
    assert steps.normalized.std() == pytest.approx(1.0)
    rms = rms_norm(TEXTBOOK_X)
    assert rms.scale == pytest.approx(np.sqrt((0.04 + 72.25 + 9.61 + 1.96) / 4))
    np.testing.assert_allclose(rms.normalized, np.array(TEXTBOOK_X) / rms.scale)
    with pytest.raises(ValueError):
        layer_norm([2.0, 2.0, 2.0])


def test_layer_norm_matches_torch() -> None:
    x = torch.tensor([TEXTBOOK_X], dtype=torch.float64)
    expected = torch.nn.functional.layer_norm(x, (4,), eps=1e-5)[0].numpy()
    np.testing.assert_allclose(layer_norm(TEXTBOOK_X, eps=1e-5).normalized, expected, rtol=1e-12)


def test_per_sample_vs_per_feature() -> None:
    rows, means, _ = normalize_table(TEXTBOOK_SAMPLES, "sample")
    cols, col_means, _ = normalize_table(TEXTBOOK_SAMPLES, "feature")
    np.testing.assert_allclose(rows[0], layer_norm(TEXTBOOK_X).normalized)
    assert means[0] == pytest.approx(1.75)
    assert col_means[0] == pytest.approx((0.2 + 1.1 + 3.0) / 3)
    np.testing.assert_allclose(rows.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(cols.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(cols.std(axis=0), 1)


def test_live_norm_stats(loaded, run) -> None:
    _, _, trace = run
    stats = token_norm_stats(loaded.model, trace, 0, "ln1")
    x = trace[names.act_name("resid_pre", 0)].astype(np.float64)
    eps = loaded.config.eps
    if loaded.config.norm == "layernorm":
        expected = (x - stats.mean_in[:, None]) / np.sqrt(stats.std_in[:, None] ** 2 + eps) * stats.gamma
        expected = expected + (stats.beta if stats.beta is not None else 0)
    else:
        expected = x / np.sqrt(stats.rms_in[:, None] ** 2 + eps) * stats.gamma
    np.testing.assert_allclose(trace[names.act_name("ln1", 0)], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(stats.rms_out, np.sqrt((trace[names.act_name("ln1", 0)].astype(np.float64) ** 2).mean(-1)))
    assert stats.std_in.shape == stats.rms_out.shape


def test_textbook_activation_numbers() -> None:
    np.testing.assert_array_equal(activation("relu", TEXTBOOK_RELU_IN), [0, 0, 0, 2, 5])
    silu = activation("silu", [-3.0, 0.0, 3.0])
    assert round(float(silu[0]), 2) == -0.14 and silu[1] == 0 and round(float(silu[2]), 2) == 2.86
    x = np.linspace(-4, 4, 81)
    assert np.max(np.abs(activation("gelu", x) - activation("gelu_tanh", x))) < 1e-3
    np.testing.assert_allclose(activation("swiglu", x, up=2.0), 2 * activation("silu", x))
    with pytest.raises(ValueError):
        activation("tanh", x)


def test_swiglu_widths() -> None:
    raw, llama2 = swiglu_hidden(4096)
    assert raw == pytest.approx(4096 * 8 / 3) and llama2 == 11008
    assert swiglu_hidden(4096, multiple_of=1024, ffn_dim_multiplier=1.3)[1] == 14336
    d = 4096
    assert 3 * d * (8 * d // 3) == pytest.approx(2 * d * 4 * d, rel=1e-3)  # same parameters as a 4x GELU FFN


def test_gradient_paths() -> None:
    paths = gradient_paths(48)
    assert paths["0.9"][-1] == pytest.approx(0.00636, rel=1e-3)
    assert paths["1.1"][-1] == pytest.approx(97.0, rel=1e-3)
    assert np.all(paths["residual"] == 1)


def test_residual_norms(run) -> None:
    _, _, trace = run
    norms = residual_norms(trace)
    np.testing.assert_allclose(norms.post[0], np.linalg.norm(trace[names.act_name("resid_post", 0)], axis=-1), rtol=1e-5)
    attn_ratio, _ = norms.write_ratio()
    assert attn_ratio.shape == norms.pre.shape and np.all(attn_ratio >= 0)


def test_neuron_tokens_and_index(loaded) -> None:
    model = loaded.model
    result = neuron_output_tokens(model, 1, 3, k=10)
    scores = (model.lm_head.weight @ model.h[1].mlp.c_proj.weight[:, 3]).detach().numpy()
    assert result.up_ids[0] == int(np.argmax(scores)) and result.down_ids[0] == int(np.argmin(scores))
    assert np.all(np.diff(result.up_values) <= 0)
    docs = ["The capital of France is Paris.", "法国的首都是巴黎。", "A cat is an animal."]
    index = build_neuron_index(model, loaded.tokenizer, docs, k=3)
    # the best recorded activation really is the neuron's maximum over the three documents
    best = -np.inf
    for text in docs:
        _, trace = model.run_with_trace(loaded.tokenizer.encode(text))
        best = max(best, float(trace[names.act_name("post", 2)][:, 10].max()))
    # float32 rounding differs between the index's padded batches and one document alone (a
    # relative 1.4e-6 was seen under load: BLAS picks other kernels for other shapes)
    assert index.acts[2, 10, 0] == pytest.approx(best, rel=1e-5)
    assert not index.acts.flags.writeable
    act, doc, left, tok, right = index.contexts(2, 10)[0]
    assert tok in index.tokens[doc]


def test_top_k_matches_a_stable_full_sort_with_ties() -> None:
    from core.lessons.block import _top_k_last_axis

    rng = np.random.default_rng(0)
    values = rng.integers(0, 6, size=(3, 40, 25)).astype(np.float64)  # many ties, at the k-th place too
    values[0, 0] = 7.0  # a row that is all one value
    for k in (1, 3, 5, 25, 30):
        expected = np.argsort(-values, axis=-1, kind="stable")[..., :k]
        assert np.array_equal(_top_k_last_axis(values, k), expected), k


def test_batched_neuron_index_equals_one_document_at_a_time(loaded) -> None:
    """The padded batches give every neuron the same top positions as running each text alone."""
    model, tok = loaded.model, loaded.tokenizer
    docs = ["The capital of France is Paris.", "", "法国的首都是巴黎。", "A cat is an animal.", "Paris"]
    index = build_neuron_index(model, tok, docs, k=4)
    acts, where = [], []
    for d, text in enumerate(docs):
        ids = tok.encode(text)[: model.config.n_ctx]
        if not ids:
            continue
        _, trace = model.run_with_trace(ids)
        acts.append(np.stack([trace[names.act_name("post", L)] for L in range(model.config.n_layer)]))
        where += [(d, p) for p in range(len(ids))]
    every = np.transpose(np.concatenate(acts, axis=1), (0, 2, 1))  # (L, d_mlp, all positions)
    top = np.argsort(-every, axis=-1, kind="stable")[..., :4]
    np.testing.assert_allclose(index.acts, np.take_along_axis(every, top, axis=-1), rtol=1e-4, atol=1e-5)
    doc_of = np.array([d for d, _ in where])
    # positions may swap only where two activations are equal to float precision
    same = index.doc == doc_of[top]
    assert same.mean() > 0.99
    assert index.tokens[1] == () and len(index.tokens) == len(docs)


def test_router() -> None:
    router = toy_router(16, 8, seed=0)
    assert np.array_equal(router, toy_router(16, 8, seed=0))
    routing = route(np.ones(16), router, k=2)
    assert routing.gates.sum() == pytest.approx(1.0) and len(routing.chosen) == 2
    assert routing.probs[routing.chosen[0]] == routing.probs.max()
    with pytest.raises(ValueError):
        route(np.ones(15), router)


def test_logit_lens_grid(loaded, run) -> None:
    _, logits, trace = run
    grid = logit_lens_grid(trace, loaded.model.final_norm_and_unembed)
    assert grid.top_ids.shape == (loaded.config.n_layer + 1, logits.shape[0])
    assert np.array_equal(grid.top_ids[-1], logits.argmax(axis=-1))


def test_top_next() -> None:
    ids, probs = top_next(np.array([0.0, 2.0, 2.0, 1.0]), 3)
    assert list(ids) == [1, 2, 3] and probs[0] == probs[1]


def test_single_head_effects(loaded) -> None:
    from core.lessons.block import single_head_effects

    ids = loaded.tokenizer.encode(PROMPT + "。它指的是")
    top, probs, new_top = single_head_effects(loaded.model, ids)
    cfg = loaded.config
    assert probs.shape == new_top.shape == (cfg.n_layer, cfg.n_head)
    L, h = np.unravel_index(np.argmin(probs), probs.shape)
    logits, _ = loaded.model.run_with_trace(ids, ablate=Ablation(heads=frozenset({(int(L), int(h))})))
    assert top_next(logits[-1], 1)[0][0] == new_top[L, h]
    assert np.all((probs >= 0) & (probs <= 1))
