"""Bounded, thread-safe caches of shared read-only results, and what they are measured in.

- ``ResultCache``: a bounded LRU of immutable results with single-flight computation (thirty
  students sending the same new prompt cause one forward, not thirty), optionally within a
  byte budget of its own or one shared with other caches (``ByteBudget``).
- ``freeze(value)``: numpy arrays (also inside dicts, lists, tuples and frozen dataclasses)
  made read-only in place, so a page that tries to modify a shared result fails loudly
  instead of corrupting every other student's view; lists become ``FrozenList``.
- ``estimate_bytes(value)`` / ``nbytes(value)``: what a cached value holds.

Example: cache = ResultCache(maxsize=8); cache.get_or_compute("k", lambda: np.zeros(3))
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

__all__ = ["ByteBudget", "FrozenList", "ResultCache", "estimate_bytes", "freeze", "nbytes"]


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

