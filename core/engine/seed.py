"""One call that makes every random number generator we use repeatable."""

from __future__ import annotations

import random

import numpy as np
import torch


def set_seed(seed: int) -> None:
    """Seed Python's ``random``, NumPy's legacy global generator, torch, and every CUDA device.

    Example: set_seed(0); torch.rand(1)  # same value on every run
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {type(seed).__name__}")
    if not 0 <= int(seed) < 2**32:
        raise ValueError(f"seed must be in [0, 2**32), got {seed}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device (torch does it for us)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
