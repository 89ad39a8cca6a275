"""Shared, read-only access to the model core for every session of this server process.

Models and everything derived from them live in ``serving.registry`` objects held by this
module, not in Streamlit's caches: a ``clear_cache`` back-message (which any browser can
send, menu hidden or not) empties ``st.cache_data`` / ``st.cache_resource`` for the whole
class, but cannot reach these.

- ``get_model(name)``: the one loaded model per name (both built-ins start loading in a
  background thread when this module is first imported; a page that needs one before it is
  ready waits for that same load). ``available_model_names()`` lists what can be picked;
  ``register(name, loader)`` adds a model (e.g. a foreign checkpoint).
- ``run_prompt(model, prompt)``: one forward pass per (model, cleaned prompt), kept in a
  bounded LRU and shared: every session gets the *same* ``PromptRun`` (numpy arrays
  read-only, id/token lists ``FrozenList``), nothing is pickled or copied per rerun.
- ``shared(model, key, compute)`` / ``add_precompute(key, fn)``: per-model data computed
  once (at model load for hooks) and shared read-only; ``memo(maxsize)``: a bounded shared
  cache for a page's pure functions (chart specs, derived tables) without per-call copies.

After the built-ins are loaded and precomputed the long-lived heap is frozen
(``gc.freeze()``): Streamlit collects garbage after every script run, and without the
freeze each collection walks every object of torch, pandas, Altair and both models.
``TOKEN_JOURNEY_GC_FREEZE=0`` turns it off (for before/after measurements).
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st

import core
from core.engine.checkpoint import CheckpointError
from core.engine.prompt import PromptProblem, clean_prompt
from serving.registry import (
    SHUTTING_DOWN,
    FrozenList,
    ModelRegistry,
    ResultCache,
    UnknownModel,
    float_from_env,
    freeze,
    memo,
    memo_misses,
    start_worker,
)
from ui.i18n import t
from ui.messages import checkpoint_message

__all__ = [
    "PromptRun",
    "UnknownModel",
    "add_precompute",
    "available_model_names",
    "get_model",
    "memo",
    "register",
    "registry",
    "run_prompt",
    "run_prompt_or_stop",
    "shared",
]

THREADS_ENV_VAR = "TOKEN_JOURNEY_THREADS"
GC_FREEZE_ENV_VAR = "TOKEN_JOURNEY_GC_FREEZE"
BACKGROUND_ENV_VAR = "TOKEN_JOURNEY_BACKGROUND_LOAD"
COALESCE_ENV_VAR = "TOKEN_JOURNEY_COALESCE"  # 0: Streamlit's own wake-up per message (for before/after benches)
ONE_KEY_STATE_ENV_VAR = "TOKEN_JOURNEY_ONE_KEY_STATE"  # 0: widgets build the whole filtered state (before/after)
RUN_CACHE_SIZE = 256  # distinct (model, prompt) traces kept at most ...
RUN_CACHE_MB_ENV_VAR = "TOKEN_JOURNEY_RUN_CACHE_MB"
# ... and at most this many MB of trace arrays (a built-in's trace: 0.25 MB for 6 tokens, 9.5 MB
# at n_ctx = 128; the newest run is always kept), so memory stays flat over a lesson.
RUN_CACHE_MB = int(os.environ.get(RUN_CACHE_MB_ENV_VAR, "96"))
SNAPSHOT_MB_ENV_VAR = "TOKEN_JOURNEY_SNAPSHOT_MB"
# Evictable models (the Training page's snapshots, ``ui.session_models``) kept loaded together, at
# most this many MB as ``estimate_bytes`` counts them (~13-16 MB per snapshot of a built-in: its
# weights, the tokenizer it shares with the built-in and its embedding-map table; ~7 MB of it its
# own), so 2-3 at once; the least recently used is unloaded and loaded again (~0.1-0.3 s) when a
# session next uses it.
try:
    SNAPSHOT_MB = float(os.environ.get(SNAPSHOT_MB_ENV_VAR, "") or 40)
except ValueError:
    print(f"[token-journey] {SNAPSHOT_MB_ENV_VAR} is not a number; using 40", file=sys.stderr)
    SNAPSHOT_MB = 40.0


def limit_cpu_threads() -> None:
    """One thread per request by default when serving on the CPU: torch's and numpy's.

    A classroom server runs many tiny forwards and table lookups from many sessions at once;
    each is a few milliseconds, and intra-op threads then only fight each other (measured: one
    generation step 9.7 ms with 1 thread vs 78-174 ms with 2 on a loaded 2-core machine,
    bench/output_pages.py). numpy's OpenBLAS keeps its own pool (one thread per core), whose
    idle workers spin for a while after every matrix product: a nearest-neighbour lookup on
    the Embeddings page cost 55 ms of process CPU per click, 44 of them in the spinning worker,
    and 13 ms with one BLAS thread (per-thread CPU from /proc/<pid>/task) — on a 2-core server that
    spinning took the core the other replica or the other students needed. So the BLAS and
    OpenMP pools get the same count as torch. Override with TOKEN_JOURNEY_THREADS.
    """
    import torch

    threads = max(1, int(os.environ.get(THREADS_ENV_VAR, "1")))
    torch.set_num_threads(threads)
    global _POOLS_LIMITED
    if _POOLS_LIMITED != threads:
        from threadpoolctl import threadpool_limits

        # Not a context: the limit stays for the process (pools loaded later follow the
        # OPENBLAS/OMP variables scripts/run_app.py sets before anything imports numpy).
        threadpool_limits(limits=threads)
        _POOLS_LIMITED = threads


_POOLS_LIMITED: int | None = None


# --- the process-wide registry -------------------------------------------------------------

_REGISTRY = ModelRegistry(evictable_bytes=int(max(0.0, SNAPSHOT_MB) * 1024 * 1024))
_RUNS = ResultCache(maxsize=RUN_CACHE_SIZE, max_bytes=RUN_CACHE_MB * 1024 * 1024)
_BUILTINS: tuple[str, ...] = tuple(core.BUILTIN_PRESETS)


def _builtin_loader(name: str) -> Callable[[], Any]:
    def load() -> Any:
        limit_cpu_threads()
        return core.load_builtin(name)

    load.__name__ = f"load_builtin_{name}"
    return load


for _name in _BUILTINS:
    _REGISTRY.register(_name, _builtin_loader(_name))


# --- foreign checkpoints the teacher named at server start (core.foreign.catalog) ------------------


def _foreign_loader(name: str, folder: Any) -> Callable[[], Any]:
    def load() -> Any:
        from core.foreign import load_hf_model

        limit_cpu_threads()
        limit = os.environ.get("TOKEN_JOURNEY_MEMORY_LIMIT_MB", "").strip()  # core reads no environment: pass it in
        limit_mb = float(limit) if limit.replace(".", "", 1).isdigit() else None  # not a plain number: ignored
        return load_hf_model(folder, name=name, memory_limit_mb=limit_mb)  # a ForeignModelError says what is wrong, translated by ui.messages

    load.__name__ = f"load_foreign_{name}"
    return load


def _register_catalogue() -> dict[str, Any]:
    from pathlib import Path

    from core.foreign import load_catalogue

    toml = os.environ.get("TOKEN_JOURNEY_MODELS_TOML", "")  # core reads no environment: pass it in
    catalogue = load_catalogue(os.environ.get("TOKEN_JOURNEY_MODELS", ""), Path(toml) if toml else None, _BUILTINS)
    for problem in catalogue.problems:  # the teacher's typo: the server log says which entry was skipped
        print(f"[token-journey] models: {problem}", file=sys.stderr)
    return dict(catalogue.models)


_FOREIGN: dict[str, Any] = {}


def add_foreign(name: str, folder: Any) -> None:
    """Serve a checkpoint folder under ``name`` (server start and tests only: never from a widget)."""
    if name in _BUILTINS:
        raise ValueError(f"{name!r} is a built-in model name")
    _REGISTRY.register(name, _foreign_loader(name, folder), replace=True)
    _FOREIGN[name] = folder


for _name, _folder in _register_catalogue().items():
    add_foreign(_name, _folder)


def foreign_model_names() -> list[str]:
    """The teacher's configured checkpoints (``TOKEN_JOURNEY_MODELS`` / ``models.toml``), in order."""
    return list(_FOREIGN)


