"""A small decoder-only GPT that shows its work.

The whole model lives in this one file, nanoGPT style: a frozen config, a block (pre-norm
attention + MLP, each added back to the residual stream), and the model that stacks blocks
between an embedding and an unembedding. Parameter names follow the GPT-2 checkpoint
(``wte``, ``wpe``, ``h.{i}.attn.c_attn``, ``ln_f``, ``lm_head``) so GPT-2 weights load with a
transpose and nothing else (see ``core.foreign.gpt2``).

``GPT.run_with_trace(ids)`` returns the logits and every intermediate named in
``core.engine.names`` as numpy. The trace is a fresh dict made per call and handed back: nothing
about a run is stored on the modules, so one shared model can serve many threads at once.

Three generations of design are switchable, each a config field:
    positional: "learned" (GPT-2) | "sinusoidal" (Vaswani 2017) | "rope" (RoFormer, Llama)
    norm:       "layernorm" (GPT-2) | "rmsnorm" (Llama)
    mlp:        "gelu" | "gelu_tanh" (GPT-2's approximation) | "swiglu" (Llama)

Grouped-query / multi-query attention (``n_kv_head`` < ``n_head``): K and V have only
``n_kv_head`` heads, in the trace and in the KV cache; each K/V head serves n_head / n_kv_head
consecutive query heads, so patterns stay one per query head. Hugging Face Llama / Qwen2 /
Mistral checkpoints load into this same model (``core.foreign``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, Sequence, get_args

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.engine import device as devices
from core.engine import names

Positional = Literal["learned", "sinusoidal", "rope"]
NormKind = Literal["layernorm", "rmsnorm"]
MlpKind = Literal["gelu", "gelu_tanh", "swiglu"]

# One (key, value) pair per layer, each (batch, kv_head, pos, d_head): the KV cache.
PastKV = list[tuple[Tensor, Tensor]]


@dataclass(frozen=True)
class Ablation:
    """What to switch off in one ablated run (``GPT.run_with_trace(ids, ablate=...)``).

    heads: (layer, head) pairs whose write through W_O is removed; attn_layers / mlp_layers:
    layers whose whole attention / MLP output is zeroed; no_residual: layers whose two skip
    connections are removed (the block outputs attn(ln1(x)), then mlp(ln2(.)), without "+ x").
    The model's weights are never touched: the change lives in this one forward pass.

    Example: Ablation(heads=frozenset({(1, 2)}))
    """

    heads: frozenset[tuple[int, int]] = frozenset()
    attn_layers: frozenset[int] = frozenset()
    mlp_layers: frozenset[int] = frozenset()
    no_residual: frozenset[int] = frozenset()

    def is_empty(self) -> bool:
        return not (self.heads or self.attn_layers or self.mlp_layers or self.no_residual)

    def check(self, config: GPTConfig) -> None:
        """ValueError unless every layer and head exists in a model of this config."""
        layers = set(self.attn_layers) | set(self.mlp_layers) | set(self.no_residual) | {h[0] for h in self.heads}
        for layer in layers:
            if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < config.n_layer:
                raise ValueError(f"ablated layer {layer!r} is not in [0, {config.n_layer})")
        for _, head in self.heads:
            if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < config.n_head:
                raise ValueError(f"ablated head {head!r} is not in [0, {config.n_head})")

INIT_STD = 0.02  # GPT-2's initialisation scale for every weight matrix and embedding
MAX_TRACE_BATCH = 64  # run_with_trace keeps ~70 arrays per prompt; more prompts per call is a mistake


@dataclass(frozen=True)
class GPTConfig:
    """Every size and design choice of a model. Frozen: a config never changes under a model."""

    n_layer: int = 4  # four blocks: room to find a noun in one layer and copy it in a later one
    n_head: int = 4  # several heads, so the multi-head page has different heads to compare
    d_model: int = 128  # residual-stream width: small enough to train on two CPU cores in minutes
    d_mlp: int = 512  # the classic 4 x d_model hidden width of the MLP
    n_ctx: int = 128  # longest sequence; our templated sentences are much shorter
    vocab_size: int = 2048  # replaced by the tokenizer's vocabulary size when a model is trained
    positional: Positional = "learned"  # GPT-2's learned table; the alternatives are historical and modern
    rope_base: float = 10000.0  # RoPE's wavelength base, the value of the RoFormer paper and Llama
    norm: NormKind = "layernorm"  # GPT-2's LayerNorm; "rmsnorm" skips the mean subtraction
    mlp: MlpKind = "gelu"  # exact GELU; GPT-2 used the tanh approximation ("gelu_tanh")
    tie_embeddings: bool = True  # lm_head reuses wte ("weight tying"): fewer parameters, as in GPT-2
    scale_embeddings: bool = False  # x sqrt(d_model) on the way in (2017 paper), so sin/cos does not drown tokens
    bias: bool = True  # GPT-2 has biases in every Linear and LayerNorm; Llama-style models drop them
    eps: float = 1e-5  # normalisation epsilon (GPT-2's value), keeps the division finite
    # Grouped-query attention: how many heads keep their own K and V (None = n_head, classic
    # multi-head; 1 = multi-query). Query head h reads K/V head h // (n_head / n_kv_head).
    n_kv_head: int | None = None
    qkv_bias: bool | None = None  # bias on q/k/v only (Qwen2); None = follow ``bias``
    # Llama-3 RoPE frequency scaling: (factor, low_freq_factor, high_freq_factor,
    # original_max_position_embeddings), or None for plain RoPE.
    rope_llama3: tuple[float, float, float, int] | None = None

    def __post_init__(self) -> None:
        if self.n_kv_head is None:
            object.__setattr__(self, "n_kv_head", self.n_head)
        if self.qkv_bias is None:
            object.__setattr__(self, "qkv_bias", self.bias)
        if self.rope_llama3 is not None:
            object.__setattr__(self, "rope_llama3", tuple(self.rope_llama3))
        for name in ("n_layer", "n_head", "d_model", "d_mlp", "n_ctx", "vocab_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"GPTConfig.{name} must be a positive int, got {value!r}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_head ({self.n_head})")
        kv = self.n_kv_head
        if isinstance(kv, bool) or not isinstance(kv, int) or kv <= 0 or self.n_head % kv:
            raise ValueError(f"n_kv_head must be a positive int dividing n_head ({self.n_head}), got {kv!r}")
        if self.rope_llama3 is not None and (len(self.rope_llama3) != 4 or self.positional != "rope"):
            raise ValueError("rope_llama3 is (factor, low_freq_factor, high_freq_factor, original_max_positions), RoPE only")
        for name, kind in (("positional", Positional), ("norm", NormKind), ("mlp", MlpKind)):
            value = getattr(self, name)
            if value not in get_args(kind):
                raise ValueError(f"GPTConfig.{name} must be one of {get_args(kind)}, got {value!r}")
        if self.positional == "sinusoidal" and self.d_model % 2:
            raise ValueError("sinusoidal positions pair sin/cos dimensions: d_model must be even")
        if self.positional == "rope" and self.d_head % 2:
            raise ValueError("RoPE rotates pairs of dimensions: d_head (d_model / n_head) must be even")
        if not (self.rope_base > 1.0 and math.isfinite(self.rope_base)):
            raise ValueError(f"rope_base must be a finite number > 1, got {self.rope_base!r}")
        if not (0.0 < self.eps < 1.0):
            raise ValueError(f"eps must be in (0, 1), got {self.eps!r}")

    @property
    def d_head(self) -> int:
        """Width of one attention head."""
        return self.d_model // self.n_head

    @property
    def d_kv(self) -> int:
        """Width of all K (or all V) heads together: n_kv_head x d_head (= d_model without GQA)."""
        return self.n_kv_head * self.d_head

    @classmethod
    def gpt2_like(
        cls,
        n_layer: int = 12,
        n_head: int = 12,
        d_model: int = 768,
        n_ctx: int = 1024,
        vocab_size: int = 50257,
        d_mlp: int | None = None,
        eps: float = 1e-5,
    ) -> GPTConfig:
        """GPT-2's design (learned positions, LayerNorm, tanh-GELU, biases, tied); GPT-2 small by default.

        Example: GPTConfig.gpt2_like(n_layer=2, n_head=2, d_model=16, n_ctx=32, vocab_size=50)
        """
        return cls(
            n_layer=n_layer,
            n_head=n_head,
            d_model=d_model,
            d_mlp=4 * d_model if d_mlp is None else d_mlp,
            n_ctx=n_ctx,
            vocab_size=vocab_size,
            positional="learned",
            norm="layernorm",
            mlp="gelu_tanh",
            tie_embeddings=True,
            bias=True,
            eps=eps,
        )

    @classmethod
    def tiny(cls, **overrides: Any) -> GPTConfig:
        """The test and demo fixture: 2 layers, 2 heads, d_model 16, vocab 50, context 32.

        Example: GPTConfig.tiny(positional="rope").d_head -> 8
        """
        base: dict[str, Any] = dict(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50)
        return cls(**{**base, **overrides})

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (what ``config.json`` stores)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GPTConfig:
        """Inverse of ``to_dict``; unknown keys are an error so a typo never passes silently."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown GPTConfig fields: {unknown}")
        return cls(**data)


