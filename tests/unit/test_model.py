"""The model core: config, positions, attention maths, trace invariants, a Llama reference."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
import torch
from torch import nn

from core.engine import names
from core.engine.model import (
    GPT,
    GPTConfig,
    apply_rope,
    build_model,
    rope_inverse_frequencies,
    sinusoidal_table,
)
from tests.floats import assert_close32

torch.set_num_threads(1)

VARIANTS = [
    GPTConfig.tiny(),
    GPTConfig.tiny(positional="sinusoidal", mlp="gelu_tanh", scale_embeddings=True),
    GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu", bias=False),
]
IDS = [7, 3, 49, 0, 12, 12, 5]


def _ids(config: GPTConfig) -> str:
    return f"{config.positional}-{config.norm}-{config.mlp}"


# --- config -----------------------------------------------------------------------------


def test_config_round_trips_through_a_dict_and_rejects_unknown_fields() -> None:
    config = GPTConfig.tiny(positional="rope", rope_base=500.0)
    assert GPTConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown GPTConfig fields: \\['n_layers'\\]"):
        GPTConfig.from_dict({**config.to_dict(), "n_layers": 3})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"d_model": 15}, "divisible by n_head"),
        ({"n_layer": 0}, "n_layer must be a positive int"),
        ({"vocab_size": 2.5}, "vocab_size must be a positive int"),
        ({"positional": "alibi"}, "positional must be one of"),
        ({"norm": "batchnorm"}, "norm must be one of"),
        ({"mlp": "relu"}, "mlp must be one of"),
        ({"positional": "rope", "d_model": 6, "n_head": 2}, "d_head .* must be even"),
        ({"eps": 0.0}, "eps must be in"),
        ({"rope_base": float("nan")}, "rope_base"),
    ],
)
def test_config_validation_names_the_problem(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GPTConfig.tiny(**overrides)


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        GPTConfig.tiny().n_layer = 3  # type: ignore[misc]


def test_gpt2_small_has_the_famous_124m_parameters() -> None:
    # The seed's hand count: embeddings + 12 layers of attention, MLP and norms = about 124 M.
    with torch.device("meta"):  # shapes only: no 500 MB allocation
        model = GPT(GPTConfig.gpt2_like())
    assert model.num_params() == 124_439_808
    counts = model.parameter_counts()
    assert counts["token_embedding"] == 50257 * 768
    assert counts["position_embedding"] == 1024 * 768
    assert counts["attention"] == 12 * (4 * 768 * 768 + 4 * 768)
    assert counts["mlp"] == 12 * (2 * 768 * 3072 + 3072 + 768)
    assert counts["lm_head"] == 0  # tied: the same matrix as the token embedding


def test_tiny_parameter_count_by_hand() -> None:
    d, v, ctx, mlp = 16, 50, 32, 64
    per_layer = 2 * (2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * mlp + mlp) + (mlp * d + d)
    expected = v * d + ctx * d + 2 * per_layer + 2 * d
    model = build_model(GPTConfig.tiny())
    assert model.num_params() == expected == sum(model.parameter_counts().values())
    untied = build_model(GPTConfig.tiny(tie_embeddings=False))
    assert untied.num_params() == expected + v * d


def test_build_model_is_deterministic_per_seed_and_leaves_global_rng_alone() -> None:
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = build_model(GPTConfig.tiny(), seed=1)
    after = torch.rand(1)
    b = build_model(GPTConfig.tiny(), seed=1)
    c = build_model(GPTConfig.tiny(), seed=2)
    assert torch.equal(before, after)
    assert torch.equal(a.wte.weight, b.wte.weight)
    assert not torch.equal(a.wte.weight, c.wte.weight)


# --- positions --------------------------------------------------------------------------


def test_sinusoidal_table_matches_the_seed_worked_example() -> None:
    table = sinusoidal_table(4, 8).numpy()
    np.testing.assert_allclose(table[0], [0, 1, 0, 1, 0, 1, 0, 1], atol=1e-7)
    np.testing.assert_allclose(table[1], [0.842, 0.540, 0.100, 0.995, 0.010, 1.000, 0.001, 1.000], atol=1e-3)  # the seed rounds to 3 places
    np.testing.assert_allclose(table[2], [0.909, -0.416, 0.199, 0.980, 0.020, 1.000, 0.002, 1.000], atol=1e-3)
    np.testing.assert_allclose(table[3], [0.141, -0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000], atol=1e-3)


def test_sinusoidal_offset_is_a_fixed_rotation_of_each_pair() -> None:
    # PE(pos + offset) = R(offset * w_k) PE(pos) for every (sin, cos) pair: relative position is linear.
    d, offset = 8, 3
    table = sinusoidal_table(20, d).double().numpy()
    for k in range(d // 2):
        w = 1.0 / 10000 ** (2 * k / d)
        a = offset * w
        rotation = np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])
        for pos in (0, 5, 11):
            # The table is float32: its angles pos·w carry float32 rounding at the angle's size.
            assert_close32(rotation @ table[pos, 2 * k : 2 * k + 2], table[pos + offset, 2 * k : 2 * k + 2],
                           scale=[pos + offset], ulps=16)


def test_rope_rotates_a_pair_by_position_times_frequency() -> None:
    np.testing.assert_allclose(rope_inverse_frequencies(4).numpy(), [1.0, 0.01], rtol=1e-6)
    x = torch.tensor([1.0, 0.0, 1.0, 0.0]).view(1, 1, 1, 4)  # (batch, head, pos, d_head)
    rotated = apply_rope(x, torch.tensor([2]), rope_inverse_frequencies(4)).flatten().numpy()
    assert_close32(rotated, [math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)], scale=[2.0], ulps=16)


def test_rope_dot_product_depends_only_on_relative_position() -> None:
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, 1, 8, generator=generator)
    k = torch.randn(1, 1, 1, 8, generator=generator)
    freqs = rope_inverse_frequencies(8)

    def score(m: int, n: int) -> float:
        return float((apply_rope(q, torch.tensor([m]), freqs) * apply_rope(k, torch.tensor([n]), freqs)).sum())

    assert score(5, 2) == pytest.approx(score(13, 10), abs=1e-5)
    assert score(5, 2) != pytest.approx(score(5, 4), abs=1e-3)


def test_positional_accessors() -> None:
    sinus = build_model(GPTConfig.tiny(positional="sinusoidal"))
    np.testing.assert_allclose(sinus.positional_table(6), sinusoidal_table(32, 16)[:6].numpy())
    learned = build_model(GPTConfig.tiny())
    np.testing.assert_array_equal(learned.positional_table(4), learned.wpe.weight[:4].detach().cpu().numpy())
    rope = build_model(GPTConfig.tiny(positional="rope"))
    np.testing.assert_allclose(rope.rope_frequencies(), 10000.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-6)
    with pytest.raises(ValueError, match="no positional table"):
        rope.positional_table(4)
    with pytest.raises(ValueError, match="not RoPE"):
        learned.rope_frequencies()
    with pytest.raises(ValueError, match="n must be an int"):
        learned.positional_table(33)


# --- trace invariants ---------------------------------------------------------------------


@pytest.mark.parametrize("config", VARIANTS, ids=_ids)
def test_trace_invariants(config: GPTConfig) -> None:
    model = build_model(config, seed=3).eval()
    logits, trace = model.run_with_trace(IDS)
    n = len(IDS)
    np.testing.assert_array_equal(trace["hook_tokens"], IDS)
    np.testing.assert_array_equal(logits, trace["unembed.hook_out"])
    assert_close32(logits, model.logits(IDS), ulps=256)  # fused attention path agrees (float32 at the logits' size)
    scale = math.sqrt(config.d_model) if config.scale_embeddings else 1.0
    np.testing.assert_allclose(trace["hook_embed"], model.embedding_matrix()[IDS] * scale, rtol=1e-6)
    first = trace[names.act_name("resid_pre", 0)]
    if config.positional == "rope":
        np.testing.assert_array_equal(first, trace["hook_embed"])
    else:
        assert_close32(first, trace["hook_embed"] + trace["hook_pos_embed"], ulps=4)
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    for layer in range(config.n_layer):
        pattern = trace[names.act_name("pattern", layer)]
        scores = trace[names.act_name("attn_scores", layer)]
        assert_close32(pattern.sum(-1), np.ones(pattern.shape[:-1]), ulps=4 * n)  # every row is a distribution
        assert (pattern[:, upper] == 0).all()  # causal: nothing from the future
        assert np.isneginf(scores[:, upper]).all() and np.isfinite(scores[:, ~upper]).all()
        q_name = "rot_q" if config.positional == "rope" else "q"
        k_name = "rot_k" if config.positional == "rope" else "k"
        q = trace[names.act_name(q_name, layer)]  # [pos, head, d_head]
        k = trace[names.act_name(k_name, layer)]
        v = trace[names.act_name("v", layer)]
        manual_scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(config.d_head)
        assert_close32(scores[:, ~upper], manual_scores[:, ~upper], scale=[np.abs(q).max() * np.abs(k).max() * config.d_head])
        assert_close32(trace[names.act_name("z", layer)], np.einsum("hqk,khd->qhd", pattern, v), scale=v, ulps=4 * n)
        pre = trace[names.act_name("resid_pre", layer)]
        mid = trace[names.act_name("resid_mid", layer)]
        post = trace[names.act_name("resid_post", layer)]
        assert_close32(mid, pre + trace[names.act_name("attn_out", layer)], ulps=4)
        assert_close32(post, mid + trace[names.act_name("mlp_out", layer)], ulps=4)
        normed = trace[names.act_name("ln1", layer)]  # at init gain = 1, bias = 0
        x = pre.astype(np.float64)
        if config.norm == "layernorm":
            centred = x - x.mean(-1, keepdims=True)
            manual = centred / np.sqrt((centred**2).mean(-1, keepdims=True) + config.eps)
        else:
            manual = x / np.sqrt((x**2).mean(-1, keepdims=True) + config.eps)
        np.testing.assert_allclose(normed, manual, atol=1e-5)
        if layer + 1 < config.n_layer:
            np.testing.assert_array_equal(post, trace[names.act_name("resid_pre", layer + 1)])
    last = trace[names.act_name("resid_post", config.n_layer - 1)]
    assert_close32(model.final_norm_and_unembed(last), logits, ulps=256)


def test_mlp_activations_match_their_formulas() -> None:
    _, gelu = build_model(GPTConfig.tiny(mlp="gelu")).run_with_trace(IDS)
    pre = gelu["blocks.0.mlp.hook_pre"].astype(np.float64)
    exact = 0.5 * pre * (1 + np.vectorize(math.erf)(pre / math.sqrt(2)))
    np.testing.assert_allclose(gelu["blocks.0.mlp.hook_post"], exact, atol=1e-6)

    _, tanh = build_model(GPTConfig.tiny(mlp="gelu_tanh")).run_with_trace(IDS)
    pre = tanh["blocks.0.mlp.hook_pre"].astype(np.float64)
    approx = 0.5 * pre * (1 + np.tanh(math.sqrt(2 / math.pi) * (pre + 0.044715 * pre**3)))
    np.testing.assert_allclose(tanh["blocks.0.mlp.hook_post"], approx, atol=1e-6)

    _, swiglu = build_model(GPTConfig.tiny(mlp="swiglu")).run_with_trace(IDS)
    gate = swiglu["blocks.1.mlp.hook_pre"].astype(np.float64)
    up = swiglu["blocks.1.mlp.hook_pre_linear"]
    np.testing.assert_allclose(swiglu["blocks.1.mlp.hook_post"], gate / (1 + np.exp(-gate)) * up, atol=1e-6)


def test_causal_prefix_gives_identical_results() -> None:
    # Position i sees only tokens <= i, so a shorter prompt reproduces the first rows exactly.
    model = build_model(GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu"), seed=5)
    long_logits, _ = model.run_with_trace(IDS)
    short_logits, _ = model.run_with_trace(IDS[:4])
    np.testing.assert_allclose(short_logits, long_logits[:4], atol=1e-5)


def test_batch_rows_equal_single_runs() -> None:
    model = build_model(GPTConfig.tiny(), seed=4)
    batch = np.array([[1, 2, 3, 4], [9, 8, 7, 6]])
    logits, trace = model.run_with_trace(batch)
    for row in range(2):
        single_logits, single = model.run_with_trace(batch[row])
        np.testing.assert_allclose(logits[row], single_logits, atol=1e-5)
        np.testing.assert_allclose(trace["blocks.1.attn.hook_pattern"][row], single["blocks.1.attn.hook_pattern"], atol=1e-6)


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ([], "empty"),
        ([1, 50], "outside the vocabulary"),
        ([-1, 2], "outside the vocabulary"),
        (list(range(33)), "exceed the context window of 32"),
        ([1.5, 2.0], "must be integers"),
        ([True, False], "must be integers"),
        ("hello", "encode text"),
        (b"\x00\x01", "encode text"),
        (np.zeros((1, 2, 3), dtype=int), "1-D"),
        ([[1, 2], [3]], "rectangular|integers"),
        ([None], "must be integers"),
    ],
)
def test_bad_token_ids_raise_clear_errors(ids: object, message: str) -> None:
    model = build_model(GPTConfig.tiny())
    with pytest.raises(ValueError, match=message):
        model.run_with_trace(ids)


def test_trace_refuses_a_huge_batch() -> None:
    model = build_model(GPTConfig.tiny())
    with pytest.raises(ValueError, match="at most 64 prompts"):
        model.run_with_trace(np.zeros((65, 3), dtype=int))
    assert model.logits(np.zeros((65, 3), dtype=int)).shape == (65, 3, 50)  # the plain forward is fine


def test_final_norm_and_unembed_validates_its_input() -> None:
    model = build_model(GPTConfig.tiny())
    with pytest.raises(ValueError, match="d_model=16"):
        model.final_norm_and_unembed(np.zeros((3, 15)))
    with pytest.raises(ValueError, match="NaN"):
        model.final_norm_and_unembed(np.full(16, np.nan))
    assert model.final_norm_and_unembed(np.zeros(16)).shape == (50,)


def test_tied_embedding_is_one_tensor_and_accessors_return_copies() -> None:
    model = build_model(GPTConfig.tiny())
    assert model.lm_head.weight is model.wte.weight
    table = model.embedding_matrix()
    table[:] = 0
    assert model.wte.weight.abs().sum() > 0


# --- no run state, thread safety -------------------------------------------------------------


def _module_state(model: nn.Module) -> list[tuple[str, tuple[str, ...], int]]:
    return [
        (name, tuple(sorted(vars(module))), len(module._forward_hooks) + len(module._forward_pre_hooks))
        for name, module in model.named_modules()
    ]


def test_run_with_trace_leaves_no_state_on_the_modules() -> None:
    model = build_model(GPTConfig.tiny(positional="rope")).eval()
    before_state = {k: v.clone() for k, v in model.state_dict().items()}
    before_modules = _module_state(model)
    model.run_with_trace(IDS)
    model.run_with_trace(IDS[:3])
    assert _module_state(model) == before_modules
    for key, value in model.state_dict().items():
        assert torch.equal(value, before_state[key])


def test_two_calls_return_independent_traces() -> None:
    model = build_model(GPTConfig.tiny())
    _, first = model.run_with_trace(IDS)
    snapshot = first["blocks.0.attn.hook_pattern"].copy()
    _, second = model.run_with_trace(IDS[::-1])
    np.testing.assert_array_equal(first["blocks.0.attn.hook_pattern"], snapshot)
    assert second is not first


def test_concurrent_inference_from_8_threads_matches_serial() -> None:
    model = build_model(GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu"), seed=9).eval()
    rng = np.random.default_rng(0)
    prompts = [rng.integers(0, 50, size=int(rng.integers(2, 30))).tolist() for _ in range(32)]
    serial = [model.run_with_trace(p) for p in prompts]
    results: dict[int, tuple] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(worker_id: int) -> None:
        try:
            barrier.wait()
            for index in range(worker_id, len(prompts), 8):
                results[index] = model.run_with_trace(prompts[index])
        except BaseException as err:  # pragma: no cover - surfaced below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for index, (logits, trace) in enumerate(serial):
        threaded_logits, threaded_trace = results[index]
        np.testing.assert_array_equal(threaded_logits, logits)
        assert list(threaded_trace) == list(trace)
        for name in trace:
            np.testing.assert_array_equal(threaded_trace[name], trace[name])


# --- reference implementation: Llama (RoPE + RMSNorm + SwiGLU) ------------------------------------


def _meta_to_hf_rope(weight: torch.Tensor, n_head: int) -> torch.Tensor:
    """Our RoPE pairs (2i, 2i+1) like Meta's code; HF Llama pairs (i, i + d_head/2). Permute rows."""
    d_out, d_in = weight.shape
    return weight.view(n_head, d_out // n_head // 2, 2, d_in).transpose(1, 2).reshape(d_out, d_in)


def test_modern_variant_matches_transformers_llama() -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu", bias=False, d_mlp=40)
    ours = build_model(config, seed=11).eval()
    with torch.no_grad():  # larger, non-trivial weights so a mismatch cannot hide in tiny logits
        for name, param in ours.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                param.copy_(1.0 + 0.3 * torch.randn_like(param))  # gains near 1, not near 0
            else:
                param.normal_(0.0, 0.5)
    hf_config = LlamaConfig(
        hidden_size=16, intermediate_size=40, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=2,
        vocab_size=50, max_position_embeddings=32, rms_norm_eps=config.eps, tie_word_embeddings=True,
        attention_bias=False, mlp_bias=False, rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    reference = LlamaForCausalLM(hf_config).eval()
    state = {"model.embed_tokens.weight": ours.wte.weight, "model.norm.weight": ours.ln_f.weight}  # copied to CPU below
    for i, block in enumerate(ours.h):
        q, k, v = block.attn.c_attn.weight.split(16, dim=0)
        prefix = f"model.layers.{i}."
        state |= {
            prefix + "self_attn.q_proj.weight": _meta_to_hf_rope(q, 2),
            prefix + "self_attn.k_proj.weight": _meta_to_hf_rope(k, 2),
            prefix + "self_attn.v_proj.weight": v,
            prefix + "self_attn.o_proj.weight": block.attn.c_proj.weight,
            prefix + "mlp.gate_proj.weight": block.mlp.c_gate.weight,
            prefix + "mlp.up_proj.weight": block.mlp.c_fc.weight,
            prefix + "mlp.down_proj.weight": block.mlp.c_proj.weight,
            prefix + "input_layernorm.weight": block.ln_1.weight,
            prefix + "post_attention_layernorm.weight": block.ln_2.weight,
        }
    missing, unexpected = reference.load_state_dict({k: v.detach().cpu().clone() for k, v in state.items()}, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}
    logits, _ = ours.run_with_trace(IDS)
    with torch.no_grad():
        expected = reference(torch.tensor([IDS])).logits[0].numpy()
    assert np.abs(logits).max() > 1.0
    np.testing.assert_allclose(logits, expected, atol=1e-4)


def test_state_mismatch_names_missing_unexpected_and_wrong_shapes() -> None:
    from core.engine.model import state_mismatch

    model = build_model(GPTConfig(n_layer=1, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50), device="cpu")
    state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}  # tied: stored once
    assert not state_mismatch(model, state)
    del state["h.0.mlp.c_fc.bias"]
    state["extra.weight"] = torch.zeros(1)
    state["h.0.ln_1.weight"] = torch.zeros(15)
    found = state_mismatch(model, state)
    assert found and found.missing == ["h.0.mlp.c_fc.bias"] and found.unexpected == ["extra.weight"]
    assert found.wrong_shape == ("h.0.ln_1.weight", (15,), (16,))
