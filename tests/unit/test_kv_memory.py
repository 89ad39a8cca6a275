"""KV-cache memory against the seeds' worked example and hand-computed presets."""

from __future__ import annotations

import pytest

from core.lessons.kv_memory import (
    DEFAULT_PRESET,
    MODEL_PRESETS,
    compare_head_sharing,
    default_contexts,
    format_bytes,
    gqa_choices,
    head_sharing_kind,
    kv_cache_memory,
    total_bytes_by_context,
)


def test_seed_example_per_layer_and_total() -> None:
    # Seeds: 2 × 1 × 10000 × 8 × 128 × 2 bytes (FP16) = 40.96 MB; 48 layers ≈ 1.97 GB.
    memory = kv_cache_memory(n_layer=48, n_kv_head=8, d_head=128, n_tokens=10_000, batch=1, dtype="fp16")
    assert memory.bytes_per_layer == 2 * 1 * 10_000 * 8 * 128 * 2 == 40_960_000
    assert memory.total_bytes == 48 * 40_960_000 == 1_966_080_000
    assert format_bytes(memory.bytes_per_layer) == "40.96 MB"
    assert format_bytes(memory.total_bytes) == "1.97 GB"
    assert memory.bytes_per_token_per_layer == 4096
    assert memory.bytes_per_token == 48 * 4096


def test_seed_long_context_is_close_to_20_gb_and_batch_doubles() -> None:
    long = kv_cache_memory(48, 8, 128, 100_000)
    assert format_bytes(long.total_bytes) == "19.66 GB"  # "接近 20 GB"
    assert kv_cache_memory(48, 8, 128, 100_000, batch=2).total_bytes == 2 * long.total_bytes


def test_default_preset_is_the_seed_example() -> None:
    preset = MODEL_PRESETS[DEFAULT_PRESET]
    assert (preset.n_layer, preset.n_head, preset.n_kv_head, preset.d_head, preset.n_tokens) == (48, 40, 8, 128, 10_000)
    assert preset.sharing == "GQA"


@pytest.mark.parametrize(
    ("key", "per_layer", "sharing"),
    [
        ("gpt2_small", 2 * 1024 * 12 * 64 * 2, "MHA"),  # 3,145,728 bytes
        ("llama_7b", 2 * 2048 * 32 * 128 * 2, "MHA"),  # 33,554,432 bytes
        ("deepseek_style", 2 * 10_000 * 1 * 64 * 2, "MQA"),
    ],
)
def test_presets_by_hand(key: str, per_layer: int, sharing: str) -> None:
    p = MODEL_PRESETS[key]
    memory = kv_cache_memory(p.n_layer, p.n_kv_head, p.d_head, p.n_tokens)
    assert memory.bytes_per_layer == per_layer
    assert memory.total_bytes == p.n_layer * per_layer
    assert p.sharing == sharing


def test_llama_7b_full_context_is_exactly_one_gib() -> None:
    memory = kv_cache_memory(32, 32, 128, 2048)
    assert memory.total_bytes == 2**30
    assert format_bytes(memory.total_bytes) == "1.07 GB"  # decimal units, not GiB


@pytest.mark.parametrize(("dtype", "factor"), [("fp32", 2.0), ("bf16", 1.0), ("fp8", 0.5), ("int8", 0.5), ("int4", 0.25)])
def test_dtype_scales_linearly(dtype: str, factor: float) -> None:
    fp16 = kv_cache_memory(4, 2, 16, 10).total_bytes
    assert kv_cache_memory(4, 2, 16, 10, dtype=dtype).total_bytes == fp16 * factor


def test_mha_gqa_mqa_comparison_for_the_seed_model() -> None:
    variants = compare_head_sharing(48, 40, 8, 128, 10_000)
    assert [v.kind for v in variants] == ["MHA", "GQA", "MQA"]
    assert [v.n_kv_head for v in variants] == [40, 8, 1]
    assert [v.queries_per_kv_head for v in variants] == [1, 5, 40]
    assert [v.saving_vs_mha for v in variants] == [1.0, 5.0, 40.0]
    assert [format_bytes(v.memory.total_bytes) for v in variants] == ["9.83 GB", "1.97 GB", "245.76 MB"]


def test_comparison_without_gqa_and_single_head() -> None:
    assert [v.kind for v in compare_head_sharing(12, 7, None, 64, 100)] == ["MHA", "MQA"]
    assert [v.kind for v in compare_head_sharing(12, 1, None, 64, 100)] == ["MHA"]
    with pytest.raises(ValueError, match="GQA"):
        compare_head_sharing(12, 12, 12, 64, 100)
    with pytest.raises(ValueError, match="evenly"):
        compare_head_sharing(12, 12, 5, 64, 100)


def test_head_sharing_kind_and_gqa_choices() -> None:
    assert head_sharing_kind(12, 12) == "MHA"
    assert head_sharing_kind(40, 8) == "GQA"
    assert head_sharing_kind(64, 1) == "MQA"
    assert gqa_choices(12) == [2, 3, 4, 6]
    assert gqa_choices(7) == []
    with pytest.raises(ValueError):
        head_sharing_kind(8, 16)


def test_growth_is_linear_in_context() -> None:
    contexts = default_contexts(10_000)
    assert contexts[0] == 625 and contexts[-1] == 160_000 and 10_000 in contexts
    totals = total_bytes_by_context(48, 8, 128, contexts)
    assert all(total == 48 * 4096 * n for total, n in zip(totals, contexts))


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 B"), (999, "999 B"), (1000, "1.00 kB"), (3_145_728, "3.15 MB"), (10**12, "1.00 TB"), (2.5e15, "2.50 PB")],
)
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_layer": 0},
        {"n_layer": -3},
        {"n_kv_head": 1.5},
        {"d_head": True},
        {"n_tokens": 10**13},
        {"batch": "2"},
        {"dtype": "fp12"},
    ],
)
def test_bad_input_is_a_clear_error(kwargs: dict) -> None:
    args = {"n_layer": 48, "n_kv_head": 8, "d_head": 128, "n_tokens": 10_000, "batch": 1, "dtype": "fp16", **kwargs}
    with pytest.raises(ValueError) as err:
        kv_cache_memory(**args)
    assert str(err.value)


def test_format_bytes_refuses_nonsense() -> None:
    for bad in (-1, float("nan"), "10", None):
        with pytest.raises(ValueError):
            format_bytes(bad)  # type: ignore[arg-type]


def test_formula_matches_the_bytes_of_a_real_cache() -> None:
    from core.engine.generation import prefill
    from core.engine.model import GPTConfig, build_model

    cfg = GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50)
    _, cache = prefill(build_model(cfg, seed=0), [3, 1, 4, 1, 5])
    real = sum(k.numel() * k.element_size() + v.numel() * v.element_size() for k, v in cache.past)
    memory = kv_cache_memory(cfg.n_layer, cfg.n_head, cfg.d_head, 5, dtype="fp32")
    assert memory.total_bytes == real == 2 * 2 * 5 * 2 * 8 * 4
