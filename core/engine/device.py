"""Which torch device the core runs on: cuda, else mps, else cpu.

``force(name)`` picks one instead (``cpu``, ``cuda``, ``cuda:1``, ``mps``): the server does it
at start from its ``TOKEN_JOURNEY_DEVICE`` setting, a command line from its ``--device``. A
forced device that is not available is an error rather than a silent fallback, so a
misconfigured server says so.
"""

from __future__ import annotations

import torch

DEVICE_ENV_VAR = "TOKEN_JOURNEY_DEVICE"  # the server setting named in the messages (serving.settings reads it)

_FORCED: str | None = None


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def force(name: str | None) -> None:
    """Put models on ``name`` from now on (None or "": choose as ``pick`` does by itself).

    Example: force("cpu"); pick() -> "cpu"
    """
    global _FORCED
    forced = (name or "").strip().lower()
    if forced and forced.split(":", 1)[0] not in ("cpu", "cuda", "mps"):
        raise ValueError(f"{DEVICE_ENV_VAR}={forced!r} is not a device; use cpu, cuda, cuda:N or mps")
    _FORCED = forced or None


def pick() -> str:
    """The device name to put models on.

    Example: pick() -> "cpu"   (on a machine without a GPU, nothing forced)
    """
    forced = _FORCED
    if forced:
        kind = forced.split(":", 1)[0]
        if kind == "cpu":
            return "cpu"
        if kind == "cuda":
            if not torch.cuda.is_available():
                raise RuntimeError(f"{DEVICE_ENV_VAR}={forced} but torch sees no CUDA device; unset it or use cpu")
            return forced
        if not _mps_available():
            raise RuntimeError(f"{DEVICE_ENV_VAR}={forced} but the MPS backend is not available; unset it or use cpu")
        return "mps"
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
