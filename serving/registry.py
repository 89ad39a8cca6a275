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
- ``ResultCache``: a bounded, thread-safe LRU of immutable results with single-flight
  computation (thirty students sending the same new prompt cause one forward, not thirty).
- ``freeze(value)``: numpy arrays (also inside dicts, lists, tuples and frozen dataclasses)
  made read-only in place, so a page that tries to modify a shared result fails loudly
  instead of corrupting every other student's view.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import pickle
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from serving.workers import SHUTTING_DOWN, start_worker  # noqa: F401 - importable from here too

__all__ = [
    "ByteBudget",
    "FrozenList",
    "estimate_bytes",
    "memo",
    "ModelRegistry",
    "ResultCache",
    "UnknownModel",
    "freeze",
]


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


_PLAIN_ATOMS = frozenset((str, int, float, bool, type(None), bytes))


def freeze(value: Any) -> Any:
    """Make every numpy array in ``value`` read-only (in place) and return ``value``.

    Walks dicts, lists, tuples, sets of such and dataclass instances. Plain lists are returned
    as ``FrozenList`` copies only when they are the top-level value or a dict value; lists
    nested in frozen dataclasses are left as they are (a frozen dataclass cannot be rebuilt
    without knowing its constructor).
    """
    if type(value) in _PLAIN_ATOMS:  # most of a chart's rows: nothing to freeze, asked first
        return value
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


_ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None))


