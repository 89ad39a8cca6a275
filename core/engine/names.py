"""Names of the intermediates a forward pass captures (TransformerLens style).

Every trace that ``GPT.run_with_trace`` returns is a dict from these names to numpy arrays.
Pages never build a name with an f-string; they call ``act_name("pattern", layer=3)``.

Shapes (single prompt, batch dimension dropped):

    hook_tokens                        [pos]
    hook_embed                         [pos, d_model]   token embedding rows (x sqrt(d_model) if scale_embeddings)
    hook_pos_embed                     [pos, d_model]   learned or sinusoidal only
    blocks.{L}.hook_resid_pre          [pos, d_model]
    blocks.{L}.ln1.hook_normalized     [pos, d_model]   norm output, after gain (and bias)
    blocks.{L}.attn.hook_q             [pos, head, d_head]
    blocks.{L}.attn.hook_k|v           [pos, kv_head, d_head]   kv_head = n_kv_head (= head unless GQA/MQA)
    blocks.{L}.attn.hook_rot_q         [pos, head, d_head]      RoPE only: q after rotation
    blocks.{L}.attn.hook_rot_k         [pos, kv_head, d_head]   RoPE only: k after rotation
    blocks.{L}.attn.hook_attn_scores   [head, q_pos, k_pos]  scaled, causal -inf, pre-softmax
    blocks.{L}.attn.hook_pattern       [head, q_pos, k_pos]  softmax of the scores
    blocks.{L}.attn.hook_z             [pos, head, d_head]   pattern @ v, before W_O
    blocks.{L}.hook_attn_out           [pos, d_model]
    blocks.{L}.hook_resid_mid          [pos, d_model]
    blocks.{L}.ln2.hook_normalized     [pos, d_model]
    blocks.{L}.mlp.hook_pre            [pos, d_mlp]     GELU input; SwiGLU: gate input
    blocks.{L}.mlp.hook_pre_linear     [pos, d_mlp]     SwiGLU only: the un-gated "up" branch
    blocks.{L}.mlp.hook_post           [pos, d_mlp]     after the activation (times up for SwiGLU)
    blocks.{L}.hook_mlp_out            [pos, d_model]
    blocks.{L}.hook_resid_post         [pos, d_model]
    ln_final.hook_normalized           [pos, d_model]
    unembed.hook_out                   [pos, vocab]     logits at every position

RoPE models have no ``hook_pos_embed``: position never enters the residual stream, it
rotates q and k inside attention instead, so those models add ``hook_rot_q``/``hook_rot_k``
(the same choice TransformerLens makes). ``hook_pre_linear`` follows TransformerLens'
gated-MLP naming.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

# --- names outside the blocks ---------------------------------------------------------
HOOK_TOKENS = "hook_tokens"
HOOK_EMBED = "hook_embed"
HOOK_POS_EMBED = "hook_pos_embed"
LN_FINAL_NORMALIZED = "ln_final.hook_normalized"
UNEMBED_OUT = "unembed.hook_out"

_GLOBAL_NAMES: dict[str, str] = {
    "tokens": HOOK_TOKENS,
    "embed": HOOK_EMBED,
    "pos_embed": HOOK_POS_EMBED,
    "ln_final": LN_FINAL_NORMALIZED,
    "unembed": UNEMBED_OUT,
    "logits": UNEMBED_OUT,
}

# --- per-block templates ("{L}" is the layer index) ------------------------------------
RESID_PRE = "blocks.{L}.hook_resid_pre"
LN1_NORMALIZED = "blocks.{L}.ln1.hook_normalized"
ATTN_Q = "blocks.{L}.attn.hook_q"
ATTN_K = "blocks.{L}.attn.hook_k"
ATTN_V = "blocks.{L}.attn.hook_v"
ATTN_ROT_Q = "blocks.{L}.attn.hook_rot_q"
ATTN_ROT_K = "blocks.{L}.attn.hook_rot_k"
ATTN_SCORES = "blocks.{L}.attn.hook_attn_scores"
ATTN_PATTERN = "blocks.{L}.attn.hook_pattern"
ATTN_Z = "blocks.{L}.attn.hook_z"
ATTN_OUT = "blocks.{L}.hook_attn_out"
RESID_MID = "blocks.{L}.hook_resid_mid"
LN2_NORMALIZED = "blocks.{L}.ln2.hook_normalized"
MLP_PRE = "blocks.{L}.mlp.hook_pre"
MLP_PRE_LINEAR = "blocks.{L}.mlp.hook_pre_linear"
MLP_POST = "blocks.{L}.mlp.hook_post"
MLP_OUT = "blocks.{L}.hook_mlp_out"
RESID_POST = "blocks.{L}.hook_resid_post"

_BLOCK_NAMES: dict[str, str] = {
    "resid_pre": RESID_PRE,
    "ln1": LN1_NORMALIZED,
    "q": ATTN_Q,
    "k": ATTN_K,
    "v": ATTN_V,
    "rot_q": ATTN_ROT_Q,
    "rot_k": ATTN_ROT_K,
    "attn_scores": ATTN_SCORES,
    "scores": ATTN_SCORES,
    "pattern": ATTN_PATTERN,
    "z": ATTN_Z,
    "attn_out": ATTN_OUT,
    "resid_mid": RESID_MID,
    "ln2": LN2_NORMALIZED,
    "pre": MLP_PRE,
    "mlp_pre": MLP_PRE,
    "pre_linear": MLP_PRE_LINEAR,
    "post": MLP_POST,
    "mlp_post": MLP_POST,
    "mlp_out": MLP_OUT,
    "resid_post": RESID_POST,
}


class _TraceShape(Protocol):
    """What ``expected_names`` needs from a config (``core.engine.model.GPTConfig`` fits)."""

    n_layer: int
    n_head: int
    d_model: int
    d_mlp: int
    vocab_size: int
    positional: str
    mlp: str


def act_name(kind: str, layer: int | None = None) -> str:
    """The trace name of one intermediate; ``layer`` is required exactly for block names.

    Example: act_name("pattern", layer=3) -> "blocks.3.attn.hook_pattern"
    """
    if kind in _GLOBAL_NAMES:
        if layer is not None:
            raise ValueError(f"{kind!r} is not inside a block; call act_name({kind!r}) without a layer")
        return _GLOBAL_NAMES[kind]
    if kind in _BLOCK_NAMES:
        if layer is None:
            raise ValueError(f"{kind!r} lives inside a block; pass layer=, e.g. act_name({kind!r}, layer=0)")
        if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
            raise ValueError(f"layer must be a non-negative int, got {layer!r}")
        return _BLOCK_NAMES[kind].format(L=layer)
    known = ", ".join(sorted({*_GLOBAL_NAMES, *_BLOCK_NAMES}))
    raise ValueError(f"unknown activation kind {kind!r}; known kinds: {known}")


def n_layers_in(trace: Mapping[str, object]) -> int:
    """How many blocks a trace has (counts ``blocks.{L}.hook_resid_post``).

    Example: n_layers_in({"blocks.0.hook_resid_post": ..., "blocks.1.hook_resid_post": ...}) -> 2
    """
    n = 0
    while act_name("resid_post", n) in trace:
        n += 1
    if n == 0:
        raise ValueError("the trace has no blocks")
    return n


def block_names(config: _TraceShape, layer: int) -> list[str]:
    """The ordered trace names of one block, in the order the forward pass makes them.

    Example: block_names(cfg, 0)[0] -> "blocks.0.hook_resid_pre"
    """
    kinds = ["resid_pre", "ln1", "q", "k", "v"]
    if config.positional == "rope":
        kinds += ["rot_q", "rot_k"]
    kinds += ["attn_scores", "pattern", "z", "attn_out", "resid_mid", "ln2", "pre"]
    if config.mlp == "swiglu":
        kinds.append("pre_linear")
    kinds += ["post", "mlp_out", "resid_post"]
    return [act_name(kind, layer=layer) for kind in kinds]


def expected_names(config: _TraceShape) -> list[str]:
    """Every trace name a forward pass of this config produces, in order.

    Example: expected_names(cfg)[:3] -> ["hook_tokens", "hook_embed", "hook_pos_embed"]
    """
    names = [HOOK_TOKENS, HOOK_EMBED]
    if config.positional != "rope":
        names.append(HOOK_POS_EMBED)
    for layer in range(config.n_layer):
        names += block_names(config, layer)
    names += [LN_FINAL_NORMALIZED, UNEMBED_OUT]
    return names


def expected_shapes(config: _TraceShape, n_pos: int) -> dict[str, tuple[int, ...]]:
    """The declared shape of every trace entry for a single prompt of ``n_pos`` tokens.

    Example: expected_shapes(cfg, 5)["hook_tokens"] -> (5,)
    """
    d_head = config.d_model // config.n_head
    per_kind: dict[str, tuple[int, ...]] = {
        "resid": (n_pos, config.d_model),
        "heads": (n_pos, config.n_head, d_head),
        "kv_heads": (n_pos, getattr(config, "n_kv_head", None) or config.n_head, d_head),
        "square": (config.n_head, n_pos, n_pos),
        "mlp": (n_pos, config.d_mlp),
    }
    shapes: dict[str, tuple[int, ...]] = {}
    for name in expected_names(config):
        leaf = name.rsplit(".", 1)[-1]
        if name == HOOK_TOKENS:
            shapes[name] = (n_pos,)
        elif name == UNEMBED_OUT:
            shapes[name] = (n_pos, config.vocab_size)
        elif leaf in ("hook_k", "hook_v", "hook_rot_k"):
            shapes[name] = per_kind["kv_heads"]
        elif leaf in ("hook_q", "hook_rot_q", "hook_z"):
            shapes[name] = per_kind["heads"]
        elif leaf in ("hook_attn_scores", "hook_pattern"):
            shapes[name] = per_kind["square"]
        elif leaf in ("hook_pre", "hook_pre_linear", "hook_post"):
            shapes[name] = per_kind["mlp"]
        else:
            shapes[name] = per_kind["resid"]
    return shapes
