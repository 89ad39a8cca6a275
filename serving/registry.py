"""Process-wide, lock-protected registries for shared read-only objects (no Streamlit).

A classroom server keeps one model per name and one result per (model, prompt) for every
student. Streamlit's own caches can be emptied by any browser (a ``clear_cache``
back-message is honoured even with the menu hidden), so the shared objects live here, in
plain module-level objects that only this process' code can touch:

- ``ModelRegistry``: ``register(name, loader)`` once, ``get(name)`` loads it at most once
  (concurrent callers wait for the one load and get the same object), per-model
  precomputation hooks (``add_precompute(key, fn)``: ``fn(loaded)`` runs once per model, its
  result frozen and shared), and ``load_in_background(names)``. Models registered with
  ``evictable=True`` (the Training page's snapshots: their loader can always read them again)
  share one byte budget: past it the least recently used one is unloaded with its derived
  data, and its next ``get`` loads it again, transparently.

The caches (``ResultCache``, ``freeze``: ``serving.caches``), ``memo`` (``serving.memo``) and the
background workers (``serving.workers``) are importable from here too, where pages and charts
import them.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

# Importable from here too (pages and charts import them from serving.registry):
from serving.caches import ByteBudget, FrozenList, ResultCache, estimate_bytes, freeze, nbytes  # noqa: F401
from serving.memo import MEMO_BUDGET, MEMO_BUDGET_MB_DEFAULT, memo, memo_bytes, memo_misses, set_memo_budget_mb  # noqa: F401
from serving.workers import SHUTTING_DOWN, start_worker

__all__ = ["ModelRegistry", "UnknownModel"]


Loader = Callable[[], Any]
Precompute = Callable[[Any], Any]


class UnknownModel(KeyError):
    """A model name that was never registered."""


class _Entry:
    __slots__ = ("loader", "evictable", "load_lock", "prepare_lock", "loaded", "derived", "error", "ready")

    def __init__(self, loader: Loader, evictable: bool = False) -> None:
        self.loader = loader
        self.evictable = evictable  # may be unloaded under the registry's byte budget (and loaded again)
        self.load_lock = threading.Lock()  # one load per model; other models load in parallel
        self.prepare_lock = threading.Lock()  # one precomputation pass
        self.loaded: Any = None
        self.derived = ResultCache(maxsize=1 << 30)  # single-flight per key, frozen values
        self.error: BaseException | None = None
        self.ready = threading.Event()  # set when load + every precomputation are done


class ModelRegistry:
    """Name -> loader -> one shared, loaded model per process, plus per-model derived data.

    Example::

        registry = ModelRegistry()
        registry.register("classic", lambda: core.load_builtin("classic"))
        registry.add_precompute("pca", lambda loaded: pca_of(loaded))
        loaded = registry.get("classic")            # loads once; every caller gets this object
        table = registry.derived("classic", "pca")  # computed once per model, shared read-only

    ``get`` returns as soon as the model is loaded; the precomputation hooks then run on the
    loading thread (``load_in_background``) or on a helper thread (a first ``get`` from a
    page), and ``derived`` waits for a hook that is still running instead of repeating it.

    ``evictable_bytes``: the estimated bytes (``estimate_bytes`` of the model and its derived
    data) that models registered with ``evictable=True`` may keep loaded together; past it the
    least recently used of them (never the one just loaded) is unloaded: its entry starts
    afresh, so the next ``get`` / ``derived`` loads and precomputes it again (same loader, same
    result), and ``on_evict`` callbacks run (``ui.resources`` drops its cached runs). A page
    still holding the old object keeps a valid one; it is freed when the last holder lets go.
    None: never unload.
    """

    def __init__(self, evictable_bytes: int | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._order: list[str] = []
        self._precompute: dict[str, Precompute] = {}
        self._on_ready: list[Callable[[str, Any], None]] = []
        self._on_evict: list[Callable[[str], None]] = []
        self.evictable_bytes = evictable_bytes
        # Called (on the precompute thread) before a model's precomputations start: the server
        # holds them back while the first student's first page is drawn (``ui.resources``).
        self.prepare_gate: Callable[[], None] | None = None
        self._resident: OrderedDict[str, int] = OrderedDict()  # loaded evictable models, LRU first: bytes
        self.evictions = 0

    # --- registration ------------------------------------------------------------------

    def register(self, name: str, loader: Loader, *, replace: bool = False, evictable: bool = False) -> None:
        """Make ``name`` loadable with ``loader()`` (called once, on first ``get``; again after an
        eviction when ``evictable``: the loader must then give the same model every time)."""
        if not isinstance(name, str) or not name:
            raise ValueError("a model name is a non-empty string")
        if not callable(loader):
            raise TypeError("loader must be callable")
        with self._lock:
            if name in self._entries and not replace:
                if self._entries[name].loader is loader:
                    return
                raise ValueError(f"model {name!r} is already registered")
            if name not in self._entries:
                self._order.append(name)
            self._entries[name] = _Entry(loader, evictable)
            self._resident.pop(name, None)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (server code and tests only; no browser message reaches this)."""
        with self._lock:
            self._entries.pop(name, None)
            self._resident.pop(name, None)
            if name in self._order:
                self._order.remove(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        with self._lock:
            return list(self._order)

    def __contains__(self, name: object) -> bool:
        with self._lock:
            return name in self._entries

    def add_precompute(self, key: str, fn: Precompute) -> None:
        """Run ``fn(loaded)`` once for every model (at its load; models already loaded: lazily)."""
        with self._lock:
            self._precompute[key] = fn

    def on_ready(self, callback: Callable[[str, Any], None]) -> None:
        """Call ``callback(name, loaded)`` after each model's load and precomputation."""
        with self._lock:
            self._on_ready.append(callback)

    def on_evict(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(name)`` after an evictable model was unloaded under the byte budget."""
        with self._lock:
            self._on_evict.append(callback)

    # --- the evictable models' byte budget ---------------------------------------------

    def resident(self) -> dict[str, int]:
        """Loaded evictable models (least recently used first) and their estimated bytes."""
        with self._lock:
            return dict(self._resident)

    def _touch(self, name: str, entry: _Entry) -> None:
        with self._lock:
            if name in self._resident and self._entries.get(name) is entry:
                self._resident.move_to_end(name)

    def _admit(self, name: str, entry: _Entry) -> None:
        """(Re)measure a loaded evictable model with its derived data, then keep within budget."""
        size = estimate_bytes((entry.loaded, entry.derived.values()))
        victims: list[str] = []
        with self._lock:
            if self._entries.get(name) is not entry or entry.loaded is None:
                return  # unloaded or replaced meanwhile
            self._resident[name] = size
            self._resident.move_to_end(name)
            if self.evictable_bytes is not None:
                total = sum(self._resident.values())
                for old in list(self._resident):
                    if total <= self.evictable_bytes:
                        break
                    if old == name:
                        continue  # the model just asked for stays, however big
                    total -= self._resident.pop(old)
                    previous = self._entries.get(old)
                    if previous is not None:
                        self._entries[old] = _Entry(previous.loader, evictable=True)  # loads again on next use
                    self.evictions += 1
                    victims.append(old)
            callbacks = list(self._on_evict)
        for old in victims:
            for callback in callbacks:
                try:
                    callback(old)
                except Exception as err:  # a cache that could not be trimmed must not break the page
                    print(f"[token-journey] on_evict({old!r}) failed: {err}", file=sys.stderr)

    # --- access ------------------------------------------------------------------------

    def _entry(self, name: str) -> _Entry:
        with self._lock:
            entry = self._entries.get(name) if isinstance(name, str) else None
        if entry is None:
            raise UnknownModel(name)
        return entry

    def is_loaded(self, name: str) -> bool:
        with self._lock:
            entry = self._entries.get(name) if isinstance(name, str) else None
            return entry is not None and entry.loaded is not None

    def is_ready(self, name: str) -> bool:
        """Loaded and every precomputation done."""
        return self._entry(name).ready.is_set()

    def wait_ready(self, name: str, timeout: float | None = None) -> bool:
        return self._entry(name).ready.wait(timeout)

    def get(self, name: str) -> Any:
        """The loaded model; the first caller loads it, concurrent callers wait for that load."""
        entry = self._entry(name)
        loaded = self._load(name, entry)
        if entry.evictable:
            self._touch(name, entry)
        return loaded

    def _load(self, name: str, entry: _Entry) -> Any:
        if entry.loaded is not None:
            return entry.loaded
        with entry.load_lock:
            if entry.loaded is not None:
                return entry.loaded
            entry.loaded = entry.loader()
            entry.error = None
        if entry.evictable:
            self._admit(name, entry)
        start_worker(self._prepare, f"precompute-{name}", name, entry)
        return entry.loaded

    def _prepare(self, name: str, entry: _Entry | None = None) -> None:
        """Every precomputation for ``name`` (each at most once), then the ready callbacks."""
        entry = entry or self._entry(name)
        gate = self.prepare_gate
        if gate is not None:
            gate()
        with entry.prepare_lock:
            if entry.ready.is_set():
                return
            with self._lock:
                keys = list(self._precompute)
                callbacks = list(self._on_ready)
                current = self._entries.get(name) is entry
            for key in keys if current else ():  # an entry unloaded meanwhile: nothing to prepare
                try:
                    self._derived(name, entry, key, None)
                except Exception as err:  # the page that needs it computes again and shows the error
                    entry.error = err
            entry.ready.set()
        if not current:
            return
        for callback in callbacks:
            callback(name, entry.loaded)

    def derived(self, name: str, key: str, compute: Precompute | None = None) -> Any:
        """Per-model shared data: a precompute hook's result (or ``compute(loaded)``), once."""
        return self._derived(name, self._entry(name), key, compute)

    def _derived(self, name: str, entry: _Entry, key: str, compute: Precompute | None) -> Any:
        loaded = self._load(name, entry)
        computed: list[bool] = []

        def run() -> Any:
            fn = compute
            if fn is None:
                with self._lock:
                    fn = self._precompute.get(key)
                if fn is None:
                    raise KeyError(f"no precomputation {key!r}")
            computed.append(True)
            return fn(loaded)

        value = entry.derived.get_or_compute(key, run)
        if entry.evictable:
            if computed:
                self._admit(name, entry)  # measured again with the new table (may unload another model)
            else:
                self._touch(name, entry)
        return value

    def load_in_background(self, names: Iterable[str] | None = None) -> threading.Thread:
        """Load (and precompute) the given models, in order, on one daemon thread."""
        todo = list(self.names() if names is None else names)

        def work() -> None:
            for name in todo:
                try:
                    self.get(name)
                    self._prepare(name)
                except Exception as err:  # a broken checkpoint: the page that asks shows it
                    self._entry(name).error = err

        return start_worker(work, "token-journey-model-loader")
