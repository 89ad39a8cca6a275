"""The server's memory tuning (``serving.process``): the frozen heap's full collection and glibc's
malloc arenas and mmap threshold, each set from its argument and switched off by 0."""

from __future__ import annotations

import os
import sys

import pytest

from serving import process


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
        assert process.collect_frozen() >= 1
        assert alive() is None
        assert gc.get_freeze_count() > 0  # the heap is frozen again afterwards
    finally:
        gc.unfreeze()


def test_the_malloc_arena_cap_is_set_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert process.limit_malloc_arenas(0) == 0
    expected = 2 if sys.platform.startswith("linux") else 0  # glibc's mallopt took it
    assert process.limit_malloc_arenas(2) == expected
    assert process.limit_malloc_arenas(3) == (3 if expected else 0)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # glibc's own setting wins: nothing changed
    assert process.limit_malloc_arenas(2) == 0


_MMAP_PROBE = """
import ctypes, sys
sys.path.insert(0, '.')
from serving.process import fix_mmap_threshold

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                 "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
threshold = fix_mmap_threshold(int(sys.argv[1]))
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

    def probe(kib: int = 256, **env: str) -> str:
        clean = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
        done = subprocess.run([sys.executable, "-c", _MMAP_PROBE, str(kib)], cwd=root, env={**clean, **env},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    assert probe() == "262144 [True, True, True]"  # every time its own mapping
    moving = probe(0)  # glibc's own: a freed block raises the threshold
    assert moving.startswith("0 ") and moving.endswith("False, False]"), moving
    higher = probe(1024)
    assert higher.startswith("1048576 [False"), higher  # under the threshold: from the arena
    assert probe(MALLOC_MMAP_THRESHOLD_="131072").startswith("0 ")  # glibc's own setting wins
    assert probe(64 * 1024).startswith("33554432 ")  # glibc refuses more than 32 MB: capped there
