"""Background workers of the server process, joined at exit.

A daemon thread still inside a torch kernel when the interpreter finalises can abort the
whole process ("terminate called without an active exception"): a test run would then exit
non-zero after every test passed. So every background worker is started here, and at exit
``SHUTTING_DOWN`` is set (long-running loops watch it) and the workers are joined.

Example: start_worker(print, "token-journey-hello", "hi")
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import Any

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
