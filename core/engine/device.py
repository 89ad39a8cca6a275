"""Which torch device the core runs on: cuda, else mps, else cpu.

The environment variable ``TOKEN_JOURNEY_DEVICE`` forces one (``cpu``, ``cuda``, ``cuda:1``,
``mps``) — handy to compare devices or to keep a GPU free. A forced device that is not
available is an error rather than a silent fallback, so a misconfigured server says so.
"""

from __future__ import annotations

import os

import torch

DEVICE_ENV_VAR = "TOKEN_JOURNEY_DEVICE"


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def pick() -> str:
    """The device name to put models on.

    Example: pick() -> "cpu"   (on a machine without a GPU and without the env var)
    """
    forced = os.environ.get(DEVICE_ENV_VAR, "").strip().lower()
    if forced:
        kind = forced.split(":", 1)[0]
        if kind == "cpu":
            return "cpu"
        if kind == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"{DEVICE_ENV_VAR}={forced} but torch sees no CUDA device; unset it or use cpu")
            return forced
        if kind == "mps":
            if not _mps_available():
                raise RuntimeError(f"{DEVICE_ENV_VAR}={forced} but the MPS backend is not available; unset it or use cpu")
            return "mps"
        raise ValueError(f"{DEVICE_ENV_VAR}={forced!r} is not a device; use cpu, cuda, cuda:N or mps")
    if torch.cuda.is_available():
        return "cuda"
    if _mps_available():
        return "mps"
    return "cpu"


def describe(device: str | None = None) -> str:
    """A one-line, human-readable description of the device, for the sidebar.

    Example: describe("cpu") -> "CPU (2 threads)"
    """
    name = device if device is not None else pick()
    kind = name.split(":", 1)[0]
    if kind == "cuda":
        index = int(name.split(":", 1)[1]) if ":" in name else torch.cuda.current_device()
        return f"CUDA GPU: {torch.cuda.get_device_name(index)}"
    if kind == "mps":
        return "Apple GPU (MPS)"
    return f"CPU ({torch.get_num_threads()} threads)"