def is_foreign(name: str) -> bool:
    return name in _FOREIGN


def require_model_or_stop(name: str) -> None:
    """Load the chosen model (others keep serving meanwhile) or explain, translated, why it cannot be."""
    from core.foreign import ForeignModelError
    from ui.messages import foreign_model_message

    if name not in _FOREIGN or _REGISTRY.is_loaded(name):
        return
    try:
        with st.spinner(t("foreign.loading", name=name)):
            _REGISTRY.get(name)
    except ForeignModelError as error:
        st.error(foreign_model_message(error, name))
        st.info(t("foreign.builtins_still_work"))
        st.stop()


def registry() -> ModelRegistry:
    """The process' model registry (for helpers that need more than ``get_model``)."""
    return _REGISTRY


def register(name: str, loader: Callable[[], Any], *, replace: bool = False, evictable: bool = False) -> None:
    """Make another model selectable: ``loader()`` returns a ``LoadedModel``-like object.

    It is called at most once, on first use (or ``registry().load_in_background([name])``);
    ``evictable``: it may be unloaded under ``SNAPSHOT_MB`` and is then called again on next use.
    """
    _REGISTRY.register(name, loader, replace=replace, evictable=evictable)


def _forget_runs(name: str) -> None:
    """An unloaded model's cached forward passes go with it (they come back on its next use)."""
    _RUNS.discard_where(lambda key: isinstance(key, tuple) and bool(key) and key[0] == name)


