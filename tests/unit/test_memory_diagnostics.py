"""The server's memory diagnostics (``TOKEN_JOURNEY_MEMLOG``, ``TOKEN_JOURNEY_TRACEMALLOC``): what a
teacher or developer reads when the resident size grows during a lesson."""

from __future__ import annotations

import os
import sys
import tracemalloc

import pytest

os.environ.setdefault("TOKEN_JOURNEY_BACKGROUND_LOAD", "0")  # these tests need no model

from ui import resources  # noqa: E402


def test_tracemalloc_schedule_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.delenv(resources.TRACEMALLOC_ENV_VAR, raising=False)
    assert resources._tracemalloc_schedule() is None  # off unless a folder is named
    monkeypatch.setenv(resources.TRACEMALLOC_ENV_VAR, str(tmp_path))
    monkeypatch.setenv(resources.TRACEMALLOC_AT_ENV_VAR, "600, 300,900")
    monkeypatch.setenv(resources.TRACEMALLOC_FRAMES_ENV_VAR, "4")
    assert resources._tracemalloc_schedule() == (str(tmp_path), [300.0, 600.0, 900.0], 4)
    monkeypatch.setenv(resources.TRACEMALLOC_AT_ENV_VAR, "300")  # a start and no snapshot: nothing to do
    assert resources._tracemalloc_schedule() is None
    monkeypatch.setenv(resources.TRACEMALLOC_AT_ENV_VAR, "soon,later")
    assert resources._tracemalloc_schedule() is None


def test_trace_memory_dumps_loadable_snapshots(tmp_path) -> None:
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc already on in this process")
    try:
        resources._trace_memory(str(tmp_path), [0.0, 0.05, 1.2], 3)
        snapshots = sorted(p.name for p in tmp_path.iterdir())
        assert snapshots == ["snap-0.tm", "snap-1.tm"]
        first, second = (tracemalloc.Snapshot.load(str(tmp_path / name)) for name in snapshots)
        assert second.traceback_limit == 3
        second.compare_to(first, "lineno")  # the comparison the docstring tells to make
    finally:
        tracemalloc.stop()


def test_heap_and_session_reports_are_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    def no_list_of_every_object(*_args: object) -> list:  # it exposes tuples other threads are building
        raise AssertionError("the memory log must not call gc.get_objects()")

    monkeypatch.setattr(gc, "get_objects", no_list_of_every_object)
    heap = resources.heap_report()
    assert "\n" not in heap and "frozen" in heap and "gen 0/1/2" in heap
    if sys.platform.startswith("linux"):
        assert "malloc in use" in heap and "free in arenas" in heap
    sessions = resources.sessions_report()
    assert "\n" not in sessions and sessions  # "no runtime" outside a server; counts inside one
    report = resources.memory_report()
    assert report.startswith("rss ") and "memo" in report


class _Cyclic:
    """An object in a reference cycle with itself: only the cycle collector can free it."""

    def __init__(self) -> None:
        self.me = self


def test_collect_frozen_frees_cycles_that_died_after_they_were_frozen() -> None:
    """[W2-F] flat memory: ``gc.freeze()`` hides frozen objects from every collection, so a cycle
    frozen while alive and dropped later (an evicted cache entry) stays until ``collect_frozen``."""
    import gc
    import weakref

    victim = _Cyclic()
    alive = weakref.ref(victim)
    try:
        gc.freeze()
        del victim
        gc.collect()
        assert alive() is not None  # frozen: the ordinary collection does not see it
        assert resources.collect_frozen() >= 1
        assert alive() is None
        assert gc.get_freeze_count() > 0  # the heap is frozen again afterwards
    finally:
        gc.unfreeze()


def test_full_collection_interval_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(resources.FULL_COLLECT_ENV_VAR, raising=False)
    assert resources._full_collect_every() == resources.FULL_COLLECT_EVERY_S
    monkeypatch.setenv(resources.FULL_COLLECT_ENV_VAR, "120")
    assert resources._full_collect_every() == 120.0
    monkeypatch.setenv(resources.FULL_COLLECT_ENV_VAR, "0")
    assert resources._full_collect_every() == 0.0  # never
    monkeypatch.setenv(resources.FULL_COLLECT_ENV_VAR, "soon")
    assert resources._full_collect_every() == resources.FULL_COLLECT_EVERY_S


def test_the_malloc_arena_cap_is_set_read_from_the_environment_and_can_be_turned_off(monkeypatch, capsys) -> None:
    import sys

    from ui.resources import MALLOC_ARENAS, MALLOC_ARENAS_ENV_VAR, limit_malloc_arenas

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setenv(MALLOC_ARENAS_ENV_VAR, "0")
    assert limit_malloc_arenas() == 0
    monkeypatch.setenv(MALLOC_ARENAS_ENV_VAR, "two")
    expected = MALLOC_ARENAS if sys.platform.startswith("linux") else 0  # glibc's mallopt took it
    assert limit_malloc_arenas() == expected
    assert "is not a whole number" in capsys.readouterr().err
    monkeypatch.setenv(MALLOC_ARENAS_ENV_VAR, "3")
    assert limit_malloc_arenas() == (3 if expected else 0)
    monkeypatch.delenv(MALLOC_ARENAS_ENV_VAR)
    assert limit_malloc_arenas() == expected
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # glibc's own setting wins: nothing changed
    assert limit_malloc_arenas() == 0
