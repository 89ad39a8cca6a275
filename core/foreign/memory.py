"""Will a foreign checkpoint fit? Decided from ``config.json`` alone, before a weight is read.

The model is built on the "meta" device (shapes, no storage) to count its parameters; the
bytes it needs (weights at the run dtype, plus headroom) are compared with what the device
has free now: VRAM on CUDA, ``MemAvailable`` on the CPU. The caller may pass a limit instead
(the server's settings do, for tests and for a shared host); core reads no environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from core.engine.model import GPT, GPTConfig

MEMORY_HEADROOM = 1.15  # activations, the tokenizer and the Python process on top of the weights


def meta_model(config: GPTConfig) -> GPT:
    """Our model's structure with no storage at all (device "meta"): for counting and for loading into."""
    with torch.device("meta"):
        return GPT(config)


def parameter_count(config: GPTConfig, skeleton: GPT | None = None) -> int:
    """Parameters of our model for this config, counted without allocating a single weight."""
    return (skeleton if skeleton is not None else meta_model(config)).num_params()


def available_memory(device: str, limit_mb: float | None = None) -> int | None:
    """Bytes free for a new model: ``limit_mb`` when given, else VRAM on CUDA, MemAvailable on CPU (None if unknown).

    Example: available_memory("cpu", limit_mb=512) -> 512000000
    """
    if limit_mb is not None:
        return int(float(limit_mb) * 1e6)
    if device.startswith("cuda"):
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class MemoryEstimate:
    """What loading a checkpoint will take, decided from config.json alone."""

    n_params: int
    dtype: str  # what the weights become in memory
    needed_bytes: int
    available_bytes: int | None

    @property
    def fits(self) -> bool:
        return self.available_bytes is None or self.needed_bytes <= self.available_bytes


def estimate_memory(config: GPTConfig, dtype: torch.dtype, device: str, skeleton: GPT | None = None,
                    limit_mb: float | None = None) -> MemoryEstimate:
    """Weights at ``dtype`` plus headroom, against what the device has free now (or ``limit_mb``)."""
    n_params = parameter_count(config, skeleton)
    width = torch.empty((), dtype=dtype).element_size()
    needed = int(n_params * width * MEMORY_HEADROOM)
    return MemoryEstimate(n_params, str(dtype).removeprefix("torch."), needed, available_memory(device, limit_mb))
