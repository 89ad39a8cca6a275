"""Process tuning for a classroom server: threads, glibc's heap, the garbage collector.

Each function does one thing, takes its value as an argument (``serving.startup`` passes the
``Settings``) and is switched off by 0 / False, so each can be measured on and off. None of it
runs at import.

- ``limit_cpu_threads(n)``: torch's, numpy's BLAS and OpenMP pools get ``n`` threads.
- ``limit_malloc_arenas(n)``, ``fix_mmap_threshold(kib)``: glibc ``mallopt`` (Linux only).
- ``trim_heap()``: glibc ``malloc_trim``: free C-heap pages go back to the system.
- ``freeze_heap()`` / ``collect_frozen()`` / ``refreeze_while_serving(...)``: ``gc.freeze`` of the
  long-lived heap, so Streamlit's collection after every run does not walk torch, pandas and
  both models, and a periodic full collection of what was frozen.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
from collections.abc import Callable

from serving.workers import SHUTTING_DOWN

_POOLS_LIMITED: int | None = None


def limit_cpu_threads(threads: int) -> None:
    """One thread per request by default when serving on the CPU: torch's and numpy's.

    A classroom server runs many tiny forwards and table lookups from many sessions at once;
    each is a few milliseconds, and intra-op threads then only fight each other (one generation
    step 9.7 ms with 1 thread vs 78-174 ms with 2 on a loaded 2-core machine,
    bench/output_pages.py). numpy's OpenBLAS keeps its own pool whose idle workers spin after
    every matrix product (a nearest-neighbour lookup: 55 ms of process CPU per click with the
    pool, 13 ms with one BLAS thread), so the BLAS and OpenMP pools get the same count as torch.

    Example: limit_cpu_threads(1)
    """
    import torch

    global _POOLS_LIMITED
    threads = max(1, threads)
    torch.set_num_threads(threads)
    if _POOLS_LIMITED != threads:
        from threadpoolctl import threadpool_limits

        # Not a context: the limit stays for the process (pools loaded later follow the
        # OPENBLAS/OMP variables scripts/run_app.py sets before anything imports numpy).
        threadpool_limits(limits=threads)
        _POOLS_LIMITED = threads


# --- glibc's heap ----------------------------------------------------------------------------

_M_ARENA_MAX = -8  # mallopt parameter numbers (glibc malloc.h)
_M_MMAP_THRESHOLD = -3


def _mallopt(parameter: int, value: int) -> bool:
    """glibc's ``mallopt(parameter, value)``; False where it refused or there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").mallopt(parameter, value) == 1
    except (OSError, AttributeError):  # musl or another libc
        return False


def limit_malloc_arenas(cap: int) -> int:
    """Cap glibc's malloc arenas for the threads started from now on; returns the cap (0: none).

    Streamlit runs every rerun on a new script thread, and glibc gives threads that meet on the
    heap arenas of their own, up to 8 per core. Each arena keeps the pages its threads freed
    (15-60 MB free inside the arenas in a 30-student run) and ``malloc_trim`` only returns
    whole free pages at their tops. With the GIL only one thread allocates at a time anyway, so
    two arenas cost no waiting. 0 keeps glibc's default; glibc's own ``MALLOC_ARENA_MAX`` in
    the environment wins (nothing is changed then).
    """
    if "MALLOC_ARENA_MAX" in os.environ:
        return 0
    return cap if cap > 0 and _mallopt(_M_ARENA_MAX, cap) else 0


def fix_mmap_threshold(kib: int) -> int:
    """Serve every C allocation of ``kib`` KiB or more with its own ``mmap``, returned to the
    system when it is freed; returns the threshold in bytes (0: unchanged).

    glibc starts at 128 KiB but raises the threshold to the size of every mmapped block that is
    freed, up to 32 MB: after the first big temporary (a forward pass's activations, an Arrow
    buffer, a serialised chart) every later one comes from the arenas, where what it leaves free
    between long-lived objects is kept. In a 30-student run the arenas held 19 -> 57 MB free
    over 30 minutes; with a fixed threshold (setting it turns the moving one off) 2-18 MB and
    the resident size stayed ~40 MB lower. glibc's own ``MALLOC_MMAP_THRESHOLD_`` wins.
    """
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return 0
    threshold = min(kib, 32 * 1024) * 1024  # glibc refuses more than 32 MB
    return threshold if kib > 0 and _mallopt(_M_MMAP_THRESHOLD, threshold) else 0


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc ``malloc_trim``; elsewhere nothing).

    Every rerun allocates and frees traces, chart specs and protobufs on Streamlit's script
    threads; glibc keeps what was freed in its arenas, so without this the resident size creeps
    up over a lesson although the caches stay within their budgets.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # musl or another libc: nothing to trim
        pass


# --- the garbage collector -------------------------------------------------------------------

_FROZEN_LOCK = threading.Lock()
REFREEZE_EVERY_S = 20.0


def freeze_heap() -> None:
    """Move every object alive now into the collector's permanent generation (after a collection,
    so garbage is not frozen)."""
    with _FROZEN_LOCK:
        gc.collect()
        gc.freeze()


def collect_frozen() -> int:
    """One full collection of the whole heap, frozen part included, then freeze again.

    ``gc.freeze()`` keeps frozen objects out of every collection. An object frozen while alive
    that later becomes garbage inside a reference cycle (an evicted cache entry of pandas or
    Altair objects) is therefore never freed: refcounting alone cannot free a cycle (the frozen
    count climbed 530k -> 667k objects in 11 minutes of 20 students). Returns the number of
    unreachable objects found; costs one full collection (~0.1-0.3 s on this box).
    """
    with _FROZEN_LOCK:
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
    return found


def refreeze_while_serving(grown: Callable[[], int], full_every_s: float, trim: bool) -> None:
    """Freeze again whenever ``grown()`` (the shared caches' miss count) changed, checked every
    ``REFREEZE_EVERY_S``; collect the frozen heap in full every ``full_every_s`` seconds (0: never)
    when anything was frozen since; trim the C heap each turn when ``trim``. Runs until shutdown.

    Results cached after the first freeze (traces, chart specs) would otherwise be walked by
    every post-script collection again.
    """
    seen = -1
    last_full = time.monotonic()
    frozen_at_full = gc.get_freeze_count()
    while not SHUTTING_DOWN.wait(REFREEZE_EVERY_S):
        count = grown()
        if count != seen:
            seen = count
            freeze_heap()
        if (full_every_s > 0 and time.monotonic() - last_full >= full_every_s
                and gc.get_freeze_count() != frozen_at_full):
            collect_frozen()
            last_full, frozen_at_full = time.monotonic(), gc.get_freeze_count()
        if trim:
            trim_heap()  # a few ms; the pages freed since the last check go back to the system
