"""Models that only one session sees in its sidebar: built-in snapshots and models trained live.

Both kinds are loaded ONCE into the process-wide registry (``ui.resources``) and shared read-only
like any model, but their names are *scoped*: the sidebar's model list (``ui.state``'s allowed
set for the model) shows a scoped name only to the sessions that asked for it, the Training page's
"view the app at step s" button or its finished live run. A name typed into the URL or sent by a
tampered client is checked like any other model name: not offered to this session, not valid.

- ``snapshot_model_name(preset, step)``: registers "classic @ step 241" after checking the preset
  against the built-ins and the step against the snapshot index (never a path from a value).
  Snapshots are *evictable*: the registry keeps the recently used ones within a byte budget
  (the ``snapshot_mb`` setting) and loads an unloaded one again when a session uses it.
- ``add_trained(loaded)``: a live-trained model; at most ``MAX_TRAINED`` are kept process-wide
  (the oldest is dropped from the registry; its sessions fall back to the default model).
- ``offer(name)`` / ``mine()`` / ``visible(names)``: this session's list.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import streamlit as st

import core
from core.engine.checkpoint import ASSETS_MODELS
from core.training.snapshots import SnapshotError, load_snapshot, read_index, snapshot_name
from serving import settings
from ui import resources

MAX_PER_SESSION = 6  # scoped names one session keeps in its list (the newest)
MAX_TRAINED = 24  # live-trained models kept in memory for the whole server
_SESSION_KEY = "_session_models"

_LOCK = threading.Lock()
_SCOPED: set[str] = set()
_LOADERS: dict[str, Any] = {}
_TRAINED: OrderedDict[str, None] = OrderedDict()
_INDEX: dict[str, Any] = {}


def snapshot_root() -> str:
    """Where the snapshot sets live: assets/models, or (development and tests only) a folder of
    complete model folders named by the ``snapshot_root`` setting at server start."""
    return settings.active().snapshot_root or str(ASSETS_MODELS)


def snapshot_steps(preset: str) -> tuple[int, ...]:
    """The snapshot steps of a built-in model (empty if it has none): read once per process."""
    if preset not in core.BUILTIN_PRESETS:
        return ()
    with _LOCK:
        if preset not in _INDEX:
            try:
                _INDEX[preset] = read_index(os.path.join(snapshot_root(), preset))
            except SnapshotError:
                _INDEX[preset] = None
        index = _INDEX[preset]
    return index.steps if index is not None else ()


def snapshot_index(preset: str) -> Any:
    """The parsed snapshot index (``core.training.snapshots.SnapshotIndex``) or None."""
    snapshot_steps(preset)
    return _INDEX.get(preset)


def snapshot_model_name(preset: str, step: int) -> str:
    """Register (once) and return the model name of a built-in snapshot; ValueError if there is none."""
    if isinstance(step, bool) or not isinstance(step, int) or step not in snapshot_steps(preset):
        raise ValueError(f"no snapshot of {preset!r} at step {step!r}")
    name = snapshot_name(preset, step)
    with _LOCK:
        if name not in _LOADERS:
            def load(preset: str = preset, step: int = step) -> Any:
                resources.limit_cpu_threads()
                # The server's own built-in lends its tokenizer (and is the final step's model)
                # when the snapshots are those of assets/models.
                root = snapshot_root()
                same = os.path.realpath(root) == os.path.realpath(ASSETS_MODELS)
                shipped = resources.get_model(preset) if same and preset in resources.builtin_model_names() else None
                return load_snapshot(preset, step, root=root, shipped=shipped)

            load.__name__ = f"load_snapshot_{preset}_{step}"
            _LOADERS[name] = load
            _SCOPED.add(name)
        loader = _LOADERS[name]
    # Evictable: past the registry's byte budget for session models (the snapshot_mb setting)
    # the least recently used snapshot is unloaded; a session still viewing it gets it loaded
    # again, the same weights, on its next use.
    resources.register(name, loader, evictable=True)  # the same loader again is a no-op
    return name


def add_trained(name: str, loaded: Any) -> str:
    """Serve a live-trained ``LoadedModel`` under ``name`` (scoped); drops the oldest beyond MAX_TRAINED."""
    with _LOCK:
        _SCOPED.add(name)
        _TRAINED[name] = None
        _TRAINED.move_to_end(name)
        evicted = []
        while len(_TRAINED) > MAX_TRAINED:
            old, _ = _TRAINED.popitem(last=False)
            evicted.append(old)
    for old in evicted:
        resources.registry().unregister(old)
    resources.register(name, lambda: loaded, replace=True)
    return name


def is_scoped(name: str) -> bool:
    with _LOCK:
        return name in _SCOPED


def _session_list() -> list[str]:
    try:
        value = st.session_state.get(_SESSION_KEY)
    except Exception:  # no script run (server code, bare tests)
        return []
    return [n for n in value if isinstance(n, str)] if isinstance(value, list) else []


def offer(name: str) -> None:
    """Add a registered scoped model to this session's list (the newest MAX_PER_SESSION are kept)."""
    if not is_scoped(name) or name not in resources.registry():
        raise ValueError(f"{name!r} is not a session model")
    names = [n for n in _session_list() if n != name] + [name]
    st.session_state[_SESSION_KEY] = names[-MAX_PER_SESSION:]


def mine() -> list[str]:
    """This session's scoped models that are still served, oldest first."""
    registry = resources.registry()
    return [n for n in _session_list() if n in registry]


def visible(names: list[str] | tuple[str, ...]) -> list[str]:
    """The model list for this session: every unscoped name, then this session's own."""
    with _LOCK:
        scoped = set(_SCOPED)
    return [n for n in names if n not in scoped] + mine()