def estimate_bytes(value: Any, _seen: set[int] | None = None, _depth: int = 0) -> int:
    """About how many bytes ``value`` keeps alive: numpy arrays and torch tensors by their buffers,
    strings and numbers by ``sys.getsizeof``, containers, dataclasses, data frames and plain
    objects (their ``__dict__`` / ``__slots__``) by walking them. Each object is counted once (a
    shared array inside two results of one value counts once); modules, classes and functions
    count nothing (they are not the cached result). An estimate for cache budgets, not an audit.

    Example: estimate_bytes(np.zeros(1000)) >= 8000; estimate_bytes("abc") > 3
    """
    seen = set() if _seen is None else _seen
    if isinstance(value, (bool, type(None))) or id(value) in seen:
        return 0
    if isinstance(value, _ATOMS):
        if isinstance(value, (str, bytes, bytearray)) and len(value) > 64:
            seen.add(id(value))  # a long text shared by two results: once
        return sys.getsizeof(value)
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        own = 0 if value.base is not None and id(value.base) in seen else value.nbytes
        if value.dtype.hasobject:
            own += sum(estimate_bytes(v, seen, _depth + 1) for v in value.ravel().tolist())
        return sys.getsizeof(value) - (value.nbytes if value.flags.owndata else 0) + own
    if isinstance(value, np.generic):
        return value.nbytes + 32
    if _depth > 64 or isinstance(value, type) or callable(value) and not hasattr(value, "__dict__"):
        return 0
    kind = type(value)
    if kind.__module__.startswith("torch") and hasattr(value, "element_size") and hasattr(value, "nelement"):
        return int(value.element_size() * value.nelement()) + 160
    if kind.__name__ in ("DataFrame", "Series") and hasattr(value, "memory_usage"):
        return _frame_bytes(value)
    if kind.__name__ in ("Table", "RecordBatch") and hasattr(value, "nbytes"):  # pyarrow
        return int(value.nbytes)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(estimate_bytes(k, seen, _depth + 1) + estimate_bytes(v, seen, _depth + 1)
                                          for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        if isinstance(value, (list, tuple)):
            return sys.getsizeof(value) + _sequence_bytes(value, seen, _depth)
        return sys.getsizeof(value) + sum(estimate_bytes(v, seen, _depth + 1) for v in value)
    if type(value).__module__ in ("builtins", "types") or isinstance(value, type(sys)):
        return 0
    total = sys.getsizeof(value)
    if dataclasses.is_dataclass(value):
        return total + sum(estimate_bytes(getattr(value, f.name, None), seen, _depth + 1)
                           for f in dataclasses.fields(value))
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        total += sum(estimate_bytes(v, seen, _depth + 1) for v in attrs.values())
    for slot in getattr(kind, "__slots__", ()):
        if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
            total += estimate_bytes(getattr(value, slot, None), seen, _depth + 1)
    return total


def _frame_bytes(frame: Any) -> int:
    """A pandas data frame's (or series') bytes: its columns' buffers and its index.

    ``memory_usage(deep=True)`` gives the same count but builds a series of usages and, for
    pandas 3's Arrow-backed text columns, walks their chunks (0.8 ms a column): a new chart spec
    of a few data frames cost 3-6 ms to size, more than building it. Here a numpy-backed column
    is its ``nbytes`` (object columns: their items too, as ``deep=True`` counts them) and an
    Arrow-backed one the total size of its Arrow buffers.
    """
    try:
        import pandas as pd

        columns = [frame] if frame.ndim == 1 else [column for _, column in frame.items()]
        total = int(frame.index.memory_usage(deep=True))
        for column in columns:
            array = column.array
            if isinstance(array, pd.arrays.ArrowExtensionArray):  # text columns in pandas 3: no copy
                total += int(array.__arrow_array__().get_total_buffer_size())
            elif isinstance(array, pd.arrays.NumpyExtensionArray):
                values = array.to_numpy()
                total += int(values.nbytes)
                if values.dtype.hasobject:
                    total += sum(sys.getsizeof(item) for item in values.tolist())
            else:  # categorical, nullable integers, ...: pandas' own count
                total += int(column.memory_usage(index=False, deep=True))
        return total
    except Exception:  # an exotic column type: pandas' own count, else the frame object itself
        try:
            usage = frame.memory_usage(index=True, deep=True)
            return int(usage.sum() if hasattr(usage, "sum") else usage)
        except Exception:
            return sys.getsizeof(frame)


_SHORT_ATOMS = frozenset((int, float, complex))  # exact types: bool is counted as 0 above


def _atom_bytes(value: Any) -> int | None:
    """``estimate_bytes`` of a number or a short string (nothing to remember as seen), else None."""
    kind = type(value)
    if kind in _SHORT_ATOMS or kind is str and len(value) <= 64:
        return sys.getsizeof(value)
    if kind is bool or value is None:
        return 0
    return None


def _sequence_bytes(items: list | tuple, seen: set[int], depth: int) -> int:
    """The items of a list or tuple, the same sum as walking each with ``estimate_bytes``, with
    numbers, short strings and rows of them (a chart's or table's row dicts) counted in place:
    one function call per item instead of one per value (a 2,000-row table: 7 ms -> 2 ms)."""
    total = 0
    for item in items:
        size = _atom_bytes(item)
        if size is not None:
            total += size
            continue
        if type(item) is dict and id(item) not in seen:
            seen.add(id(item))
            total += sys.getsizeof(item)
            for k, v in item.items():
                for part in (k, v):
                    size = _atom_bytes(part)
                    total += size if size is not None else estimate_bytes(part, seen, depth + 2)
            continue
        total += estimate_bytes(item, seen, depth + 1)
    return total


class ByteBudget:
    """One least-recently-used byte budget shared by several ``ResultCache`` objects.

    Every cache registered with it reports its entries' sizes; when the sum passes
    ``max_bytes``, the entries used longest ago — in whichever cache — are dropped (the entry
    just added is always kept, however big). Thread-safe; a cache's lock is never taken while
    this one's is held.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be at least 0")
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._order: OrderedDict[tuple[int, Hashable], tuple[ResultCache, int]] = OrderedDict()
        self.total_bytes = 0
        self.evictions = 0

    def touch(self, cache: ResultCache, key: Hashable) -> None:
        with self._lock:
            slot = (id(cache), key)
            if slot in self._order:
                self._order.move_to_end(slot)

    def add(self, cache: ResultCache, key: Hashable, size: int) -> list[tuple[ResultCache, Hashable]]:
        """Record an entry; returns the (cache, key) entries to drop to stay within budget."""
        victims: list[tuple[ResultCache, Hashable]] = []
        with self._lock:
            slot = (id(cache), key)
            old = self._order.pop(slot, None)
            if old is not None:
                self.total_bytes -= old[1]
            self._order[slot] = (cache, size)
            self.total_bytes += size
            while self.total_bytes > self.max_bytes and len(self._order) > 1:
                (_, old_key), (old_cache, old_size) = next(iter(self._order.items()))
                if old_cache is cache and old_key == key:
                    break  # only the new entry is left over the budget: keep it
                self._order.popitem(last=False)
                self.total_bytes -= old_size
                self.evictions += 1
                victims.append((old_cache, old_key))
        return victims

    def discard(self, cache: ResultCache, key: Hashable) -> None:
        with self._lock:
            old = self._order.pop((id(cache), key), None)
            if old is not None:
                self.total_bytes -= old[1]

    def discard_cache(self, cache: ResultCache) -> None:
        with self._lock:
            for slot in [s for s, (c, _) in self._order.items() if c is cache]:
                self.total_bytes -= self._order.pop(slot)[1]


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
                 sizeof: Callable[[Any], int] | None = None, budget: ByteBudget | None = None,
                 count_keys: bool = False) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.max_bytes = max_bytes  # also evict (oldest first) while the values' total is above this
        self.budget = budget  # a byte budget shared with other caches (``memo``: one per process)
        self._sizeof = sizeof or (estimate_bytes if budget is not None else nbytes)
        self._count_keys = count_keys  # an entry's size includes its key's (``memo``: keys built from arguments)
        self._freeze = freeze_values
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}
        self.total_bytes = 0
        self._flights: dict[Hashable, _Flight] = {}
        self.hits = 0
        self.misses = 0
        self.evictions = 0  # entries dropped by the shared byte budget

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        hit = False
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                value, hit = self._data[key], True
            else:
                flight = self._flights.get(key)
                owner = flight is None
                if owner:
                    flight = self._flights[key] = _Flight()
                    self.misses += 1
        if hit:
            if self.budget is not None:
                self.budget.touch(self, key)  # its own lock, never inside ours
            return value
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
        measured = self.max_bytes is not None or self.budget is not None
        size = self._sizeof(value) if measured else 0
        if measured and self._count_keys:
            size += estimate_bytes(key)
        dropped: list[Hashable] = []
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
                dropped.append(old_key)
            self._flights.pop(key, None)
        flight.value = value
        flight.done.set()
        if self.budget is not None:
            for old_key in dropped:
                self.budget.discard(self, old_key)
            for cache, old_key in self.budget.add(self, key, size):
                cache._drop(old_key)
        return value

    def _drop(self, key: Hashable) -> None:
        """Forget one entry (its budget already let it go)."""
        with self._lock:
            if key in self._data:
                del self._data[key]
                self.total_bytes -= self._sizes.pop(key, 0)
                self.evictions += 1

    def values(self) -> list[Any]:
        """The cached values, least recently used first (a snapshot of them)."""
        with self._lock:
            return list(self._data.values())

    def discard_where(self, predicate: Callable[[Hashable], bool]) -> int:
        """Forget every entry whose key matches ``predicate`` (server code: an unloaded model's
        results); returns how many were dropped."""
        with self._lock:
            keys = [k for k in self._data if predicate(k)]
            for key in keys:
                del self._data[key]
                self.total_bytes -= self._sizes.pop(key, 0)
        if self.budget is not None:
            for key in keys:
                self.budget.discard(self, key)
        return len(keys)

    def clear(self) -> None:
        """Only for tests and deliberate server-side resets (no browser can reach this)."""
        with self._lock:
            self._data.clear()
            self._sizes.clear()
            self.total_bytes = 0
        if self.budget is not None:
            self.budget.discard_cache(self)


Loader = Callable[[], Any]
Precompute = Callable[[Any], Any]


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


# --- shared results of pure functions ----------------------------------------------------------

_MEMOS: dict[tuple[str, str], ResultCache] = {}
_MEMOS_LOCK = threading.Lock()

# Every ``memo`` cache of the process shares one byte budget (least recently used entries go
# first, whichever function they belong to): chart specs, figures and derived tables stay
# within it however many prompts a class tries. Estimated sizes (``estimate_bytes``); a chart
# spec is 10 KB-1 MB, so 40 MB keeps a few hundred; more kept little: a class of 30 fills 64 MB in
# ~3 minutes with views nobody asks for again, and each MB is RSS a replica keeps.
MEMO_BUDGET_MB_DEFAULT = 40


def set_memo_budget_mb(mb: float) -> None:
    """Resize the budget every ``memo`` cache shares (start-up, from ``Settings.cache_mb``)."""
    MEMO_BUDGET.max_bytes = int(max(0.0, mb) * 1024 * 1024)


MEMO_BUDGET = ByteBudget(int(MEMO_BUDGET_MB_DEFAULT * 1024 * 1024))


def memo_bytes() -> int:
    """Estimated bytes held by every ``memo`` cache together (at most ``MEMO_BUDGET.max_bytes``
    plus the newest entry)."""
    return MEMO_BUDGET.total_bytes


def _plain_kind(value: list | tuple) -> str | None:
    """For a long list whose items are keys as they are, their kind ("str", "int", "float"): strings
    and None (never equal to another kind), only ints, or only floats without NaN (ints and floats
    apart, since 1 == 1.0; NaN is not equal to itself, so it takes the general path, which makes it
    equal). None for anything else, and for short lists (their keys keep the general form)."""
    if len(value) < PLAIN_KEY_MIN_ITEMS:
        return None
    kinds = set(map(type, value))
    if kinds <= _STR_OR_NONE:
        return "str"
    if kinds == _INT:
        return "int"
    if kinds == _FLOAT and not any(v != v for v in value):
        return "float"
    return None


PLAIN_KEY_MIN_ITEMS = 32
_STR_OR_NONE, _INT, _FLOAT = frozenset({str, type(None)}), frozenset({int}), frozenset({float})
# A key part bigger than this is kept as a 128-bit digest of its content, not as a copy: a memo
# entry's key used to hold every array argument's bytes and every long list as a tuple (the
# embedding map's key: its 5,933 coordinates, labels and categories, ~250 KB), which no byte
# budget counted, so memory grew with every new entry although the values stayed in budget.
KEY_DIGEST_MIN_BYTES = 256


def _digest(data: Any) -> bytes:
    """128-bit BLAKE2b of a buffer (as ``st.cache_data`` keys its arguments by a hash)."""
    return hashlib.blake2b(data, digest_size=16).digest()


def _plain_digest(items: tuple) -> bytes:
    """Digest of a tuple of plain values by content (pickle without its memo: two equal tuples
    give the same bytes whichever string objects they hold)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True  # no memo: equal content, equal bytes
    pickler.dump(items)
    return _digest(buffer.getbuffer())


# Key parts of shared read-only arguments, remembered while the object lives: a page passes the
# same frozen table (the embedding map's 5,933 coordinates and labels) to its memoised chart
# builders on every rerun, and digesting it again cost ~3 ms of an Embeddings rerun.
_SHARED_KEY_PARTS: dict[int, tuple[weakref.ref, Hashable]] = {}


def _immutable_for_key(value: Any) -> bool:
    """An argument whose content cannot change while it lives: a read-only array that owns its
    buffer (a view could see a writable base change; a tensor's buffer is torch's), or a
    ``FrozenList`` (its plain items are then keyed by content)."""
    if type(value) is np.ndarray:
        return not value.flags.writeable and value.flags.owndata and value.nbytes >= KEY_DIGEST_MIN_BYTES
    return type(value) is FrozenList and len(value) >= PLAIN_KEY_MIN_ITEMS


def _key_part(value: Any) -> Hashable:
    if _immutable_for_key(value):
        key = id(value)
        held = _SHARED_KEY_PARTS.get(key)
        if held is not None and held[0]() is value:
            return held[1]
        part = _key_part_of(value)
        if type(value) is FrozenList and part[1] != "plain#":
            return part  # items of other kinds (dicts, arrays) may change: keyed afresh each time
        _SHARED_KEY_PARTS[key] = (weakref.ref(value, lambda _ref, key=key: _SHARED_KEY_PARTS.pop(key, None)), part)
        return part
    return _key_part_of(value)


def _key_part_of(value: Any) -> Hashable:
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:  # pointers are no key: compare the objects themselves
            return ("ndarray-object", value.shape, tuple(_key_part(v) for v in value.ravel().tolist()))
        if value.nbytes < KEY_DIGEST_MIN_BYTES:
            return ("ndarray", value.shape, value.dtype.str, value.tobytes())
        return ("ndarray#", value.shape, value.dtype.str, _digest(np.ascontiguousarray(value).view(np.uint8).data))
    if type(value).__name__ in ("DataFrame", "Series") and hasattr(value, "to_numpy"):
        index = tuple(_key_part(v) for v in value.index.tolist())
        columns = tuple(repr(c) for c in getattr(value, "columns", [value.name]))
        return (type(value).__name__, columns, index, _key_part(np.asarray(value.to_numpy())))
    if isinstance(value, (list, tuple)):
        kind = _plain_kind(value)
        if kind is not None:  # e.g. a vocabulary's 5,933 labels: by a digest of their content
            return (type(value).__name__, "plain#", kind, len(value), _plain_digest(tuple(value)))
        return (type(value).__name__, tuple(_key_part(v) for v in value))
    if isinstance(value, dict):  # in order: a chart's series order is its legend order
        return ("dict", tuple((repr(k), _key_part(v)) for k, v in value.items()))
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
    arrays (keyed by content: an array of 256 bytes or more, and a list of 32 plain items or more,
    by a 128-bit digest of it, so a key stays small). Besides ``maxsize`` entries per function, all
    memo caches share one byte budget (the ``cache_mb`` setting, default 40 MB; ``estimate_bytes``
    of each entry's value and key): past it the least recently used entries of any of them are
    dropped, so memory stays flat over a lesson.

    Example::

        @memo(maxsize=64)
        def chart_spec(model: str, layer: int) -> dict: ...
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        ident = (fn.__code__.co_filename, fn.__qualname__)
        with _MEMOS_LOCK:
            cache = _MEMOS.get(ident)
            if cache is None or cache.maxsize != maxsize:
                if cache is not None:
                    MEMO_BUDGET.discard_cache(cache)
                cache = _MEMOS[ident] = ResultCache(maxsize=maxsize, budget=MEMO_BUDGET, count_keys=True)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = (_key_part(args), _key_part(kwargs))
            return cache.get_or_compute(key, lambda: fn(*args, **kwargs))

        wrapper.cache = cache  # type: ignore[attr-defined]
        return wrapper

    return decorate
