"""core.lessons.param_count: presets exact, our models equal sum(p.numel()), transformers agrees on meta."""

from __future__ import annotations

import pytest
import torch

import core
from core.lessons.param_count import (
    PRESETS,
    ArchSpec,
    count_parameters,
    hand_count_gpt2_small,
    spec_from_config,
    with_changes,
)


@pytest.mark.parametrize("name", ["classic", "modern"])
def test_our_models(name: str) -> None:
    loaded = core.load_builtin(name)
    counted = count_parameters(spec_from_config(loaded.config))
    assert counted.total == sum(p.numel() for p in loaded.model.parameters())
    parts = loaded.model.parameter_counts()
    assert counted.components["attention"] == parts["attention"]
    assert counted.components["ffn"] == parts["mlp"]


def test_published_totals() -> None:
    for name, preset in PRESETS.items():
        if preset.published is not None:
            assert count_parameters(preset.spec).total == preset.published, name
    assert count_parameters(PRESETS["gpt2-small"].spec).total == 124_439_808
    assert count_parameters(PRESETS["llama-7b"].spec).total == 6_738_415_616
    assert count_parameters(PRESETS["llama3-8b"].spec).total == 8_030_261_248
    gpt3 = count_parameters(PRESETS["gpt3-175b"].spec).total
    assert 174e9 < gpt3 < 176e9


@pytest.mark.parametrize("name", ["gpt2-small", "gpt2-medium", "gpt2-xl"])
def test_gpt2_against_transformers_on_meta(name: str) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    spec = PRESETS[name].spec
    config = GPT2Config(vocab_size=spec.vocab, n_positions=spec.n_ctx, n_embd=spec.d_model, n_layer=spec.n_layer,
                        n_head=spec.n_head)
    with torch.device("meta"):
        model = GPT2LMHeadModel(config)
    assert sum(p.numel() for p in model.parameters()) == count_parameters(spec).total


@pytest.mark.parametrize("name", ["llama-7b", "llama3-8b"])
def test_llama_against_transformers_on_meta(name: str) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    spec = PRESETS[name].spec
    config = LlamaConfig(vocab_size=spec.vocab, hidden_size=spec.d_model, intermediate_size=spec.d_ff,
                         num_hidden_layers=spec.n_layer, num_attention_heads=spec.n_head,
                         num_key_value_heads=spec.n_kv_head, max_position_embeddings=spec.n_ctx,
                         tie_word_embeddings=False)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    assert sum(p.numel() for p in model.parameters()) == count_parameters(spec).total


def test_gpt2_small_components_and_hand_count() -> None:
    count = count_parameters(PRESETS["gpt2-small"].spec)
    assert count.components["token_embedding"] == 50257 * 768 == 38_597_376
    assert count.components["position_embedding"] == 1024 * 768
    assert count.per_layer["attention"] == 4 * 768 * 768 + 4 * 768
    assert count.per_layer["ffn"] == 2 * 768 * 3072 + 3072 + 768
    assert hand_count_gpt2_small() == pytest.approx(124_494_000)
    assert abs(hand_count_gpt2_small() - count.total) / count.total < 0.001
    assert 0.6 < count.components["ffn"] / (count.components["ffn"] + count.components["attention"]) < 0.7


def test_moe_and_gqa() -> None:
    dense = PRESETS["llama3-8b"].spec
    mha = count_parameters(with_changes(dense, n_kv_head=32))
    assert mha.total - count_parameters(dense).total == 32 * 2 * 4096 * (4096 - 1024)
    moe = with_changes(dense, n_experts=8, n_active=2)
    c = count_parameters(moe)
    one_ffn = 3 * 4096 * 14336
    assert c.components["ffn"] == 8 * one_ffn * 32
    assert c.components["router"] == 4096 * 8 * 32
    assert c.total - c.active == 6 * one_ffn * 32
    assert count_parameters(dense).active == count_parameters(dense).total


@pytest.mark.parametrize("changes", [dict(n_head=7), dict(n_kv_head=5), dict(n_active=9, n_experts=8),
                                     dict(norm="batchnorm"), dict(vocab=0), dict(d_ff=True)])
def test_bad_specs(changes: dict) -> None:
    with pytest.raises(ValueError):
        with_changes(PRESETS["llama3-8b"].spec, **changes)
    assert isinstance(PRESETS["gpt2-small"].spec, ArchSpec)


def test_reported_in_english() -> None:
    from core.lessons.param_count import TEXTBOOK_TABLE, reported_in_english

    assert reported_in_english("1.24 亿") == "124 M"
    assert reported_in_english("1,750 亿") == "175 B"
    assert reported_in_english("~130 亿") == "~13 B"
    assert reported_in_english("1.6 万亿") == "1.6 T"
    assert reported_in_english("—") == "—"
    assert all("亿" not in reported_in_english(r.total) for r in TEXTBOOK_TABLE)
