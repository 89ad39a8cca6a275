"""The process' models and their shared forward passes (no Streamlit).

Models and everything derived from them live in this module's registry, not in Streamlit's
caches: a ``clear_cache`` back-message (which any browser can send) empties ``st.cache_data``
/ ``st.cache_resource`` for the whole class, but cannot reach these.

- ``get_model(name)``: the one loaded model per name, shared by every session (the built-ins
  are registered on first use; ``serving.startup`` starts loading them at start).
  ``available_model_names()`` lists what can be picked; ``register(name, loader)`` adds one.
- ``run_prompt(model, prompt)``: one forward pass per (model, cleaned prompt), kept in a
  bounded LRU and shared: every session gets the *same* ``PromptRun`` (numpy arrays
  read-only, id/token lists ``FrozenList``).
- ``shared(model, key, compute)`` / ``add_precompute(key, fn)``: per-model data computed
  once and shared read-only.
- ``configure(settings)``: the byte budgets and the teacher's checkpoints (start-up).

Example: run_prompt("classic", "The capital of France is").tokens
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import core
from core.engine.prompt import clean_prompt
from serving import settings as settings_module
from serving.process import limit_cpu_threads
from serving.caches import FrozenList, ResultCache, freeze
from serving.memo import set_memo_budget_mb
from serving.registry import ModelRegistry, UnknownModel
from serving.settings import Settings

__all__ = [
    "PromptRun",
    "UnknownModel",
    "add_foreign",
    "add_precompute",
    "available_model_names",
    "builtin_model_names",
    "configure",
    "foreign_model_names",
    "get_model",
    "is_foreign",
    "register",
    "registry",
    "run_prompt",
    "shared",
]

MB = 1024 * 1024
RUN_CACHE_SIZE = 256  # distinct (model, prompt) traces kept at most (and at most run_cache_mb of arrays)
_DEFAULTS = Settings()

# Built empty and started by nothing: the built-ins are registered on first use (``registry()``).
_REGISTRY = ModelRegistry(evictable_bytes=int(_DEFAULTS.snapshot_mb * MB))
_RUNS = ResultCache(maxsize=RUN_CACHE_SIZE, max_bytes=int(_DEFAULTS.run_cache_mb * MB))
_BUILTINS: tuple[str, ...] = tuple(core.BUILTIN_PRESETS)
_FOREIGN: dict[str, Any] = {}
_SETUP_LOCK = threading.Lock()
_SET_UP = False


def _threads() -> int:
    return settings_module.active().threads


def _builtin_loader(name: str) -> Callable[[], Any]:
    def load() -> Any:
        limit_cpu_threads(_threads())
        return core.load_builtin(name)

    load.__name__ = f"load_builtin_{name}"
    return load


def _forget_runs(name: str) -> None:
    """An unloaded model's cached forward passes go with it (they come back on its next use)."""
    _RUNS.discard_where(lambda key: isinstance(key, tuple) and bool(key) and key[0] == name)


def registry() -> ModelRegistry:
    """The process' model registry, the built-ins registered (once, on first use; nothing loads)."""
    global _SET_UP
    if not _SET_UP:
        with _SETUP_LOCK:
            if not _SET_UP:
                for name in _BUILTINS:
                    _REGISTRY.register(name, _builtin_loader(name))
                _REGISTRY.on_evict(_forget_runs)
                _SET_UP = True
    return _REGISTRY


def configure(settings: Settings) -> None:
    """Apply the byte budgets and serve the teacher's checkpoints (``models`` / ``models.toml``)."""
    registry().evictable_bytes = int(settings.snapshot_mb * MB)
    _RUNS.max_bytes = int(settings.run_cache_mb * MB)
    set_memo_budget_mb(settings.cache_mb)
    for name, folder in _catalogue(settings).items():
        add_foreign(name, folder)


# --- foreign checkpoints the teacher named at server start -------------------------------------


def _foreign_loader(name: str, folder: Any) -> Callable[[], Any]:
    def load() -> Any:
        active = settings_module.active()
        limit_cpu_threads(active.threads)
        # A ForeignModelError says what is wrong (translated by ui.messages).
        from core.foreign import load_hf_model

        return load_hf_model(folder, name=name, memory_limit_mb=active.memory_limit_mb or None)

    load.__name__ = f"load_foreign_{name}"
    return load


def _catalogue(settings: Settings) -> dict[str, Any]:
    toml_path = Path(settings.models_toml) if settings.models_toml else None
    from core.foreign import load_catalogue

    catalogue = load_catalogue(settings.models, toml_path, _BUILTINS)
    for problem in catalogue.problems:  # the teacher's typo: the server log says which entry was skipped
        print(f"[token-journey] models: {problem}", file=sys.stderr)
    return dict(catalogue.models)


