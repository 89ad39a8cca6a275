"""Golden test: the full ordered list of trace names and each declared shape."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from core.engine import names
from core.engine.model import GPTConfig, build_model

torch.set_num_threads(1)

N_POS = 5
TINY = GPTConfig.tiny()  # learned positions, LayerNorm, GELU; 2 layers, 2 heads, d_model 16

# (name, shape) for a 5-token prompt: d_model 16, 2 heads of 8, d_mlp 64, vocab 50.
GOLDEN: list[tuple[str, tuple[int, ...]]] = [
    ("hook_tokens", (5,)),
    ("hook_embed", (5, 16)),
    ("hook_pos_embed", (5, 16)),
    ("blocks.0.hook_resid_pre", (5, 16)),
    ("blocks.0.ln1.hook_normalized", (5, 16)),
    ("blocks.0.attn.hook_q", (5, 2, 8)),
    ("blocks.0.attn.hook_k", (5, 2, 8)),
    ("blocks.0.attn.hook_v", (5, 2, 8)),
    ("blocks.0.attn.hook_attn_scores", (2, 5, 5)),
    ("blocks.0.attn.hook_pattern", (2, 5, 5)),
    ("blocks.0.attn.hook_z", (5, 2, 8)),
    ("blocks.0.hook_attn_out", (5, 16)),
    ("blocks.0.hook_resid_mid", (5, 16)),
    ("blocks.0.ln2.hook_normalized", (5, 16)),
    ("blocks.0.mlp.hook_pre", (5, 64)),
    ("blocks.0.mlp.hook_post", (5, 64)),
    ("blocks.0.hook_mlp_out", (5, 16)),
    ("blocks.0.hook_resid_post", (5, 16)),
    ("blocks.1.hook_resid_pre", (5, 16)),
    ("blocks.1.ln1.hook_normalized", (5, 16)),
    ("blocks.1.attn.hook_q", (5, 2, 8)),
    ("blocks.1.attn.hook_k", (5, 2, 8)),
    ("blocks.1.attn.hook_v", (5, 2, 8)),
    ("blocks.1.attn.hook_attn_scores", (2, 5, 5)),
    ("blocks.1.attn.hook_pattern", (2, 5, 5)),
    ("blocks.1.attn.hook_z", (5, 2, 8)),
    ("blocks.1.hook_attn_out", (5, 16)),
    ("blocks.1.hook_resid_mid", (5, 16)),
    ("blocks.1.ln2.hook_normalized", (5, 16)),
    ("blocks.1.mlp.hook_pre", (5, 64)),
    ("blocks.1.mlp.hook_post", (5, 64)),
    ("blocks.1.hook_mlp_out", (5, 16)),
    ("blocks.1.hook_resid_post", (5, 16)),
    ("ln_final.hook_normalized", (5, 16)),
    ("unembed.hook_out", (5, 50)),
]


def test_golden_ordered_names_and_shapes_of_the_tiny_fixture() -> None:
    model = build_model(TINY).eval()
    _, trace = model.run_with_trace([3, 1, 4, 1, 5])
    assert [(name, value.shape) for name, value in trace.items()] == GOLDEN
    assert names.expected_names(TINY) == [name for name, _ in GOLDEN]
    assert names.expected_shapes(TINY, N_POS) == dict(GOLDEN)


def test_rope_drops_pos_embed_and_adds_rotated_q_k() -> None:
    config = GPTConfig.tiny(positional="rope")
    expected = names.expected_names(config)
    assert "hook_pos_embed" not in expected
    block0 = names.block_names(config, 0)
    assert block0[4:8] == [
        "blocks.0.attn.hook_v",
        "blocks.0.attn.hook_rot_q",
        "blocks.0.attn.hook_rot_k",
        "blocks.0.attn.hook_attn_scores",
    ]


def test_swiglu_adds_pre_linear_between_pre_and_post() -> None:
    config = GPTConfig.tiny(mlp="swiglu")
    block0 = names.block_names(config, 0)
    i = block0.index("blocks.0.mlp.hook_pre")
    assert block0[i : i + 3] == ["blocks.0.mlp.hook_pre", "blocks.0.mlp.hook_pre_linear", "blocks.0.mlp.hook_post"]


@pytest.mark.parametrize(
    ("positional", "norm", "mlp"),
    list(itertools.product(["learned", "sinusoidal", "rope"], ["layernorm", "rmsnorm"], ["gelu", "gelu_tanh", "swiglu"])),
)
def test_every_variant_produces_exactly_its_expected_names_and_shapes(positional: str, norm: str, mlp: str) -> None:
    config = GPTConfig.tiny(positional=positional, norm=norm, mlp=mlp)
    _, trace = build_model(config).eval().run_with_trace(np.arange(7) % 50)
    assert list(trace) == names.expected_names(config)
    shapes = names.expected_shapes(config, 7)
    assert {name: value.shape for name, value in trace.items()} == shapes


def test_batched_trace_keeps_the_batch_dimension() -> None:
    model = build_model(TINY).eval()
    _, trace = model.run_with_trace([[1, 2, 3], [4, 5, 6]])
    for name, shape in names.expected_shapes(TINY, 3).items():
        assert trace[name].shape == (2, *shape), name


@pytest.mark.parametrize(
    ("kind", "layer", "expected"),
    [
        ("pattern", 3, "blocks.3.attn.hook_pattern"),
        ("attn_scores", 0, "blocks.0.attn.hook_attn_scores"),
        ("resid_pre", 1, "blocks.1.hook_resid_pre"),
        ("ln1", 2, "blocks.2.ln1.hook_normalized"),
        ("pre", 0, "blocks.0.mlp.hook_pre"),
        ("rot_k", 1, "blocks.1.attn.hook_rot_k"),
        ("embed", None, "hook_embed"),
        ("ln_final", None, "ln_final.hook_normalized"),
        ("logits", None, "unembed.hook_out"),
    ],
)
def test_act_name_builds_the_documented_names(kind: str, layer: int | None, expected: str) -> None:
    assert names.act_name(kind, layer=layer) == expected


def test_act_name_rejects_wrong_usage_with_clear_messages() -> None:
    with pytest.raises(ValueError, match="pass layer="):
        names.act_name("pattern")
    with pytest.raises(ValueError, match="not inside a block"):
        names.act_name("embed", layer=0)
    with pytest.raises(ValueError, match="unknown activation kind 'patern'"):
        names.act_name("patern", layer=0)
    with pytest.raises(ValueError, match="non-negative int"):
        names.act_name("pattern", layer=-1)
    with pytest.raises(ValueError, match="non-negative int"):
        names.act_name("pattern", layer=True)