# --- positions ----------------------------------------------------------------------------


def sinusoidal_table(n_pos: int, d_model: int, base: float = 10000.0) -> Tensor:
    """The 2017 paper's table: PE[pos, 2k] = sin(pos / base^(2k/d)), PE[pos, 2k+1] = cos(...).

    Example: sinusoidal_table(4, 8)[3, :2] -> tensor([0.1411, -0.9900])
    """
    position = torch.arange(n_pos, dtype=torch.float64)[:, None]  # (pos, 1)
    two_k = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]  # (1, d_model/2)
    angle = position / base ** (two_k / d_model)  # (pos, d_model/2)
    table = torch.zeros(n_pos, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float()


def rope_inverse_frequencies(d_head: int, base: float = 10000.0) -> Tensor:
    """theta_i = base^(-2i/d_head): the angle per position of rotation pair i (i < d_head/2).

    Example: rope_inverse_frequencies(4) -> tensor([1.0000, 0.0100])
    """
    two_i = torch.arange(0, d_head, 2, dtype=torch.float64)  # (d_head/2,)
    return (base ** (-two_i / d_head)).float()


def llama3_scaled_frequencies(inv_freq: Tensor, scaling: tuple[float, float, float, int]) -> Tensor:
    """Llama 3's long-context RoPE: slow pairs turn ``factor`` times slower, fast pairs unchanged.

    Wavelengths longer than original_max / low_freq_factor are divided by ``factor``; shorter
    than original_max / high_freq_factor are kept; in between the two are blended (the
    ``"llama3"`` rope_type of Hugging Face ``transformers``).
    """
    factor, low_freq_factor, high_freq_factor, original_max = scaling
    freq = inv_freq.double()
    wavelen = 2 * math.pi / freq
    low_freq_wavelen = original_max / low_freq_factor
    high_freq_wavelen = original_max / high_freq_factor
    scaled = torch.where(wavelen > low_freq_wavelen, freq / factor, freq)
    smooth = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen)
    return torch.where(medium, blended, scaled).float()