def add_foreign(name: str, folder: Any) -> None:
    """Serve a checkpoint folder under ``name`` (server start and tests only: never from a widget)."""
    if name in _BUILTINS:
        raise ValueError(f"{name!r} is a built-in model name")
    registry().register(name, _foreign_loader(name, folder), replace=True)
    _FOREIGN[name] = folder


def foreign_model_names() -> list[str]:
    """The teacher's configured checkpoints (``TOKEN_JOURNEY_MODELS`` / ``models.toml``), in order."""
    return list(_FOREIGN)


def is_foreign(name: str) -> bool:
    return name in _FOREIGN


def register(name: str, loader: Callable[[], Any], *, replace: bool = False, evictable: bool = False) -> None:
    """Make another model selectable: ``loader()`` returns a ``LoadedModel``-like object.

    It is called at most once, on first use (or ``registry().load_in_background([name])``);
    ``evictable``: it may be unloaded under the ``snapshot_mb`` budget and is then called again.
    """
    registry().register(name, loader, replace=replace, evictable=evictable)


def available_model_names() -> list[str]:
    """Every registered model, built-ins first, in registration order."""
    return registry().names()


def builtin_model_names() -> list[str]:
    return list(_BUILTINS)


def public_model_names() -> tuple[str, ...]:
    """The models every session can pick: the built-ins, then the teacher's checkpoints."""
    return (*_BUILTINS, *_FOREIGN)


def get_model(name: str) -> Any:
    """The loaded model ``name`` shared by every session (never mutate it).

    Raises ``UnknownModel`` (a ``KeyError``) for a name that was never registered and
    ``CheckpointError`` for a broken checkpoint.
    """
    return registry().get(name)


def add_precompute(key: str, fn: Callable[[Any], Any]) -> None:
    """Compute ``fn(loaded)`` once per model, right after its load, shared read-only."""
    registry().add_precompute(key, fn)


def shared(model_name: str, key: str, compute: Callable[[Any], Any] | None = None) -> Any:
    """Per-model shared data under ``key`` (a precompute hook's result, or ``compute(loaded)`` once)."""
    return registry().derived(model_name, key, compute)


def name_of(loaded: Any) -> str | None:
    """The registry name of a model every session can pick (a built-in or the teacher's own) under
    which ``loaded`` was loaded; None for a session model (a snapshot, a live-trained model)."""
    for name in public_model_names():
        if _REGISTRY.is_loaded(name) and _REGISTRY.get(name) is loaded:
            return name
    return None


# --- one forward pass per (model, prompt) --------------------------------------------------


@dataclass(frozen=True)
class PromptRun:
    """One forward pass over the sidebar prompt, as plain numpy (shared: read-only)."""

    model_name: str
    text: str
    ids: list[int]  # a FrozenList
    tokens: list[str]  # a FrozenList
    logits: np.ndarray  # (pos, vocab), read-only
    trace: dict[str, np.ndarray]  # read-only arrays
    truncated_from: int | None  # original token count when the prompt was cut to n_ctx − 1

    def labels(self) -> list[str]:
        """Unique, readable axis labels: ``"3·首都"`` (position · token)."""
        return [f"{i}·{tok}" for i, tok in enumerate(self.tokens)]


def _compute_run(model_name: str, text: str) -> PromptRun:
    loaded = get_model(model_name)
    ids = loaded.tokenizer.encode(text)
    keep = max(1, loaded.config.n_ctx - 1)  # one place stays free, so Generation can always write a token
    truncated_from = None
    if len(ids) > keep:
        truncated_from = len(ids)
        ids = ids[-keep:]  # keep the end: it is what the next token depends on
    logits, trace = loaded.model.run_with_trace(ids)
    show = getattr(loaded.tokenizer, "display_tokens", None)  # a checkpoint's own tokenizer: readable byte tokens
    tokens = show(ids) if show is not None else [loaded.tokenizer.decode([i]) for i in ids]
    return PromptRun(model_name, text, FrozenList(ids), FrozenList(tokens), freeze(logits), freeze(trace),
                     truncated_from)


def run_prompt(model_name: str, prompt: str) -> PromptRun:
    """Clean the prompt and run the model (computed once, however many ask at once); raises
    ``PromptProblem`` for bad text and ``UnknownModel`` for a name never registered."""
    text = clean_prompt(prompt).text
    if model_name not in registry():
        raise UnknownModel(model_name)
    return _RUNS.get_or_compute((model_name, text), lambda: _compute_run(model_name, text))
