"""Llama 2 / 3 / 3.x, TinyLlama, SmolLM: RoPE, RMSNorm, SwiGLU, grouped-query attention.

Qwen2 and Mistral share this layout tensor for tensor; their config differences sit in
``qwen2.py`` and ``mistral.py``, which call ``config_from_hf`` here with them.

Weight names (Hugging Face -> ours):

    model.embed_tokens.weight                  wte.weight
    model.norm.weight                          ln_f.weight
    lm_head.weight                             lm_head.weight (absent when tied)
    model.layers.{L}.input_layernorm           h.{L}.ln_1
    model.layers.{L}.post_attention_layernorm  h.{L}.ln_2
    model.layers.{L}.self_attn.{q,k,v}_proj    h.{L}.attn.c_attn  (q, k, v stacked; q and k permuted)
    model.layers.{L}.self_attn.o_proj          h.{L}.attn.c_proj
    model.layers.{L}.mlp.gate_proj             h.{L}.mlp.c_gate
    model.layers.{L}.mlp.up_proj               h.{L}.mlp.c_fc
    model.layers.{L}.mlp.down_proj             h.{L}.mlp.c_proj

RoPE convention. Hugging Face's Llama rotates dimension j of a head together with dimension
j + d_head/2 ("rotate half"); our ``core.engine.model.apply_rope`` rotates neighbours (2i, 2i+1), as
the RoFormer paper writes it. Both use frequency theta_i for pair i. Permuting the rows of
W_q and W_k within every head (our 2i <- their i, our 2i+1 <- their i + d_head/2) makes the
two identical: q·k is unchanged by permuting both, so scores, patterns and logits match; only
the order of the d_head coordinates inside ``hook_q``/``hook_k`` differs from Hugging Face's.
"""

from __future__ import annotations

from typing import Any

import torch

from core.engine.model import GPTConfig
from core.foreign.config import MAX_CONTEXT, ForeignModelError, finite_float, positive_int, unsupported

GLOBAL_WEIGHTS = {
    "model.embed_tokens.weight": "wte.weight",
    "model.norm.weight": "ln_f.weight",
    "lm_head.weight": "lm_head.weight",
}
LAYER_WEIGHTS = {  # model.layers.{L}.<key> -> h.{L}.<value>; q/k/v are stacked separately
    "input_layernorm.weight": "ln_1.weight",
    "post_attention_layernorm.weight": "ln_2.weight",
    "self_attn.o_proj.weight": "attn.c_proj.weight",
    "self_attn.o_proj.bias": "attn.c_proj.bias",
    "mlp.gate_proj.weight": "mlp.c_gate.weight",
    "mlp.gate_proj.bias": "mlp.c_gate.bias",
    "mlp.up_proj.weight": "mlp.c_fc.weight",
    "mlp.up_proj.bias": "mlp.c_fc.bias",
    "mlp.down_proj.weight": "mlp.c_proj.weight",
    "mlp.down_proj.bias": "mlp.c_proj.bias",
}


