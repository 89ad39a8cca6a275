"""Parameter counts from a config, component by component (the whole-model page's calculator).

``count_parameters(spec)`` follows the real layer shapes: Q and O are d x d, K and V are
d x (n_kv_head * d_head) (grouped-query attention when n_kv_head < n_head), a GELU FFN has two
matrices and a SwiGLU FFN three, LayerNorm has gamma and beta, RMSNorm gamma only, a tied LM
head reuses the token embedding, and an MoE layer holds n_experts FFNs (plus shared experts and
a router) of which n_active (+ shared) run per token. Checked against ``sum(p.numel())`` of our
models and of transformers' GPT-2 / Llama built on the meta device (tests/unit/test_param_count.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

PositionalKind = Literal["learned", "sinusoidal", "rope"]
NormKind = Literal["layernorm", "rmsnorm"]
FfnKind = Literal["gelu", "swiglu"]

COMPONENTS = ("token_embedding", "position_embedding", "attention", "ffn", "router", "norms", "lm_head")


@dataclass(frozen=True)
class ArchSpec:
    """Everything that decides a decoder-only transformer's parameter count."""

    vocab: int
    d_model: int
    n_layer: int
    n_head: int
    n_kv_head: int
    d_ff: int
    n_ctx: int
    positional: PositionalKind = "learned"
    norm: NormKind = "layernorm"
    ffn: FfnKind = "gelu"
    tied: bool = True
    bias: bool = True  # biases in every Linear (and LayerNorm's beta), as GPT-2
    n_experts: int = 1  # 1 = dense
    n_active: int = 1  # routed experts used per token
    n_shared: int = 0  # always-on shared experts (DeepSeek style)

    def __post_init__(self) -> None:
        for name in ("vocab", "d_model", "n_layer", "n_head", "n_kv_head", "d_ff", "n_ctx", "n_experts", "n_active"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if isinstance(self.n_shared, bool) or not isinstance(self.n_shared, int) or self.n_shared < 0:
            raise ValueError(f"n_shared must be an int >= 0, got {self.n_shared!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")
        if self.n_head % self.n_kv_head:
            raise ValueError(f"n_head ({self.n_head}) must be a multiple of n_kv_head ({self.n_kv_head})")
        if self.n_active > self.n_experts:
            raise ValueError(f"n_active ({self.n_active}) cannot exceed n_experts ({self.n_experts})")
        for name, kind in (("positional", PositionalKind), ("norm", NormKind), ("ffn", FfnKind)):
            if getattr(self, name) not in get_args(kind):
                raise ValueError(f"{name} must be one of {get_args(kind)}, got {getattr(self, name)!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_head


@dataclass(frozen=True)
class ParamCount:
    components: dict[str, int]  # COMPONENTS -> parameters (all layers)
    total: int
    active: int  # parameters used per token (MoE: only the chosen experts' FFNs)
    per_layer: dict[str, int]  # one layer: attention, ffn (all experts), router, norms

    def share(self, component: str) -> float:
        return self.components[component] / self.total


def _ffn_params(spec: ArchSpec) -> int:
    d, f, b = spec.d_model, spec.d_ff, int(spec.bias)
    if spec.ffn == "gelu":
        return d * f + f * b + f * d + d * b
    return 3 * d * f + (2 * f + d) * b


def count_parameters(spec: ArchSpec) -> ParamCount:
    """Per-component and total parameter counts.

    Example: count_parameters(PRESETS["gpt2-small"].spec).total -> 124439808
    """
    d, b = spec.d_model, int(spec.bias)
    kv = spec.n_kv_head * spec.d_head
    attention = d * d + 2 * d * kv + d * d + (d + 2 * kv + d) * b  # Q, K, V, O (+ biases)
    one_ffn = _ffn_params(spec)
    experts = spec.n_experts + spec.n_shared
    ffn = one_ffn * experts
    router = d * spec.n_experts if spec.n_experts > 1 else 0
    one_norm = d + (d if spec.norm == "layernorm" and spec.bias else 0)
    layer = {"attention": attention, "ffn": ffn, "router": router, "norms": 2 * one_norm}
    components = {
        "token_embedding": spec.vocab * d,
        "position_embedding": spec.n_ctx * d if spec.positional == "learned" else 0,
        "attention": attention * spec.n_layer,
        "ffn": ffn * spec.n_layer,
        "router": router * spec.n_layer,
        "norms": 2 * one_norm * spec.n_layer + one_norm,  # two per layer and the final one
        "lm_head": 0 if spec.tied else spec.vocab * d,
    }
    total = sum(components.values())
    unused = one_ffn * (spec.n_experts - spec.n_active) * spec.n_layer if spec.n_experts > 1 else 0
    return ParamCount(components, total, total - unused, layer)


def spec_from_config(config: Any) -> ArchSpec:
    """The ArchSpec of one of our GPTConfigs (core.engine.model)."""
    return ArchSpec(
        vocab=config.vocab_size, d_model=config.d_model, n_layer=config.n_layer, n_head=config.n_head,
        n_kv_head=getattr(config, "n_kv_head", None) or config.n_head, d_ff=config.d_mlp, n_ctx=config.n_ctx,
        positional=config.positional, norm=config.norm, ffn="swiglu" if config.mlp == "swiglu" else "gelu",
        tied=config.tie_embeddings, bias=config.bias,
    )


@dataclass(frozen=True)
class Preset:
    spec: ArchSpec
    source: str  # where the architecture comes from
    published: int | None  # the exact count published (None: only a rounded figure exists)


_GPT2 = dict(vocab=50257, n_ctx=1024, positional="learned", norm="layernorm", ffn="gelu", tied=True, bias=True)
_LLAMA = dict(positional="rope", norm="rmsnorm", ffn="swiglu", tied=False, bias=False)

PRESETS: dict[str, Preset] = {
    "gpt2-small": Preset(ArchSpec(d_model=768, n_layer=12, n_head=12, n_kv_head=12, d_ff=3072, **_GPT2),
                         "GPT-2 (Radford et al. 2019), Hugging Face gpt2", 124_439_808),
    "gpt2-medium": Preset(ArchSpec(d_model=1024, n_layer=24, n_head=16, n_kv_head=16, d_ff=4096, **_GPT2),
                          "GPT-2 medium, Hugging Face gpt2-medium", 354_823_168),
    "gpt2-large": Preset(ArchSpec(d_model=1280, n_layer=36, n_head=20, n_kv_head=20, d_ff=5120, **_GPT2),
                         "GPT-2 large, Hugging Face gpt2-large", 774_030_080),
    "gpt2-xl": Preset(ArchSpec(d_model=1600, n_layer=48, n_head=25, n_kv_head=25, d_ff=6400, **_GPT2),
                      "GPT-2 XL, Hugging Face gpt2-xl", 1_557_611_200),
    "gpt3-175b": Preset(ArchSpec(vocab=50257, d_model=12288, n_layer=96, n_head=96, n_kv_head=96, d_ff=49152,
                                 n_ctx=2048, positional="learned", norm="layernorm", ffn="gelu", tied=True, bias=True),
                        "GPT-3 paper (Brown et al. 2020), table 2.1; the textbook's table: 1,750 亿", None),
    "llama-7b": Preset(ArchSpec(vocab=32000, d_model=4096, n_layer=32, n_head=32, n_kv_head=32, d_ff=11008,
                                n_ctx=2048, **_LLAMA),
                       "LLaMA (Touvron et al. 2023), Hugging Face LlamaConfig", 6_738_415_616),
    "llama3-8b": Preset(ArchSpec(vocab=128256, d_model=4096, n_layer=32, n_head=32, n_kv_head=8, d_ff=14336,
                                 n_ctx=8192, **_LLAMA),
                        "Llama 3 8B (Meta 2024), Hugging Face config", 8_030_261_248),
}


@dataclass(frozen=True)
class ReportedModel:
    """One row of the textbook's table: reported, not computed here (MoE details are not all public)."""

    name: str
    n_layer: str
    d_model: str
    n_head: str
    n_kv_head: str
    total: str
    active: str
    preset: str | None  # the PRESETS key that computes it, when we have the full config


# The textbook's table of layers / width / heads / KV heads (station 6), as printed there.
TEXTBOOK_TABLE: tuple[ReportedModel, ...] = (
    ReportedModel("GPT-2 Small (2019)", "12", "768", "12", "—", "1.24 亿", "1.24 亿", "gpt2-small"),
    ReportedModel("GPT-3 (2020)", "96", "12,288", "96", "—", "1,750 亿", "1,750 亿", "gpt3-175b"),
    ReportedModel("LLaMA-7B (2023)", "32", "4,096", "32", "—", "70 亿", "70 亿", "llama-7b"),
    ReportedModel("Llama 4 Scout (2026)", "48", "5,120", "40", "8", "1,090 亿", "170 亿", None),
    ReportedModel("DeepSeek V4 Flash (2026)", "43", "4,096", "64", "1", "2,840 亿", "~130 亿", None),
    ReportedModel("DeepSeek V4 Pro (2026)", "61", "7,168", "128", "1", "1.6 万亿", "~490 亿", None),
    ReportedModel("Kimi K3 (2026)", "?", "?", "?", "?", "2.8 万亿", "~500 亿", None),
)

# The textbook's MoE figures (station 6): total / experts / active per token / active params.
TEXTBOOK_MOE: tuple[tuple[str, float, int, str, float], ...] = (
    ("DeepSeek V4 Flash", 284e9, 256, "6 + 1", 13e9),
    ("Kimi K3", 2.8e12, 896, "16", 50e9),
)

# The textbook's hand count of GPT-2 small, in 万 (10^4): embeddings + 12 x (attention + FFN + LN).
HAND_COUNT_WAN = {"token_embedding": 3860.0, "position_embedding": 79.0, "attention": 236.0, "ffn": 472.0, "norms": 1.2}


def hand_count_gpt2_small() -> float:
    """3,860 万 + 79 万 + 12 x (236 万 + 472 万 + 1.2 万), in parameters (biases and ln_f left out, rounded)."""
    h = HAND_COUNT_WAN
    return 1e4 * (h["token_embedding"] + h["position_embedding"] + 12 * (h["attention"] + h["ffn"] + h["norms"]))


_CJK_UNITS = (("万亿", 1e12), ("亿", 1e8), ("万", 1e4))


def reported_in_english(text: str) -> str:
    """The textbook's Chinese magnitudes in English units: "1,750 亿" -> "175 B", "~130 亿" -> "~13 B".

    Anything without a Chinese unit (e.g. "?", "—") comes back unchanged.
    """
    for unit, scale in _CJK_UNITS:
        if text.endswith(unit):
            prefix = "~" if text.startswith("~") else ""
            value = float(text[len(prefix):-len(unit)].replace(",", "").strip()) * scale
            for name, size in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
                if value >= size:
                    return f"{prefix}{value / size:,.3g} {name}"
            return f"{prefix}{value:,.0f}"
    return text


def with_changes(spec: ArchSpec, **changes: Any) -> ArchSpec:
    """A copy with some fields changed (validated again)."""
    return replace(spec, **changes)