def rope_frequencies(config: GPTConfig) -> Tensor:
    """The RoPE angle per position of every rotation pair of a head: theta_i, llama3-scaled when configured.

    Example: rope_frequencies(GPTConfig.tiny(positional="rope")).shape -> torch.Size([4])
    """
    inv_freq = rope_inverse_frequencies(config.d_head, config.rope_base)
    if config.rope_llama3 is not None:
        inv_freq = llama3_scaled_frequencies(inv_freq, config.rope_llama3)
    return inv_freq


def apply_rope(x: Tensor, positions: Tensor, inv_freq: Tensor) -> Tensor:
    """Rotate each pair (x[2i], x[2i+1]) by the angle positions * theta_i (RoFormer's pairing).

    x is (batch, head, pos, d_head). Rotating q and k by their own positions makes their dot
    product depend only on the distance between the two positions.
    """
    angle = positions.to(inv_freq.dtype)[:, None] * inv_freq[None, :]  # (pos, d_head/2)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)  # half precision stays half
    pairs = x.reshape(*x.shape[:-1], -1, 2)  # (batch, head, pos, d_head/2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]  # each (batch, head, pos, d_head/2)
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (batch, head, pos, d_head/2, 2)
    return rotated.reshape(x.shape)  # (batch, head, pos, d_head)