def rope_settings(hf: dict[str, Any]) -> tuple[float, tuple[float, float, float, int] | None]:
    """(rope_theta, llama3 scaling or None) from either the old or the transformers-5 layout.

    Example: rope_settings({"rope_theta": 500000.0}) -> (500000.0, None)
    """
    params = hf.get("rope_parameters")
    scaling = hf.get("rope_scaling")
    if isinstance(params, dict):
        theta = params.get("rope_theta", hf.get("rope_theta", 10000.0))
        scaling = params
    else:
        theta = hf.get("rope_theta", 10000.0)
    theta = finite_float({"rope_theta": theta}, "rope_theta", 10000.0)
    if not isinstance(scaling, dict):
        if scaling is not None:
            raise unsupported("rope_scaling", scaling)
        return theta, None
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind in (None, "default"):
        return theta, None
    if kind == "llama3":
        try:
            values = (float(scaling["factor"]), float(scaling["low_freq_factor"]), float(scaling["high_freq_factor"]),
                      int(scaling["original_max_position_embeddings"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ForeignModelError("bad_config", f"incomplete llama3 rope_scaling ({err})", reason=f"rope_scaling {err}") from None
        return theta, values
    raise unsupported("rope_scaling.rope_type", kind)


def config_from_hf(hf: dict[str, Any], *, biases: tuple[bool, bool] | None = None,
                   sliding_window: bool = False) -> GPTConfig:
    """Our ``GPTConfig`` for a Llama-layout ``config.json``.

    ``biases`` = (bias on every projection, bias on q/k/v): None reads Llama's
    ``attention_bias`` / ``mlp_bias``; Qwen2 passes (False, True). ``sliding_window`` says the
    family always uses one (Mistral); otherwise ``use_sliding_window`` decides.

    Example: config_from_hf({"hidden_size": 64, "num_attention_heads": 4, ...}).positional -> "rope"
    """
    d_model = positive_int(hf, "hidden_size")
    n_head = positive_int(hf, "num_attention_heads")
    n_kv_head = positive_int({"num_key_value_heads": hf.get("num_key_value_heads") or n_head}, "num_key_value_heads")
    head_dim = hf.get("head_dim")
    if head_dim is not None and head_dim * n_head != d_model:
        raise unsupported("head_dim", head_dim)
    activation = hf.get("hidden_act", "silu")
    if activation != "silu":
        raise unsupported("hidden_act", activation)
    if hf.get("pretraining_tp", 1) not in (None, 1):
        raise unsupported("pretraining_tp", hf.get("pretraining_tp"))
    if biases is None:
        attention_bias, mlp_bias = bool(hf.get("attention_bias", False)), bool(hf.get("mlp_bias", False))
        if attention_bias != mlp_bias:
            raise unsupported("attention_bias / mlp_bias", f"{attention_bias} / {mlp_bias}")
        biases = (attention_bias, attention_bias)
    bias, qkv_bias = biases
    n_ctx = positive_int(hf, "max_position_embeddings", 2048)
    window = hf.get("sliding_window")
    uses_window = sliding_window or bool(hf.get("use_sliding_window", False))
    if uses_window and isinstance(window, int) and not isinstance(window, bool) and window > 0:
        n_ctx = min(n_ctx, window)  # inside the window, sliding-window attention is plain causal attention
    theta, llama3 = rope_settings(hf)
    return GPTConfig(
        n_layer=positive_int(hf, "num_hidden_layers"),
        n_head=n_head,
        n_kv_head=n_kv_head,
        d_model=d_model,
        d_mlp=positive_int(hf, "intermediate_size"),
        n_ctx=min(n_ctx, MAX_CONTEXT),
        vocab_size=positive_int(hf, "vocab_size"),
        positional="rope",
        rope_base=theta,
        rope_llama3=llama3,
        norm="rmsnorm",
        mlp="swiglu",
        tie_embeddings=bool(hf.get("tie_word_embeddings", False)),
        bias=bias,
        qkv_bias=qkv_bias,
        eps=finite_float(hf, "rms_norm_eps", 1e-6),
    )


def rope_permutation(d_head: int) -> torch.Tensor:
    """Row order that turns Hugging Face's rotate-half layout into our neighbour pairs.

    Example: rope_permutation(4).tolist() -> [0, 2, 1, 3]
    """
    half = d_head // 2
    return torch.stack((torch.arange(half), torch.arange(half) + half), dim=1).reshape(-1)  # [0, h, 1, h+1, ...]


def permute_heads(tensor: torch.Tensor, n_heads: int, d_head: int) -> torch.Tensor:
    """Apply the RoPE row permutation inside every head of a q/k weight (out, in) or bias (out,)."""
    shaped = tensor.reshape(n_heads, d_head, *tensor.shape[1:])  # (head, d_head[, in])
    return shaped[:, rope_permutation(d_head)].reshape(tensor.shape)  # back to (out[, in])


def convert_weights(raw: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    """Hugging Face Llama-layout tensors -> our state dict: renamed, q/k/v stacked, q and k permuted for RoPE."""
    state: dict[str, torch.Tensor] = {}
    qkv: dict[tuple[int, str], dict[str, torch.Tensor]] = {}
    unknown = []
    for key, tensor in raw.items():
        if key in GLOBAL_WEIGHTS:
            state[GLOBAL_WEIGHTS[key]] = tensor
            continue
        parts = key.split(".", 3)  # model, layers, i, rest
        if len(parts) == 4 and parts[0] == "model" and parts[1] == "layers" and parts[2].isdigit():
            layer, rest = int(parts[2]), parts[3]
            if rest in LAYER_WEIGHTS:
                state[f"h.{layer}.{LAYER_WEIGHTS[rest]}"] = tensor
                continue
            if rest.startswith("self_attn.") and rest.count(".") == 2:
                proj, kind = rest.split(".")[1:]
                if proj in ("q_proj", "k_proj", "v_proj") and kind in ("weight", "bias"):
                    qkv.setdefault((layer, kind), {})[proj] = tensor
                    continue
            if rest.endswith("rotary_emb.inv_freq"):
                continue  # recomputed from rope_theta
        unknown.append(key)
    if unknown:
        raise ForeignModelError("bad_weights", f"unexpected tensors {unknown[:5]}", reason=f"unexpected {unknown[:3]}")
    d_head = config.d_head
    for (layer, kind), parts in qkv.items():
        if set(parts) != {"q_proj", "k_proj", "v_proj"}:
            raise ForeignModelError("bad_weights", f"layer {layer}: q/k/v {kind} incomplete", reason=f"layer {layer} q/k/v")
        q = permute_heads(parts["q_proj"], config.n_head, d_head)
        k = permute_heads(parts["k_proj"], config.n_kv_head, d_head)
        state[f"h.{layer}.attn.c_attn.{kind}"] = torch.cat((q, k, parts["v_proj"]), dim=0)  # (q + 2 kv heads) x d_head rows
    return state
