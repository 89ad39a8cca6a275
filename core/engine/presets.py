"""The shipped model presets and where their checkpoints live (torch-free, so ``import core`` stays cheap).

Example: ASSETS_MODELS / BUILTIN_PRESETS[0] -> PosixPath(".../assets/models/classic")
"""

from __future__ import annotations

from pathlib import Path

BUILTIN_PRESETS: tuple[str, ...] = ("classic", "modern")  # the two designs the pages compare: GPT-2-like and Llama-like
ASSETS_MODELS = Path(__file__).resolve().parents[2] / "assets" / "models"