# --- building blocks ----------------------------------------------------------------------


def _keep(trace: dict[str, Tensor] | None, kind: str, layer: int | None, value: Tensor) -> None:
    """Record one intermediate under ``act_name(kind, layer)`` when a trace was asked for.

    Training and generation pass ``trace=None``: nothing is named or stored.
    """
    if trace is not None:
        trace[names.act_name(kind, layer)] = value


def make_norm(config: GPTConfig) -> nn.Module:
    """LayerNorm (subtract mean, divide by std, gain and bias) or RMSNorm (divide by RMS, gain)."""
    if config.norm == "layernorm":
        return nn.LayerNorm(config.d_model, eps=config.eps, bias=config.bias)
    return nn.RMSNorm(config.d_model, eps=config.eps)


class CausalSelfAttention(nn.Module):
    """Multi-head attention where each position reads only itself and earlier positions."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        # q (d_model), k and v (n_kv_head x d_head each) in one matmul
        self.c_attn = nn.Linear(config.d_model, config.d_model + 2 * config.d_kv, bias=config.qkv_bias)
        self.c_proj = nn.Linear(config.d_model, config.d_model, bias=config.bias)  # W_O: heads back to d_model
        if config.positional == "rope":
            self.register_buffer("rope_inv_freq", rope_frequencies(config), persistent=False)

    def forward(
        self,
        x: Tensor,
        positions: Tensor,
        past: tuple[Tensor, Tensor] | None,
        trace: dict[str, Tensor] | None,
        layer: int,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """x (batch, pos, d_model) -> (attention output (batch, pos, d_model), this layer's full K, V)."""
        cfg = self.config
        batch, n_new, _ = x.shape
        q, k, v = self.c_attn(x).split((cfg.d_model, cfg.d_kv, cfg.d_kv), dim=-1)  # (batch, pos, d_model | d_kv | d_kv)
        q = q.view(batch, n_new, cfg.n_head, cfg.d_head)  # (batch, pos, head, d_head)
        k = k.view(batch, n_new, cfg.n_kv_head, cfg.d_head)  # (batch, pos, kv_head, d_head)
        v = v.view(batch, n_new, cfg.n_kv_head, cfg.d_head)  # (batch, pos, kv_head, d_head)
        _keep(trace, "q", layer, q)
        _keep(trace, "k", layer, k)
        _keep(trace, "v", layer, v)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)  # each (batch, head, pos, d_head)
        if cfg.positional == "rope":
            q = apply_rope(q, positions, self.rope_inv_freq)
            k = apply_rope(k, positions, self.rope_inv_freq)
            _keep(trace, "rot_q", layer, q.transpose(1, 2))  # (batch, pos, head, d_head)
            _keep(trace, "rot_k", layer, k.transpose(1, 2))  # (batch, pos, head, d_head)
        if past is not None:  # the cache holds K, V of earlier positions, already rotated
            k = torch.cat((past[0], k), dim=2)  # (batch, head, past + pos, d_head)
            v = torch.cat((past[1], v), dim=2)  # (batch, head, past + pos, d_head)
        present = (k, v)  # the cache keeps only the n_kv_head K/V heads: that is GQA's saving
        key_positions = torch.arange(k.shape[2], device=x.device)
        allowed = key_positions[None, :] <= positions[:, None]  # (q_pos, k_pos): causal mask
        grouped = cfg.n_kv_head != cfg.n_head

        if trace is None:
            # Same maths through PyTorch's fused kernel: faster for training and generation.
            if past is None:  # no cache: the plain lower-triangular mask
                z = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=grouped)  # (batch, head, pos, d_head)
            else:
                z = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=grouped)  # (batch, head, pos, d_head)
        else:
            if grouped:  # each K/V head serves n_head / n_kv_head consecutive query heads
                repeat = cfg.n_head // cfg.n_kv_head
                k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)  # (batch, head, pos, d_head)
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(cfg.d_head)  # (batch, head, q_pos, k_pos)
            scores = scores.masked_fill(~allowed, float("-inf"))
            pattern = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)  # rows sum to 1 over the visible keys (float32 even for fp16 / bf16 weights)
            z = pattern @ v  # (batch, head, pos, d_head)
            _keep(trace, "attn_scores", layer, scores)
            _keep(trace, "pattern", layer, pattern)
        z = z.transpose(1, 2)  # (batch, pos, head, d_head)
        _keep(trace, "z", layer, z)
        out = self.c_proj(z.reshape(batch, n_new, cfg.d_model))  # (batch, pos, d_model)
        return out, present