_REGISTRY.on_evict(_forget_runs)


def available_model_names() -> list[str]:
    """Every registered model, built-ins first, in registration order."""
    return _REGISTRY.names()


def builtin_model_names() -> list[str]:
    return list(_BUILTINS)


def get_model(name: str) -> Any:
    """The loaded model ``name`` shared by every session (never mutate it).

    Raises ``UnknownModel`` (a ``KeyError``) for a name that was never registered and
    ``CheckpointError`` for a broken checkpoint.
    """
    return _REGISTRY.get(name)


def add_precompute(key: str, fn: Callable[[Any], Any]) -> None:
    """Compute ``fn(loaded)`` once per model, right after its load, shared read-only."""
    _REGISTRY.add_precompute(key, fn)


def shared(model_name: str, key: str, compute: Callable[[Any], Any] | None = None) -> Any:
    """Per-model shared data under ``key`` (a precompute hook's result, or ``compute(loaded)`` once)."""
    return _REGISTRY.derived(model_name, key, compute)


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


def _run(model_name: str, text: str) -> PromptRun:
    """The shared run for an already cleaned prompt (computed once, however many ask at once)."""
    if model_name not in _REGISTRY:
        raise UnknownModel(model_name)
    return _RUNS.get_or_compute((model_name, text), lambda: _compute_run(model_name, text))


def run_prompt(model_name: str, prompt: str) -> PromptRun:
    """Clean the prompt and run the model; raises ``PromptProblem`` for bad text."""
    cleaned = clean_prompt(prompt)
    return _run(model_name, cleaned.text)


def run_prompt_or_stop(model_name: str, prompt: str) -> PromptRun:
    """Like ``run_prompt`` but shows a translated message and stops the page on bad input."""
    try:
        run = run_prompt(model_name, prompt)
    except PromptProblem as problem:
        st.warning(t(f"prompt.problem.{problem.code}"))
        st.stop()
    except (CheckpointError, UnknownModel) as broken:  # which file is at fault and how to rebuild it
        st.error(checkpoint_message(broken, model_name))
        st.stop()
    if run.truncated_from is not None:
        st.info(t("prompt.truncated", n=run.truncated_from, kept=len(run.ids), n_ctx=len(run.ids) + 1))
    return run


# --- start: background load, then freeze the long-lived heap --------------------------------

_FROZEN_LOCK = threading.Lock()
_STARTED = threading.Event()


def _freeze_heap(_name: str = "", _loaded: Any = None) -> None:
    """Move every object alive now into the collector's permanent generation."""
    if os.environ.get(GC_FREEZE_ENV_VAR, "1") == "0":
        return
    with _FROZEN_LOCK:
        gc.collect()
        gc.freeze()


