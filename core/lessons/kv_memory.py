"""How much memory a KV cache takes, and how sharing K/V heads (GQA, MQA) shrinks it.

During generation every layer keeps the keys and values of every token seen so far, for
every key/value head. Per layer that is

    bytes = 2 (K and V) × batch × tokens × kv_heads × head_dim × bytes_per_number

and the whole cache is that times the number of layers. The seeds' worked example (a
Llama-4-Scout-like model: 48 layers, 8 KV heads of width 128, 10,000 tokens, fp16):

    2 × 1 × 10,000 × 8 × 128 × 2 bytes = 40,960,000 bytes = 40.96 MB per layer
    48 × 40.96 MB = 1,966,080,000 bytes ≈ 1.97 GB in total

Units are decimal, as in the seeds: 1 MB = 10^6 bytes, 1 GB = 10^9 bytes (the same total
is 1.83 GiB in binary units). Sizes are kept as exact integers of bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Bits per stored number. Every entry is a multiple of 4, so 2 (K and V) × bits is a whole
# number of bytes and all sizes below stay exact integers.
DTYPE_BITS: dict[str, int] = {"fp32": 32, "fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4}

# Upper bounds that catch typos (a context of 10^12 tokens) long before Python's integers
# could make anything slow; real models sit far below every one of them.
MAX_LAYERS = 10_000
MAX_HEADS = 100_000
MAX_HEAD_DIM = 100_000
MAX_TOKENS = 1_000_000_000
MAX_BATCH = 1_000_000

_DECIMAL_UNITS: tuple[tuple[str, int], ...] = (
    ("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3),
)


def _check_count(name: str, value: object, upper: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not 1 <= value <= upper:
        raise ValueError(f"{name} must be between 1 and {upper:,}, got {value:,}")
    return value


def _check_dtype(dtype: object) -> int:
    if dtype not in DTYPE_BITS:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPE_BITS)}")
    return DTYPE_BITS[dtype]  # type: ignore[index]


@dataclass(frozen=True)
class KVCacheMemory:
    """The size of one KV cache, in exact bytes."""

    n_layer: int
    n_kv_head: int
    d_head: int
    n_tokens: int
    batch: int
    dtype: str
    bytes_per_token_per_layer: int  # K and V of one token in one layer (batch 1)
    bytes_per_layer: int
    total_bytes: int

    @property
    def bytes_per_token(self) -> int:
        """What one more token adds to the cache across all layers (batch 1)."""
        return self.bytes_per_token_per_layer * self.n_layer


def kv_cache_memory(
    n_layer: int,
    n_kv_head: int,
    d_head: int,
    n_tokens: int,
    batch: int = 1,
    dtype: str = "fp16",
) -> KVCacheMemory:
    """Bytes a KV cache needs per layer and in total.

    Example: kv_cache_memory(48, 8, 128, 10_000).bytes_per_layer -> 40960000
    """
    _check_count("layers", n_layer, MAX_LAYERS)
    _check_count("KV heads", n_kv_head, MAX_HEADS)
    _check_count("head dimension", d_head, MAX_HEAD_DIM)
    _check_count("context length (tokens)", n_tokens, MAX_TOKENS)
    _check_count("batch size", batch, MAX_BATCH)
    bits = _check_dtype(dtype)
    per_token_per_layer = 2 * n_kv_head * d_head * bits // 8  # K and V: the leading 2
    per_layer = batch * n_tokens * per_token_per_layer
    return KVCacheMemory(
        n_layer=n_layer,
        n_kv_head=n_kv_head,
        d_head=d_head,
        n_tokens=n_tokens,
        batch=batch,
        dtype=dtype,
        bytes_per_token_per_layer=per_token_per_layer,
        bytes_per_layer=per_layer,
        total_bytes=n_layer * per_layer,
    )


def format_bytes(n_bytes: int | float, digits: int = 2) -> str:
    """Decimal units as the seeds write them (1 MB = 1,000,000 bytes).

    Example: format_bytes(40_960_000) -> "40.96 MB"
    """
    if isinstance(n_bytes, bool) or not isinstance(n_bytes, (int, float)) or n_bytes != n_bytes or n_bytes < 0:
        raise ValueError(f"a byte count must be a non-negative number, got {n_bytes!r}")
    for unit, size in _DECIMAL_UNITS:
        if n_bytes >= size:
            return f"{n_bytes / size:.{digits}f} {unit}"
    return f"{n_bytes:g} B"


# --- the models the seeds tabulate ----------------------------------------------------------


@dataclass(frozen=True)
class ModelPreset:
    """Attention sizes of a well-known model, as the seeds' tables give them."""

    key: str
    name: str
    n_layer: int
    n_head: int  # query heads
    n_kv_head: int  # heads that store K and V (= n_head for classic multi-head attention)
    d_head: int
    n_tokens: int  # context used for the example

    @property
    def sharing(self) -> str:
        """"MHA", "GQA" or "MQA": how many query heads share one K/V head."""
        return head_sharing_kind(self.n_head, self.n_kv_head)


