"""Process-wide, lock-protected registries for shared read-only objects (no Streamlit).

A classroom server keeps one model per name and one result per (model, prompt) for every
student. Streamlit's own caches can be emptied by any browser (a ``clear_cache``
back-message is honoured even with the menu hidden), so the shared objects live here, in
plain module-level objects that only this process' code can touch:

- ``ModelRegistry``: ``register(name, loader)`` once, ``get(name)`` loads it at most once
  (concurrent callers wait for the one load and get the same object), per-model
  precomputation hooks (``add_precompute(key, fn)``: ``fn(loaded)`` runs once per model, its
  result frozen and shared), and ``load_in_background(names)``.
- ``ResultCache``: a bounded, thread-safe LRU of immutable results with single-flight
  computation (thirty students sending the same new prompt cause one forward, not thirty).
- ``freeze(value)``: numpy arrays (also inside dicts, lists, tuples and frozen dataclasses)
  made read-only in place, so a page that tries to modify a shared result fails loudly
  instead of corrupting every other student's view.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

__all__ = [
    "FrozenList",
    "memo",
    "ModelRegistry",
    "ResultCache",
    "UnknownModel",
    "freeze",
]


# --- background workers, joined at exit --------------------------------------------------------

# A daemon thread still inside a torch kernel when the interpreter finalises can abort the
# whole process ("terminate called without an active exception"): a test run would then exit
# non-zero after every test passed. So every background worker is started here, and at exit
# ``SHUTTING_DOWN`` is set (long-running loops watch it) and the workers are joined.
SHUTTING_DOWN = threading.Event()
_WORKERS: list[threading.Thread] = []
_WORKERS_LOCK = threading.Lock()
JOIN_AT_EXIT_S = 120.0


def start_worker(target: Callable[..., Any], name: str, *args: Any) -> threading.Thread:
    """Start a daemon thread that is joined (up to ``JOIN_AT_EXIT_S``) when the process exits."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    with _WORKERS_LOCK:
        _WORKERS[:] = [t for t in _WORKERS if t.is_alive()]
        _WORKERS.append(thread)
    thread.start()
    return thread


@atexit.register
def _join_workers() -> None:
    SHUTTING_DOWN.set()
    with _WORKERS_LOCK:
        workers = list(_WORKERS)
    for thread in workers:
        if thread is not threading.current_thread():
            thread.join(JOIN_AT_EXIT_S)


class UnknownModel(KeyError):
    """A model name that was never registered."""


class FrozenList(list):
    """A list that refuses in-place changes (shared token ids / strings stay as computed).

    It is still a ``list`` (numpy fancy indexing, ``json`` and ``==`` treat it as one);
    ``list(x)`` gives a private, mutable copy. It can be weakly referenced (a chart's data
    converted once for the browser is remembered for as long as the shared list lives).
    """

    def _refuse(self, *_args: Any, **_kwargs: Any) -> None:
        raise TypeError("this list is shared read-only; copy it with list(...) first")

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (list(self),))


def freeze(value: Any) -> Any:
    """Make every numpy array in ``value`` read-only (in place) and return ``value``.

    Walks dicts, lists, tuples, sets of such and dataclass instances. Plain lists are returned
    as ``FrozenList`` copies only when they are the top-level value or a dict value; lists
    nested in frozen dataclasses are left as they are (a frozen dataclass cannot be rebuilt
    without knowing its constructor).
    """
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
        return value
    if isinstance(value, dict):
        for key in list(value):
            value[key] = freeze(value[key])
        return value
    if isinstance(value, FrozenList):
        for item in value:
            freeze(item)
        return value
    if isinstance(value, list):
        return FrozenList(freeze(item) for item in value)
    if isinstance(value, (tuple, set, frozenset)):
        for item in value:
            freeze(item)
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            freeze(getattr(value, f.name))
        return value
    return value