MALLOC_TRIM_ENV_VAR = "TOKEN_JOURNEY_MALLOC_TRIM"


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``; elsewhere nothing).

    Every rerun allocates and frees traces, chart specs and protobufs on Streamlit's script
    threads; glibc keeps what was freed in its arenas, so without this the resident size creeps
    up over a lesson although the caches stay within their budgets. ``TOKEN_JOURNEY_MALLOC_TRIM=0``
    turns it off (before/after measurements).
    """
    if os.environ.get(MALLOC_TRIM_ENV_VAR, "1") == "0" or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # musl or another libc: nothing to trim
        pass


REFREEZE_EVERY_S = 20.0
FULL_COLLECT_ENV_VAR = "TOKEN_JOURNEY_FULL_GC_S"
FULL_COLLECT_EVERY_S = 120.0  # default seconds between full collections of the frozen heap (was 300: a
# 30-student class froze ~12k objects a minute that later died in cycles; every 2 minutes keeps
# that peak, and the heap it fragments, lower, for a ~0.1-0.3 s pause)


def collect_frozen() -> int:
    """One full collection of the whole heap, frozen part included, then freeze again.

    ``gc.freeze()`` keeps frozen objects out of every collection. An object frozen while alive
    that later becomes garbage inside a reference cycle (an evicted cache entry of pandas or
    Altair objects, the frames and messages of a rerun that was running during the freeze) is
    therefore never freed: refcounting alone cannot free a cycle. Measured: the frozen count
    climbed from 530k to 667k objects in 11 minutes of 20 students while every cache was only
    evicting, and the resident size rose about 5 MB a minute with it. Returns the number of
    unreachable objects found. Costs one full collection (a pause of ~0.1-0.3 s on this box)."""
    with _FROZEN_LOCK:
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
    return found


def _full_collect_every() -> float:
    value = float_from_env(FULL_COLLECT_ENV_VAR, FULL_COLLECT_EVERY_S)
    return value if value > 0 else 0.0  # 0: never (before/after measurements)


MALLOC_ARENAS_ENV_VAR = "TOKEN_JOURNEY_MALLOC_ARENAS"
MALLOC_ARENAS = 2  # default cap on glibc's malloc arenas (0 = glibc's own: 8 per core)
_M_ARENA_MAX = -8  # mallopt parameter number (glibc malloc.h)


def limit_malloc_arenas() -> int:
    """Cap glibc's malloc arenas for the threads started from now on; returns the cap (0: none).

    Streamlit runs every rerun on a new script thread, and glibc gives threads that meet on the
    heap arenas of their own, up to 8 per core. Each arena keeps the pages its threads freed
    (15-60 MB free inside the arenas in a 30-student run) and ``malloc_trim`` only returns
    whole free pages at their tops. With the GIL only one thread allocates at a time anyway, so
    two arenas cost no waiting. ``TOKEN_JOURNEY_MALLOC_ARENAS=0`` keeps glibc's default, and
    glibc's own ``MALLOC_ARENA_MAX`` in the environment wins (nothing is changed then).
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return 0
    cap = _whole_number_from_env(MALLOC_ARENAS_ENV_VAR, MALLOC_ARENAS)
    return cap if cap > 0 and _mallopt(_M_ARENA_MAX, cap) else 0


def _whole_number_from_env(name: str, default: int) -> int:
    """``int(os.environ[name])``, or ``default`` when unset or not a whole number (said on stderr)."""
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        print(f"[token-journey] {name}={raw!r} is not a whole number; using {default}", file=sys.stderr)
        return default


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's ``mallopt(parameter, value)``; False where it refused or there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").mallopt(parameter, value) == 1
    except (OSError, AttributeError):  # musl or another libc
        return False


MALLOC_MMAP_ENV_VAR = "TOKEN_JOURNEY_MALLOC_MMAP_KB"
MALLOC_MMAP_KB = 256  # default fixed mmap threshold in KiB (0 = glibc's own, a threshold that moves)
_M_MMAP_THRESHOLD = -3  # mallopt parameter number (glibc malloc.h)


