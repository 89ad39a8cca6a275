"""Token Journey's model core: pure torch/numpy, never imports streamlit.

Heavy modules load lazily so that ``import core`` stays cheap (the UI imports it on
every rerun) and so that the tokenizer can be used without torch being imported.
"""

from __future__ import annotations

from typing import Any

from core.engine.presets import BUILTIN_PRESETS

__all__ = ["load_builtin", "BUILTIN_PRESETS"]


def load_builtin(name: str) -> Any:
    """Load a shipped model preset from ``assets/models/<name>/`` (safetensors only)."""
    from core.engine.checkpoint import load_builtin as _load

    return _load(name)