def nbytes(value: Any) -> int:
    """Bytes held by the numpy arrays in ``value`` (walks dicts, sequences and dataclasses)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(nbytes(v) for v in value if isinstance(v, (np.ndarray, dict, list, tuple)) or dataclasses.is_dataclass(v))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sum(nbytes(getattr(value, f.name)) for f in dataclasses.fields(value))
    return 0


class _Flight:
    """One computation in progress; other callers of the same key wait on it."""

    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class ResultCache:
    """Bounded LRU of immutable results, safe to use from many threads at once.

    ``get_or_compute(key, fn)`` returns the cached value or runs ``fn()`` exactly once per
    key even when many threads ask at the same moment (the others wait for the first); the
    value is passed through ``freeze`` before anyone sees it. Exceptions are not cached.
    """

    def __init__(self, maxsize: int = 256, *, freeze_values: bool = True, max_bytes: int | None = None,
                 sizeof: Callable[[Any], int] | None = None) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.max_bytes = max_bytes  # also evict (oldest first) while the values' total is above this
        self._sizeof = sizeof or nbytes
        self._freeze = freeze_values
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}
        self.total_bytes = 0
        self._flights: dict[Hashable, _Flight] = {}
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            flight = self._flights.get(key)
            owner = flight is None
            if owner:
                flight = self._flights[key] = _Flight()
                self.misses += 1
        if not owner:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.value
        try:
            value = compute()
            if self._freeze:
                value = freeze(value)
        except BaseException as err:
            flight.error = err
            with self._lock:
                self._flights.pop(key, None)
            flight.done.set()
            raise
        size = self._sizeof(value) if self.max_bytes is not None else 0
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            self.total_bytes += size - self._sizes.get(key, 0)
            self._sizes[key] = size
            while len(self._data) > self.maxsize or (
                self.max_bytes is not None and self.total_bytes > self.max_bytes and len(self._data) > 1
            ):
                old_key, _ = self._data.popitem(last=False)
                self.total_bytes -= self._sizes.pop(old_key, 0)
            self._flights.pop(key, None)
        flight.value = value
        flight.done.set()
        return value

    def clear(self) -> None:
        """Only for tests and deliberate server-side resets (no browser can reach this)."""
        with self._lock:
            self._data.clear()
            self._sizes.clear()
            self.total_bytes = 0


Loader = Callable[[], Any]
Precompute = Callable[[Any], Any]


class _Entry:
    __slots__ = ("loader", "load_lock", "prepare_lock", "loaded", "derived", "error", "ready")

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
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
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._order: list[str] = []
        self._precompute: dict[str, Precompute] = {}
        self._on_ready: list[Callable[[str, Any], None]] = []

    # --- registration ------------------------------------------------------------------

    def register(self, name: str, loader: Loader, *, replace: bool = False) -> None:
        """Make ``name`` loadable with ``loader()`` (called at most once, on first ``get``)."""
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
            self._entries[name] = _Entry(loader)

    def unregister(self, name: str) -> None:
        """Forget ``name`` (server code and tests only; no browser message reaches this)."""
        with self._lock:
            self._entries.pop(name, None)
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
        if entry.loaded is not None:
            return entry.loaded
        with entry.load_lock:
            if entry.loaded is not None:
                return entry.loaded
            entry.loaded = entry.loader()
            entry.error = None
        start_worker(self._prepare, f"precompute-{name}", name)
        return entry.loaded

    def _prepare(self, name: str) -> None:
        """Every precomputation for ``name`` (each at most once), then the ready callbacks."""
        entry = self._entry(name)
        with entry.prepare_lock:
            if entry.ready.is_set():
                return
            with self._lock:
                keys = list(self._precompute)
                callbacks = list(self._on_ready)
            for key in keys:
                try:
                    self.derived(name, key)
                except Exception as err:  # the page that needs it computes again and shows the error
                    entry.error = err
            entry.ready.set()
        for callback in callbacks:
            callback(name, entry.loaded)

    def derived(self, name: str, key: str, compute: Precompute | None = None) -> Any:
        """Per-model shared data: a precompute hook's result (or ``compute(loaded)``), once."""
        entry = self._entry(name)
        loaded = self.get(name)

        def run() -> Any:
            fn = compute
            if fn is None:
                with self._lock:
                    fn = self._precompute.get(key)
                if fn is None:
                    raise KeyError(f"no precomputation {key!r}")
            return fn(loaded)

        return entry.derived.get_or_compute(key, run)

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


# --- shared results of pure functions ----------------------------------------------------------

_MEMOS: dict[tuple[str, str], ResultCache] = {}
_MEMOS_LOCK = threading.Lock()


def _key_part(value: Any) -> Hashable:
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:  # pointers are no key: compare the objects themselves
            return ("ndarray-object", value.shape, tuple(_key_part(v) for v in value.ravel().tolist()))
        return ("ndarray", value.shape, value.dtype.str, value.tobytes())
    if type(value).__name__ in ("DataFrame", "Series") and hasattr(value, "to_numpy"):
        index = tuple(_key_part(v) for v in value.index.tolist())
        columns = tuple(repr(c) for c in getattr(value, "columns", [value.name]))
        return (type(value).__name__, columns, index, _key_part(np.asarray(value.to_numpy())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key_part(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _key_part(v)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in value)))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple(_key_part(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if callable(value) and hasattr(value, "__qualname__"):  # a builder function: by where it is defined
        code = getattr(value, "__code__", None)
        return ("callable", getattr(value, "__module__", ""), value.__qualname__, code.co_filename if code else "")
    if isinstance(value, float) and value != value:  # NaN: equal to itself as a key
        return ("float", "nan")
    hash(value)  # anything else must be hashable (the TypeError then names the bad argument)
    return (type(value).__name__, value)


def memo_misses() -> int:
    """How many results every ``memo`` cache has computed so far (grows when caches fill)."""
    with _MEMOS_LOCK:
        caches = list(_MEMOS.values())
    return sum(cache.misses for cache in caches)


def memo(maxsize: int = 128) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A bounded, process-wide, thread-safe cache of a pure function's results.

    Unlike ``st.cache_data`` nothing is pickled or copied: every caller gets the same object,
    passed through ``freeze`` (arrays read-only, lists ``FrozenList``). The cache is keyed by
    the function's file and qualified name, so a page script that Streamlit re-executes on
    every rerun (defining the function anew) keeps using one cache; a browser's clear-cache
    request cannot reach it. Arguments: numbers, strings, tuples/lists/dicts of them, numpy
    arrays (keyed by content).

    Example::

        @memo(maxsize=64)
        def chart_spec(model: str, layer: int) -> dict: ...
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        ident = (fn.__code__.co_filename, fn.__qualname__)
        with _MEMOS_LOCK:
            cache = _MEMOS.get(ident)
            if cache is None or cache.maxsize != maxsize:
                cache = _MEMOS[ident] = ResultCache(maxsize=maxsize)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (_key_part(args), _key_part(kwargs))
            return cache.get_or_compute(key, lambda: fn(*args, **kwargs))

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorate
