"""GPT-2 (and DistilGPT-2): learned positions, LayerNorm, tanh-GELU, Conv1D weights.

Our parameter names are GPT-2's own (``wte``, ``h.{L}.attn.c_attn``, ``ln_f``, ...), so the
weight conversion is one rule: strip the ``transformer.`` prefix. The only twist is that
GPT-2's projections are ``Conv1D`` layers storing weights as (in, out), while ``nn.Linear``
stores (out, in): those four matrices per block are transposed.
"""

from __future__ import annotations

from typing import Any

import torch

from core.engine.model import GPTConfig
from core.foreign.config import MAX_CONTEXT, finite_float, positive_int, unsupported

ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}
CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
MASK_BUFFERS = (".attn.bias", ".attn.masked_bias")  # causal-mask buffers of old checkpoints, not weights


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Our ``GPTConfig`` for a GPT-2 ``config.json``.

    Example: config_from_hf({"n_layer": 2, "n_head": 2, "n_embd": 16, "n_positions": 32, "vocab_size": 50}).mlp -> "gelu_tanh"
    """
    activation = hf.get("activation_function", "gelu_new")
    if activation not in ACTIVATIONS:
        raise unsupported("activation_function", activation)
    if not hf.get("scale_attn_weights", True) or hf.get("scale_attn_by_inverse_layer_idx", False) \
            or hf.get("reorder_and_upcast_attn", False):
        raise unsupported("attention scaling", "non-standard")
    d_model = positive_int(hf, "n_embd")
    return GPTConfig(
        n_layer=positive_int(hf, "n_layer"),
        n_head=positive_int(hf, "n_head"),
        d_model=d_model,
        d_mlp=positive_int({"n_inner": hf.get("n_inner") or 4 * d_model}, "n_inner"),
        n_ctx=min(positive_int(hf, "n_positions"), MAX_CONTEXT),
        vocab_size=positive_int(hf, "vocab_size"),
        positional="learned",
        norm="layernorm",
        mlp=ACTIVATIONS[activation],  # type: ignore[arg-type]
        tie_embeddings=bool(hf.get("tie_word_embeddings", True)),
        bias=True,
        eps=finite_float(hf, "layer_norm_epsilon", 1e-5),
    )


def convert_weights(raw: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    """Hugging Face GPT-2 tensors -> our state dict (names checked later by ``build_from_state``).

    Example: convert_weights({"transformer.h.0.attn.c_attn.weight": w}, cfg)["h.0.attn.c_attn.weight"] is w.t()
    """
    state = {}
    for key, tensor in raw.items():
        name = key.removeprefix("transformer.")
        if name.endswith(MASK_BUFFERS):
            continue
        state[name] = tensor.t() if name.endswith(CONV1D_SUFFIXES) else tensor  # Conv1D (in, out) -> Linear (out, in)
    return state
