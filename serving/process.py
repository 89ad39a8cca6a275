"""Process tuning for a classroom server: the CPU thread pools and the collector.

``limit_cpu_threads(n)`` gives torch's, numpy's BLAS and OpenMP pools ``n`` threads
(``serving.startup`` passes the ``threads`` setting); ``freeze_heap()`` moves everything alive
after start-up (torch, both models, the libraries) out of the collector's sight. Nothing runs
at import.
"""

from __future__ import annotations

import gc

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
        # OPENBLAS/OMP variables serving.startup.launch_lifespan sets before anything imports numpy).
        threadpool_limits(limits=threads)
        _POOLS_LIMITED = threads


def freeze_heap() -> None:
    """Collect, then freeze every object alive now (``gc.freeze``): the collections that run while
    a class works (after each run, and Python's own) no longer walk the long-lived heap.

    Example: freeze_heap()
    """
    gc.collect()
    gc.freeze()