def fix_mmap_threshold() -> int:
    """Serve every C allocation of ``TOKEN_JOURNEY_MALLOC_MMAP_KB`` (default 256 KiB) or more with
    its own ``mmap``, returned to the system when it is freed; returns the threshold in bytes
    (0: unchanged).

    glibc starts at 128 KiB but raises the threshold to the size of every mmapped block that is
    freed, up to 32 MB: after the first big temporary (a forward pass's activations, an Arrow
    buffer, a serialised chart) every later one comes from the arenas, where what it leaves free
    between long-lived objects is kept, not given back. In a 30-student run the arenas held 19 ->
    57 MB free over 30 minutes and the resident size crept past 600 MB; with a fixed threshold
    (setting it turns the moving one off) they held 2-18 MB and the size stayed ~40 MB lower.
    A big block costs an ``mmap``/``munmap`` pair and its page faults instead (tens of µs a MB).
    glibc's own ``MALLOC_MMAP_THRESHOLD_`` in the environment wins (nothing is changed then).
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return 0
    kib = _whole_number_from_env(MALLOC_MMAP_ENV_VAR, MALLOC_MMAP_KB)
    threshold = min(kib, 32 * 1024) * 1024  # glibc refuses more than 32 MB
    return threshold if kib > 0 and _mallopt(_M_MMAP_THRESHOLD, threshold) else 0


def _refreeze_while_serving() -> None:
    """Freeze again whenever the shared caches have grown (checked every 20 s), and collect the
    frozen heap in full every ``TOKEN_JOURNEY_FULL_GC_S`` seconds (default 120) when anything was
    frozen since.

    Results cached after the first freeze (traces, chart specs: many small Python objects)
    would otherwise be walked by every post-script collection again. A collection runs first,
    so garbage is not frozen; refcounting still frees frozen objects that caches drop, and the
    periodic full collection frees the ones that die inside reference cycles (``collect_frozen``).
    """
    import time

    seen = -1
    full_every = _full_collect_every()
    last_full = time.monotonic()
    frozen_at_full = gc.get_freeze_count()
    while not SHUTTING_DOWN.wait(REFREEZE_EVERY_S):
        grown = _RUNS.misses + memo_misses()
        if grown != seen:
            seen = grown
            _freeze_heap()
        if (full_every and time.monotonic() - last_full >= full_every
                and gc.get_freeze_count() != frozen_at_full):
            collect_frozen()
            last_full, frozen_at_full = time.monotonic(), gc.get_freeze_count()
        trim_heap()  # a few ms; the pages freed since the last check go back to the system


def _warm_imports() -> None:
    """Import what the pages import, so it is loaded before the heap is frozen."""
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    import ui.charts.attention  # noqa: F401
    import ui.charts.output  # noqa: F401
    import ui.charts.positional  # noqa: F401
    import ui.charts.tokens  # noqa: F401
    import ui.charts.vectors  # noqa: F401


def _after_start() -> None:
    """The built-ins' second-tier tables (``ui.precompute.AFTER_START``: the neuron index), once the
    Overview can already be served; then frozen and trimmed like the rest."""
    from ui.precompute import AFTER_START

    for name in _BUILTINS:
        for key, fn in AFTER_START.items():
            if SHUTTING_DOWN.is_set():
                return
            try:
                _REGISTRY.derived(name, key, fn)
            except Exception:  # the page that needs it computes it again and shows the error
                continue
    _freeze_heap()
    trim_heap()


MEMLOG_ENV_VAR = "TOKEN_JOURNEY_MEMLOG"


def memory_report() -> str:
    """One line: resident size and what the shared caches hold (estimated), for the server log."""
    from serving.registry import MEMO_BUDGET

    rss = 0.0
    try:
        with open("/proc/self/status") as status:
            rss = next((int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:")), 0.0)
    except OSError:
        pass
    resident = _REGISTRY.resident()
    from serving.registry import _MEMOS, _MEMOS_LOCK

    with _MEMOS_LOCK:
        memos = [(cache.total_bytes, len(cache), ident[1]) for ident, cache in _MEMOS.items()]
    top = ", ".join(f"{name} {size / 2**20:.1f} MB/{n}" for size, n, name in sorted(memos, reverse=True)[:4] if size)
    return (f"rss {rss:.0f} MB; runs {len(_RUNS)} ({_RUNS.total_bytes / 2**20:.1f} MB); memo "
            f"{MEMO_BUDGET.total_bytes / 2**20:.1f} of {MEMO_BUDGET.max_bytes / 2**20:.0f} MB ({MEMO_BUDGET.evictions} "
            f"evicted; largest: {top or '-'}); snapshots loaded {len(resident)} ({sum(resident.values()) / 2**20:.1f} MB, "
            f"{_REGISTRY.evictions} unloaded)")


def heap_report() -> str:
    """One line: the C heap (glibc ``mallinfo2``: bytes in use vs free inside the arenas, which is
    fragmentation when it grows), Python's tracked objects and, when tracing, tracemalloc's total."""
    parts = []
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            class _MallInfo2(ctypes.Structure):
                _fields_ = [(name, ctypes.c_size_t) for name in (
                    "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                    "keepcost")]

            libc = ctypes.CDLL("libc.so.6")
            libc.mallinfo2.restype = _MallInfo2
            info = libc.mallinfo2()
            parts.append(f"malloc in use {info.uordblks / 2**20:.0f} MB, free in arenas {info.fordblks / 2**20:.0f} MB, "
                         f"mmapped {info.hblkhd / 2**20:.0f} MB")
        except (OSError, AttributeError):  # musl or an old glibc
            pass
    # Not len(gc.get_objects()): that list holds a reference to every tracked object, also to a
    # tuple another thread is still building, whose resize then fails (a 30-student run with
    # this log on got "SystemError: Objects/tupleobject.c:927: bad argument to internal function").
    young = "/".join(str(n) for n in gc.get_count())
    parts.append(f"gc new since collection {young} (gen 0/1/2), frozen {gc.get_freeze_count()}")
    import tracemalloc

    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        parts.append(f"tracemalloc {current / 2**20:.1f} MB (peak {peak / 2**20:.1f})")
    return "; ".join(parts)


def sessions_report() -> str:
    """One line: what Streamlit keeps per session, summed over this process' sessions (entry counts:
    widget states and their metadata, old state, fragments, key map) and its process-wide stores."""
    try:
        from streamlit.runtime import Runtime

        if not Runtime.exists():
            return "no runtime"
        runtime = Runtime.instance()
        infos = runtime._session_mgr.list_sessions()
    except Exception as err:  # a Streamlit without these internals: say so, never fail the log
        return f"sessions: n/a ({type(err).__name__})"
    totals: dict[str, int] = {}

    def add(name: str, value: Any) -> None:
        try:
            totals[name] = totals.get(name, 0) + len(value)
        except TypeError:
            pass

    for info in infos:
        state = getattr(info.session, "_session_state", None)
        if state is not None:
            add("widget states", getattr(state._new_widget_state, "states", {}))
            add("widget metadata", getattr(state._new_widget_state, "widget_metadata", {}))
            add("old state", getattr(state, "_old_state", {}))
            add("key map", getattr(state._key_id_mapper, "_key_id_mapping", {}))
        fragments = getattr(info.session, "_fragment_storage", None)
        add("fragments", getattr(fragments, "_fragments", {}))
    stores = []
    for label, attr, inner in (("media files", "_media_file_mgr", "_file_metadata"),
                               ("dataframe sources", "_dataframe_source_mgr", "_sources")):
        obj = getattr(runtime, attr, None)
        try:
            stores.append(f"{label} {len(getattr(obj, inner))}")
        except TypeError:
            continue
    from ui.charts import common, live

    per = ", ".join(f"{k} {v}" for k, v in totals.items())
    with common._ARROW_LOCK:
        arrow_mb = sum(len(converted) for _ref, converted in common._ARROW.values()) / 2**20
    return (f"sessions {len(infos)} ({per}); {', '.join(stores)}; arrow memo {len(common._ARROW)} "
            f"({arrow_mb:.1f} MB), carried memo {len(live._CARRIED)}")


TRACEMALLOC_ENV_VAR = "TOKEN_JOURNEY_TRACEMALLOC"  # a folder: tracemalloc snapshots are dumped there
TRACEMALLOC_AT_ENV_VAR = "TOKEN_JOURNEY_TRACEMALLOC_AT"  # "START,T1,T2,...": seconds after start
TRACEMALLOC_FRAMES_ENV_VAR = "TOKEN_JOURNEY_TRACEMALLOC_FRAMES"


def _tracemalloc_schedule() -> tuple[str, list[float], int] | None:
    folder = os.environ.get(TRACEMALLOC_ENV_VAR, "")
    if not folder:
        return None
    try:
        times = [float(x) for x in os.environ.get(TRACEMALLOC_AT_ENV_VAR, "240,300,600").split(",") if x.strip()]
        frames = int(os.environ.get(TRACEMALLOC_FRAMES_ENV_VAR, "12"))
    except ValueError:
        print(f"[token-journey] {TRACEMALLOC_AT_ENV_VAR} / {TRACEMALLOC_FRAMES_ENV_VAR} are not numbers; "
              "tracemalloc stays off", file=sys.stderr)
        return None
    return (folder, sorted(times), max(1, frames)) if len(times) >= 2 else None


def _trace_memory(folder: str, times: list[float], frames: int) -> None:
    """Diagnostics (``TOKEN_JOURNEY_TRACEMALLOC=folder``): start tracemalloc ``times[0]`` seconds
    after the server started, then dump a snapshot (``snap-<seconds>.tm``) at each later time;
    compare two with ``tracemalloc.Snapshot.load(b).compare_to(Snapshot.load(a), "traceback")``.
    Tracing slows every allocation (several times): for finding a leak, not for serving."""
    import time
    import tracemalloc

    start = time.monotonic()
    os.makedirs(folder, exist_ok=True)
    for index, at in enumerate(times):
        if SHUTTING_DOWN.wait(max(0.0, start + at - time.monotonic())):
            return
        if index == 0:
            tracemalloc.start(frames)
            continue
        snapshot = tracemalloc.take_snapshot()
        path = os.path.join(folder, f"snap-{int(at)}.tm")
        snapshot.dump(path)
        print(f"[token-journey] tracemalloc snapshot {path}: {memory_report()}; {heap_report()}", file=sys.stderr,
              flush=True)


def _log_memory(every_s: float) -> None:
    while not SHUTTING_DOWN.wait(every_s):
        print(f"[token-journey] memory: {memory_report()}; {heap_report()}; {sessions_report()}", file=sys.stderr,
              flush=True)


def _install_post_run_gc() -> None:
    """Streamlit's collection after every run: generations 0-1 each time, a full one at most every
    ``TOKEN_JOURNEY_POST_RUN_FULL_GC_S`` seconds (default 30; 0 = a full one every run, as
    Streamlit does). ``ui.server_tuning.PostRunCollector`` says why."""
    from ui.server_tuning import POST_RUN_FULL_GC_ENV_VAR, POST_RUN_FULL_GC_S, lighter_post_run_gc

    every = float_from_env(POST_RUN_FULL_GC_ENV_VAR, POST_RUN_FULL_GC_S)
    if every > 0:
        lighter_post_run_gc(every)


HOLD_ENV_VAR = "TOKEN_JOURNEY_START_HOLD_S"
START_HOLD_S = 4.0  # the longest the start-up work waits for the first page (0: it does not wait)
START_GRACE_S = 1.0  # after that page's script ends: the browser fetches its JavaScript meanwhile
_FIRST_PAGE_DRAWN = threading.Event()
_GRACE_STARTED = threading.Event()


def first_page_drawn() -> None:
    """A script run finished drawing a page (the Overview calls it at its end): the background
    work held back for the first student (see ``_hold_until_first_page``) goes on ``START_GRACE_S``
    later, once the browser has fetched that page's JavaScript (the picture's and the diagram's
    modules, ~1 MB, requested after the script's messages arrive) and drawn it."""
    if _FIRST_PAGE_DRAWN.is_set() or _GRACE_STARTED.is_set():
        return
    _GRACE_STARTED.set()
    timer = threading.Timer(START_GRACE_S, _FIRST_PAGE_DRAWN.set)
    timer.daemon = True
    timer.start()


