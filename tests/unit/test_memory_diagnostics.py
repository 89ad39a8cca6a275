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


_MMAP_PROBE = """
import ctypes, sys
sys.path.insert(0, '.')
from ui.resources import fix_mmap_threshold

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                 "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
threshold = fix_mmap_threshold()
own_map = []
for _ in range(3):  # a 512 KiB block, freed, three times
    libc.malloc_trim(0)  # no free space at the heap's top: the block needs new memory
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(512 * 1024)
    own_map.append(libc.mallinfo2().hblkhd - before >= 512 * 1024)
    libc.free(block)
print(threshold, own_map)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_big_blocks_keep_their_own_mapping_and_the_threshold_can_be_turned_off() -> None:
    """With the fixed threshold every 512 KiB block is mmapped (and unmapped when freed); with
    glibc's moving threshold the first free raises it, and the same block then comes from the
    arenas."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def probe(**env: str) -> str:
        clean = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_THRESHOLD_", "TOKEN_JOURNEY_MALLOC_MMAP_KB")}
        done = subprocess.run([sys.executable, "-c", _MMAP_PROBE], cwd=root, env={**clean, **env},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    assert probe() == "262144 [True, True, True]"  # every time its own mapping
    moving = probe(TOKEN_JOURNEY_MALLOC_MMAP_KB="0")  # glibc's own: a freed block raises the threshold
    assert moving.startswith("0 ") and moving.endswith("False, False]"), moving
    higher = probe(TOKEN_JOURNEY_MALLOC_MMAP_KB="1024")
    assert higher.startswith("1048576 [False"), higher  # under the threshold: from the arena
    assert probe(MALLOC_MMAP_THRESHOLD_="131072").startswith("0 ")  # glibc's own setting wins
    assert probe(TOKEN_JOURNEY_MALLOC_MMAP_KB="lots").startswith("262144 ")
