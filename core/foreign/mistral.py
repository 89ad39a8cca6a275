"""Mistral: Llama's layout, tensor for tensor, with one difference — it always uses
sliding-window attention. Inside the window that is plain causal attention, so the context a
page may use is capped at the window (``n_ctx = min(max_position_embeddings, sliding_window)``).
"""

from __future__ import annotations

from typing import Any

import torch

from core.engine.model import GPTConfig
from core.foreign import llama


def config_from_hf(hf: dict[str, Any]) -> GPTConfig:
    """Our ``GPTConfig`` for a Mistral ``config.json``: Llama's, with n_ctx kept inside the window.

    Example: config_from_hf({..., "max_position_embeddings": 32768, "sliding_window": 4096}).n_ctx -> 4096
    """
    return llama.config_from_hf(hf, sliding_window=True)


def convert_weights(raw: dict[str, torch.Tensor], config: GPTConfig) -> dict[str, torch.Tensor]:
    """Llama's conversion, unchanged."""
    return llama.convert_weights(raw, config)