def _hold_until_first_page(deadline: float) -> None:
    """Wait until the first page is drawn or ``deadline`` (``time.monotonic``) passes.

    Everything the server does at start shares one interpreter lock: while the first model's
    precomputations (PCA, neuron index, preset prompts' traces), the chart libraries' imports
    and the second model ran, the server answered the first browser's static files and ran its
    Overview in the gaps (its widgets' JavaScript took 0.3-0.5 s to arrive on loopback). Held
    back until that Overview is drawn (at most ``TOKEN_JOURNEY_START_HOLD_S``, default 4 s):
    Overview interactive 2.69 -> 2.33 s (protocol), settled in Chromium ~0.4 s sooner (README).
    A page that needs a table before then computes it itself (``ModelRegistry.derived``).
    """
    _FIRST_PAGE_DRAWN.wait(max(0.0, deadline - time.monotonic()))


def start_background_load() -> None:
    """Load both built-ins (and run every precompute hook) on a daemon thread, once per process."""
    if _STARTED.is_set():
        return
    _STARTED.set()
    limit_malloc_arenas()  # before the sessions' script threads take arenas of their own
    fix_mmap_threshold()  # big temporaries go back to the system when freed (see there)
    limit_cpu_threads()  # numpy's and torch's pools: one thread per request (see there)
    if os.environ.get(COALESCE_ENV_VAR, "1") != "0":
        from ui.server_tuning import coalesce_wakeups

        coalesce_wakeups()  # one event-loop wake-up per flush, not one per message
    if os.environ.get(ONE_KEY_STATE_ENV_VAR, "1") != "0":
        from ui.server_tuning import one_key_widget_state

        one_key_widget_state()  # a widget looks up its own key, not every key of the session
    from ui.server_tuning import light_component_frame_check

    light_component_frame_check()  # the Overview's picture does not import pandas (see there)
    _install_post_run_gc()
    try:  # TOKEN_JOURNEY_MEMLOG=60: the memory line above in the server log every 60 s
        memlog_s = float(os.environ.get(MEMLOG_ENV_VAR, "0") or 0)
    except ValueError:
        memlog_s = 0.0
    if memlog_s > 0:
        start_worker(_log_memory, "token-journey-memlog", max(1.0, memlog_s))
    schedule = _tracemalloc_schedule()
    if schedule is not None:
        start_worker(_trace_memory, "token-journey-tracemalloc", *schedule)
    if os.environ.get(BACKGROUND_ENV_VAR, "1") == "0":
        return
    hold_s = float_from_env(HOLD_ENV_VAR, START_HOLD_S)
    if hold_s > 0:
        deadline = time.monotonic() + hold_s
        _REGISTRY.prepare_gate = lambda: _hold_until_first_page(deadline)

    def load(name: str) -> None:
        try:
            _REGISTRY.get(name)
        except Exception:  # a broken checkpoint: the page that asks shows the message
            return
        _REGISTRY.wait_ready(name, timeout=120)

    def work() -> None:
        # The Overview's model first: the first student waits for it. The chart libraries the
        # other pages import (~1.2 s, on the same interpreter lock as the server's start) after.
        first, *rest = _BUILTINS
        load(first)
        try:
            _warm_imports()
        except Exception:  # an optional chart library missing: the page that needs it says so
            pass
        for name in rest:
            if SHUTTING_DOWN.is_set():
                return
            load(name)
        _freeze_heap()
        trim_heap()  # loading and precomputing freed a lot (temporary float64 tables, forwards)
        _after_start()
        if os.environ.get(GC_FREEZE_ENV_VAR, "1") != "0":
            _refreeze_while_serving()

    start_worker(work, "token-journey-start")


def _name_of(loaded: Any) -> str | None:
    """The registry name of a model every session can pick (a built-in or the teacher's own) under
    which ``loaded`` was loaded; None for a session model (a snapshot, a live-trained model):
    only the session that asked sees those, so their preset prompts are not run ahead."""
    for name in (*_BUILTINS, *_FOREIGN):
        if _REGISTRY.is_loaded(name) and _REGISTRY.get(name) is loaded:
            return name
    return None


def _register_precompute() -> None:
    from ui.precompute import hooks

    for key, fn in hooks(run_prompt, _name_of).items():
        _REGISTRY.add_precompute(key, fn)


_register_precompute()
_REGISTRY.on_ready(lambda name, _loaded: name in _BUILTINS or _freeze_heap())  # a model added later
start_background_load()
