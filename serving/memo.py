"""``memo``: a bounded, process-wide cache of a page's pure functions, within one byte budget.

Example::

    @memo(maxsize=64)
    def chart_spec(model: str, layer: int) -> dict: ...
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import pickle
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from serving.caches import ByteBudget, FrozenList, ResultCache

__all__ = ["MEMO_BUDGET", "memo", "memo_bytes", "memo_misses", "set_memo_budget_mb"]


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
