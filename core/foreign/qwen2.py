"""Qwen2 / Qwen2.5: Llama's layout, tensor for tensor, with one difference — biases on q, k
and v (and on no other projection), whatever ``attention_bias`` says.

Sliding-window attention is used only when the config's ``use_sliding_window`` says so
(as for Llama).
"""

from __future__ import annotations

from typing import Any

import torch

from core.engine.model import GPTConfig
from core.foreign import llama


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Our ``GPTConfig`` for a Qwen2 ``config.json``: Llama's, with q/k/v biases only.

    Example: config_from_hf({"hidden_size": 64, "num_attention_heads": 4, ...}).qkv_bias -> True
    """
    return llama.config_from_hf(hf, biases=(False, True))


def convert_weights(raw: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    """Llama's conversion: the q/k/v biases are stacked and permuted like their weights."""
    return llama.convert_weights(raw, config)