class MLP(nn.Module):
    """Per-position feed-forward network: widen, apply a non-linearity, project back."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.kind = config.mlp
        if config.mlp == "swiglu":
            self.c_gate = nn.Linear(config.d_model, config.d_mlp, bias=config.bias)  # passes through SiLU
        self.c_fc = nn.Linear(config.d_model, config.d_mlp, bias=config.bias)  # GELU input / SwiGLU "up"
        self.c_proj = nn.Linear(config.d_mlp, config.d_model, bias=config.bias)

    def forward(self, x: Tensor, trace: dict[str, Tensor] | None, layer: int) -> Tensor:
        """x (batch, pos, d_model) -> (batch, pos, d_model)."""
        if self.kind == "swiglu":
            pre = self.c_gate(x)  # (batch, pos, d_mlp)
            linear = self.c_fc(x)  # (batch, pos, d_mlp)
            _keep(trace, "pre", layer, pre)
            _keep(trace, "pre_linear", layer, linear)
            post = F.silu(pre) * linear  # the gate decides how much of each channel passes
        else:
            pre = self.c_fc(x)  # (batch, pos, d_mlp)
            _keep(trace, "pre", layer, pre)
            post = F.gelu(pre, approximate="tanh" if self.kind == "gelu_tanh" else "none")
        _keep(trace, "post", layer, post)
        return self.c_proj(post)


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then + mlp(norm(.))."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = make_norm(config)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = make_norm(config)
        self.mlp = MLP(config)

    def forward(
        self,
        x: Tensor,
        positions: Tensor,
        past: tuple[Tensor, Tensor] | None,
        trace: dict[str, Tensor] | None,
        layer: int,
        ablate: Ablation | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        _keep(trace, "resid_pre", layer, x)
        normed = self.ln_1(x)
        _keep(trace, "ln1", layer, normed)
        attn_out, present = self.attn(normed, positions, past, trace, layer)
        if ablate is not None:
            attn_out = self._ablate_attention(attn_out, trace, layer, ablate)
        _keep(trace, "attn_out", layer, attn_out)
        skip = ablate is None or layer not in ablate.no_residual
        x = x + attn_out if skip else attn_out  # out of place: recorded tensors must never change afterwards
        _keep(trace, "resid_mid", layer, x)
        normed = self.ln_2(x)
        _keep(trace, "ln2", layer, normed)
        mlp_out = self.mlp(normed, trace, layer)
        if ablate is not None and layer in ablate.mlp_layers:
            mlp_out = torch.zeros_like(mlp_out)
        _keep(trace, "mlp_out", layer, mlp_out)
        x = x + mlp_out if skip else mlp_out
        _keep(trace, "resid_post", layer, x)
        return x, present

    def _ablate_attention(self, attn_out: Tensor, trace: dict[str, Tensor] | None, layer: int, ablate: Ablation) -> Tensor:
        """Zero the whole attention output, or subtract the chosen heads' writes (z_h @ W_O_h^T)."""
        if layer in ablate.attn_layers:
            return torch.zeros_like(attn_out)
        heads = sorted(h for (L, h) in ablate.heads if L == layer)
        if not heads:
            return attn_out
        if trace is None:
            raise ValueError("head ablation reads each head's z from the trace: use run_with_trace")
        z = trace[names.act_name("z", layer)]  # (batch, pos, head, d_head)
        d_head = z.shape[-1]
        w_o = self.attn.c_proj.weight  # (d_model, n_head * d_head)
        for head in heads:
            attn_out = attn_out - z[:, :, head, :] @ w_o[:, head * d_head:(head + 1) * d_head].T
        return attn_out