MODEL_PRESETS: dict[str, ModelPreset] = {
    p.key: p
    for p in (
        # GPT-2 small: 12 layers, d_model 768 = 12 heads × 64, context 1024.
        ModelPreset("gpt2_small", "GPT-2 small", 12, 12, 12, 64, 1024),
        # LLaMA-7B: 32 layers, d_model 4096 = 32 heads × 128, context 2048.
        ModelPreset("llama_7b", "LLaMA-7B", 32, 32, 32, 128, 2048),
        # The seeds' worked example: Llama-4-Scout-like, 40 query heads share 8 K/V heads.
        ModelPreset("llama4_scout_like", "Llama-4-Scout-like", 48, 40, 8, 128, 10_000),
        # DeepSeek-V4-Flash-style as the seeds simplify it: 43 layers, 64 query heads of
        # width 4096 / 64 = 64, one shared K/V head (the real model compresses K/V further).
        ModelPreset("deepseek_style", "DeepSeek-style (1 KV head)", 43, 64, 1, 64, 10_000),
    )
}
DEFAULT_PRESET = "llama4_scout_like"


def head_sharing_kind(n_head: int, n_kv_head: int) -> str:
    """Name the attention layout from its head counts.

    Example: head_sharing_kind(40, 8) -> "GQA"
    """
    _check_count("query heads", n_head, MAX_HEADS)
    _check_count("KV heads", n_kv_head, MAX_HEADS)
    if n_kv_head > n_head or n_head % n_kv_head:
        raise ValueError(
            f"{n_head} query heads cannot share {n_kv_head} K/V heads evenly; "
            "the query heads must be a whole multiple of the K/V heads"
        )
    if n_kv_head == n_head:
        return "MHA"
    return "MQA" if n_kv_head == 1 else "GQA"


@dataclass(frozen=True)
class SharingVariant:
    """One row of the MHA / GQA / MQA comparison."""

    kind: str  # "MHA", "GQA" or "MQA"
    n_kv_head: int
    queries_per_kv_head: int
    memory: KVCacheMemory
    saving_vs_mha: float  # MHA bytes / this variant's bytes (1.0 for MHA)


def gqa_choices(n_head: int) -> list[int]:
    """K/V head counts that make a true GQA for n_head query heads (divisors between 1 and n_head).

    Example: gqa_choices(12) -> [2, 3, 4, 6]
    """
    _check_count("query heads", n_head, MAX_HEADS)
    return [d for d in range(2, n_head) if n_head % d == 0]


def compare_head_sharing(
    n_layer: int,
    n_head: int,
    gqa_kv_heads: int | None,
    d_head: int,
    n_tokens: int,
    batch: int = 1,
    dtype: str = "fp16",
) -> list[SharingVariant]:
    """The same model with every query head owning K/V (MHA), groups sharing (GQA), one shared (MQA).

    ``gqa_kv_heads=None`` leaves GQA out (a head count such as 7 has no group size between).

    Example: [v.saving_vs_mha for v in compare_head_sharing(48, 40, 8, 128, 10_000)] -> [1.0, 5.0, 40.0]
    """
    layouts: list[tuple[str, int]] = [("MHA", n_head)]
    if gqa_kv_heads is not None:
        if head_sharing_kind(n_head, gqa_kv_heads) != "GQA":  # also checks the groups divide evenly
            raise ValueError(
                f"GQA needs between 2 and {n_head - 1} K/V heads dividing {n_head}, got {gqa_kv_heads}"
            )
        layouts.append(("GQA", gqa_kv_heads))
    if n_head > 1:
        layouts.append(("MQA", 1))
    mha = kv_cache_memory(n_layer, n_head, d_head, n_tokens, batch, dtype)
    variants = []
    for name, kv_heads in layouts:
        memory = kv_cache_memory(n_layer, kv_heads, d_head, n_tokens, batch, dtype)
        variants.append(
            SharingVariant(
                kind=name,
                n_kv_head=kv_heads,
                queries_per_kv_head=n_head // kv_heads,
                memory=memory,
                saving_vs_mha=mha.total_bytes / memory.total_bytes,
            )
        )
    return variants


def total_bytes_by_context(
    n_layer: int,
    n_kv_head: int,
    d_head: int,
    contexts: Sequence[int],
    batch: int = 1,
    dtype: str = "fp16",
) -> list[int]:
    """Total cache bytes at each context length: the cache grows linearly with the tokens.

    Example: total_bytes_by_context(48, 8, 128, [10_000, 100_000]) -> [1966080000, 19660800000]
    """
    return [kv_cache_memory(n_layer, n_kv_head, d_head, n, batch, dtype).total_bytes for n in contexts]


def default_contexts(n_tokens: int, points: int = 9) -> list[int]:
    """Context lengths from 1/8 to 8× the chosen one (doubling), for the growth chart.

    Example: default_contexts(1000, 3) -> [500, 1000, 2000]
    """
    _check_count("context length (tokens)", n_tokens, MAX_TOKENS)
    half = points // 2
    lengths = [round(n_tokens * 2.0**step) for step in range(-half, points - half)]
    return [n for n in lengths if 1 <= n <= MAX_TOKENS]