# --- the model ----------------------------------------------------------------------------


class GPT(nn.Module):
    """Decoder-only transformer: embed -> blocks -> final norm -> unembed."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.d_model)  # token embedding table
        if config.positional == "learned":
            self.wpe = nn.Embedding(config.n_ctx, config.d_model)  # one learned vector per position
        elif config.positional == "sinusoidal":
            self.register_buffer(
                "sinusoid", sinusoidal_table(config.n_ctx, config.d_model), persistent=False
            )  # fixed, so it is rebuilt on load rather than saved
        self.h = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = make_norm(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.lm_head.weight = self.wte.weight  # same tensor: reading and writing tokens share vectors
        self.apply(self._init_weights)
        for name, param in self.named_parameters():
            if name.endswith("c_proj.weight"):  # GPT-2: scale the residual writes by depth
                nn.init.normal_(param, mean=0.0, std=INIT_STD / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=INIT_STD)

    @property
    def device(self) -> torch.device:
        return self.wte.weight.device

    # --- forward ------------------------------------------------------------------------

    def forward(
        self,
        idx: Tensor,
        past_kv: PastKV | None = None,
        trace: dict[str, Tensor] | None = None,
        ablate: Ablation | None = None,
    ) -> tuple[Tensor, PastKV]:
        """idx (batch, pos) token ids -> (logits (batch, pos, vocab), K/V of every layer).

        With ``past_kv`` (the K/V of the earlier positions) only the new positions are
        computed: that is the KV cache. With ``trace`` a dict, every intermediate is stored
        in it under its ``core.engine.names`` name, with a leading batch dimension.
        """
        cfg = self.config
        start = 0 if past_kv is None else past_kv[0][0].shape[2]
        n_new = idx.shape[1]
        if start + n_new > cfg.n_ctx:
            raise ValueError(f"sequence of {start + n_new} tokens exceeds the context window n_ctx={cfg.n_ctx}")
        positions = torch.arange(start, start + n_new, device=idx.device)  # (pos,)
        _keep(trace, "tokens", None, idx)
        x = self.wte(idx)  # (batch, pos, d_model)
        if cfg.scale_embeddings:
            x = x * math.sqrt(cfg.d_model)
        _keep(trace, "embed", None, x)
        if cfg.positional != "rope":
            table = self.wpe(positions) if cfg.positional == "learned" else self.sinusoid[positions]  # (pos, d_model)
            pos_embed = table.unsqueeze(0).expand_as(x)  # (batch, pos, d_model)
            _keep(trace, "pos_embed", None, pos_embed)
            x = x + pos_embed
        present: PastKV = []
        for layer, block in enumerate(self.h):
            x, kv = block(x, positions, None if past_kv is None else past_kv[layer], trace, layer, ablate)
            present.append(kv)
        x = self.ln_f(x)
        _keep(trace, "ln_final", None, x)
        logits = self.lm_head(x)  # (batch, pos, vocab)
        _keep(trace, "unembed", None, logits)
        return logits, present

    def as_token_batch(self, ids: Any) -> tuple[Tensor, bool]:
        """Validate ids (list, numpy or tensor; 1-D for one prompt, 2-D for a batch).

        Returns the (batch, pos) long tensor on the model's device and whether the input
        was a single prompt. Every problem is a ValueError a page can show as is.
        """
        if isinstance(ids, (str, bytes, bytearray)):
            raise ValueError("token ids must be a sequence of ints; encode text with the tokenizer first")
        if isinstance(ids, Tensor):
            array = ids.detach().cpu().numpy()
        else:
            try:
                array = np.asarray(ids)
            except (ValueError, TypeError) as err:
                raise ValueError(f"token ids must be a rectangular sequence of ints ({err})") from None
        if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.integer) or array.size == 0):
            raise ValueError(f"token ids must be integers, got dtype {array.dtype}")
        if array.ndim not in (1, 2):
            raise ValueError(f"token ids must be 1-D (one prompt) or 2-D (batch, pos), got shape {array.shape}")
        if array.shape[-1] == 0 or array.size == 0:
            raise ValueError("no tokens: the prompt is empty")
        if array.shape[-1] > self.config.n_ctx:
            raise ValueError(
                f"{array.shape[-1]} tokens exceed the context window of {self.config.n_ctx}; shorten the prompt"
            )
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= self.config.vocab_size:
            bad = low if low < 0 else high
            raise ValueError(f"token id {bad} is outside the vocabulary [0, {self.config.vocab_size})")
        single = array.ndim == 1
        tensor = torch.as_tensor(array.astype(np.int64), device=self.device)
        return (tensor.unsqueeze(0) if single else tensor), single  # (batch, pos)

    def run_with_trace(self, ids: Any, ablate: Ablation | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Run the model and return (logits, trace) as numpy.

        One prompt (a list of ids or a 1-D array) gives logits [pos, vocab] and a trace whose
        arrays have no batch dimension; a 2-D (batch, pos) input keeps it. Names and shapes:
        ``core.engine.names``. The trace is new on every call; the model stores nothing.

        Example: logits, trace = model.run_with_trace([5, 17, 3]); trace["blocks.0.attn.hook_pattern"].shape -> (heads, 3, 3)
        """
        idx, single = self.as_token_batch(ids)
        if ablate is not None:
            ablate.check(self.config)  # with ablate, only this one forward pass changes: weights stay
        if idx.shape[0] > MAX_TRACE_BATCH:
            raise ValueError(f"a trace keeps every intermediate: at most {MAX_TRACE_BATCH} prompts per call, got {idx.shape[0]}")
        captured: dict[str, Tensor] = {}
        with torch.inference_mode():
            logits, _ = self.forward(idx, trace=captured, ablate=ablate)

            def to_numpy(value: Tensor) -> np.ndarray:
                value = value[0] if single else value
                value = value.detach()
                return (value.float() if value.is_floating_point() else value).cpu().numpy()  # float32 even from fp16 / bf16

            trace = {name: to_numpy(value) for name, value in captured.items()}
        return trace[names.UNEMBED_OUT], trace

    def logits(self, ids: Any) -> np.ndarray:
        """Plain forward (no trace): logits as numpy, [pos, vocab] for one prompt."""
        idx, single = self.as_token_batch(ids)
        with torch.inference_mode():
            out, _ = self.forward(idx)
        return (out[0] if single else out).float().cpu().numpy()

    # --- pieces the pages show ----------------------------------------------------------

    def final_norm_and_unembed(self, resid: np.ndarray) -> np.ndarray:
        """Apply ln_f then lm_head to any residual-stream vectors [..., d_model] (the logit lens).

        Example: model.final_norm_and_unembed(trace["blocks.1.hook_resid_post"]).shape -> (pos, vocab)
        """
        array = np.asarray(resid, dtype=np.float32)
        if array.ndim == 0 or array.shape[-1] != self.config.d_model:
            raise ValueError(f"residual vectors must end in d_model={self.config.d_model}, got shape {array.shape}")
        if not np.isfinite(array).all():
            raise ValueError("residual vectors contain NaN or infinity")
        with torch.inference_mode():
            x = torch.as_tensor(array, device=self.device, dtype=self.wte.weight.dtype)
            return self.lm_head(self.ln_f(x)).float().cpu().numpy()

    def embedding_matrix(self) -> np.ndarray:
        """The token-embedding table [vocab, d_model] as a numpy copy."""
        return self.wte.weight.detach().float().cpu().numpy().copy()

    def positional_table(self, n: int | None = None) -> np.ndarray:
        """The first n rows [n, d_model] of the positional table (learned or sinusoidal)."""
        count = self.config.n_ctx if n is None else n
        if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= self.config.n_ctx:
            raise ValueError(f"n must be an int in [1, {self.config.n_ctx}], got {n!r}")
        if self.config.positional == "rope":
            raise ValueError("a RoPE model has no positional table: it rotates q and k (see rope_frequencies())")
        table = self.wpe.weight if self.config.positional == "learned" else self.sinusoid
        return table[:count].detach().cpu().numpy().copy()

    def rope_frequencies(self) -> np.ndarray:
        """theta_i [d_head/2]: radians each rotation pair turns per position (RoPE models only)."""
        if self.config.positional != "rope":
            raise ValueError(f"this model uses {self.config.positional} positions, not RoPE")
        return self.h[0].attn.rope_inv_freq.detach().cpu().numpy().copy()

    def num_params(self) -> int:
        """Trainable parameters; a tied embedding counts once (``parameters()`` de-duplicates)."""
        return sum(p.numel() for p in self.parameters())

    def parameter_counts(self) -> dict[str, int]:
        """Parameters per component, as in the hand count of GPT-2 small; values sum to num_params()."""
        counts = {"token_embedding": 0, "position_embedding": 0, "attention": 0, "mlp": 0, "norms": 0, "lm_head": 0}
        seen: set[int] = set()
        for name, param in self.named_parameters(remove_duplicate=False):
            if id(param) in seen:
                continue
            seen.add(id(param))
            if name.startswith("wte."):
                key = "token_embedding"
            elif name.startswith("wpe."):
                key = "position_embedding"
            elif ".attn." in name:
                key = "attention"
            elif ".mlp." in name:
                key = "mlp"
            elif name.startswith("lm_head."):
                key = "lm_head"
            else:
                key = "norms"
            counts[key] += param.numel()
        return counts


# Initialising a GPT draws from torch's one global random stream. A server builds models on
# several threads (a Training snapshot's step 0 regenerated from its seed while a built-in or
# another snapshot is being constructed), so every construction in this process that draws
# from it holds this lock: otherwise two draws interleave and the seeded weights differ.
INIT_LOCK = threading.RLock()


def build_model(config: GPTConfig, seed: int = 0, device: str | torch.device | None = None) -> GPT:
    """A freshly initialised model, deterministic for a seed, on ``device`` (default ``core.engine.device.pick()``).

    Example: build_model(GPTConfig(n_layer=2, n_head=2, d_model=16, d_mlp=64, n_ctx=32, vocab_size=50))
    """
    with INIT_LOCK:
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        try:
            model = GPT(config)
        finally:
            torch.random.set_rng_state(generator_state)  # leave the caller's random stream untouched
    return model.to(device if device is not None else devices.pick())


@dataclass(frozen=True)
class StateMismatch:
    """How a state dict differs from what a model expects (empty when it fits)."""

    missing: list[str]
    unexpected: list[str]
    wrong_shape: tuple[str, tuple[int, ...], tuple[int, ...]] | None  # (name, in the state, expected), the first

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.wrong_shape)


def state_mismatch(model: GPT, state: dict[str, Tensor]) -> StateMismatch:
    """Compare a state dict with ``model``'s parameters; a tied ``lm_head.weight`` is expected absent.

    Example: state_mismatch(model, {}).missing[:1] -> ["wte.weight"]
    """
    params = model.state_dict()
    expected = {k for k in params if not (model.config.tie_embeddings and k == "lm_head.weight")}
    missing, unexpected = sorted(expected - set(state)), sorted(set(state) - expected)
    wrong = next(((name, tuple(state[name].shape), tuple(param.shape)) for name, param in params.items()
                  if name in state and tuple(state[name].shape) != tuple(param.shape)), None)
    return StateMismatch(missing, unexpected, wrong)


def ids_as_list(ids: Sequence[int] | np.ndarray) -> list[int]:
    """Plain Python ints (what session state and JSON keep).

    Example: ids_as_list(np.array([3, 4])) -> [3, 4]
    """
    return [int(i) for i in np.asarray(ids).reshape(-1)]
