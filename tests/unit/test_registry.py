"""serving.registry, serving.caches, serving.memo: one load per model under concurrency, single-flight LRU,
read-only results, one memo byte budget."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest

from serving.caches import FrozenList, ResultCache, freeze
from serving.registry import ModelRegistry, UnknownModel


def _slow_loader(counter: list[int], delay: float = 0.05):
    def load() -> object:
        counter.append(1)
        time.sleep(delay)  # widen the window in which a second caller could start its own load
        return object()

    return load


def test_concurrent_get_loads_once_and_returns_the_same_object() -> None:
    registry = ModelRegistry()
    calls: list[int] = []
    registry.register("m", _slow_loader(calls))
    barrier = threading.Barrier(12)
    got: list[object] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        model = registry.get("m")
        with lock:
            got.append(model)

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(calls) == 1
    assert len(got) == 12 and all(m is got[0] for m in got)


def test_unknown_model_is_a_key_error_and_not_loaded() -> None:
    registry = ModelRegistry()
    with pytest.raises(UnknownModel):
        registry.get("nope")
    with pytest.raises(KeyError):
        registry.get("../../etc/passwd")
    assert not registry.is_loaded("nope")


def test_register_refuses_a_second_loader_unless_replacing() -> None:
    registry = ModelRegistry()
    first = lambda: "a"  # noqa: E731
    registry.register("m", first)
    registry.register("m", first)  # the same loader again is harmless
    with pytest.raises(ValueError):
        registry.register("m", lambda: "b")
    registry.register("m", lambda: "b", replace=True)
    assert registry.get("m") == "b"
    assert registry.names() == ["m"]


def test_precompute_runs_once_per_model_and_is_frozen() -> None:
    registry = ModelRegistry()
    registry.register("a", lambda: {"w": np.arange(4.0)})
    registry.register("b", lambda: {"w": np.arange(6.0)})
    runs: list[str] = []

    def pca(loaded: dict) -> dict:
        runs.append("x")
        return {"sum": loaded["w"] * 2}

    registry.add_precompute("double", pca)
    for name in ("a", "b"):
        registry.get(name)
        assert registry.wait_ready(name, timeout=10)
    assert len(runs) == 2
    a = registry.derived("a", "double")
    assert a is registry.derived("a", "double")
    assert len(runs) == 2
    np.testing.assert_array_equal(a["sum"], [0.0, 2.0, 4.0, 6.0])
    with pytest.raises(ValueError):
        a["sum"][0] = 1.0


def test_the_prepare_gate_holds_precomputations_but_not_a_page_that_asks() -> None:
    """The server holds a model's precomputations back (``prepare_gate``) while the first page is
    drawn; a page that needs a table meanwhile computes it itself, once."""
    import threading

    registry = ModelRegistry()
    registry.register("m", lambda: 3)
    gate = threading.Event()
    runs: list[int] = []
    registry.add_precompute("sq", lambda v: runs.append(v) or v * v)
    registry.prepare_gate = lambda: gate.wait(10)
    registry.get("m")
    assert not registry.wait_ready("m", timeout=0.3) and runs == []  # held
    assert registry.derived("m", "sq") == 9 and runs == [3]  # asked for: computed at once
    gate.set()
    assert registry.wait_ready("m", timeout=10) and runs == [3]  # the held run finds it done


def test_derived_on_demand_and_missing_key() -> None:
    registry = ModelRegistry()
    registry.register("m", lambda: 3)
    assert registry.derived("m", "sq", lambda v: v * v) == 9
    assert registry.derived("m", "sq", lambda v: -1) == 9  # computed once, then shared
    with pytest.raises(KeyError):
        registry.derived("m", "never-registered")


def test_background_load_makes_the_model_ready() -> None:
    registry = ModelRegistry()
    calls: list[int] = []
    registry.register("m", _slow_loader(calls))
    registry.add_precompute("k", lambda loaded: 42)
    registry.load_in_background(["m"]).join(timeout=10)
    assert registry.is_loaded("m") and registry.is_ready("m")
    assert registry.derived("m", "k") == 42
    assert len(calls) == 1


def test_result_cache_is_single_flight_bounded_and_lru() -> None:
    cache = ResultCache(maxsize=2)
    computed: list[int] = []
    barrier = threading.Barrier(8)

    def compute() -> np.ndarray:
        computed.append(1)
        time.sleep(0.05)
        return np.ones(3)

    results: list[np.ndarray] = []

    def worker() -> None:
        barrier.wait()
        results.append(cache.get_or_compute("k", compute))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(computed) == 1 and all(r is results[0] for r in results)
    assert not results[0].flags.writeable
    cache.get_or_compute("b", lambda: 2)
    cache.get_or_compute("k", compute)  # touch k: b becomes the oldest
    cache.get_or_compute("c", lambda: 3)
    assert "k" in cache and "c" in cache and "b" not in cache and len(cache) == 2


def test_result_cache_does_not_keep_errors() -> None:
    cache = ResultCache(maxsize=4)

    def boom() -> None:
        raise RuntimeError("bad")

    with pytest.raises(RuntimeError):
        cache.get_or_compute("k", boom)
    assert cache.get_or_compute("k", lambda: 5) == 5


@dataclass(frozen=True)
class _Holder:
    matrix: np.ndarray
    parts: tuple


def test_freeze_walks_containers_and_dataclasses() -> None:
    value = {"a": np.zeros(2), "b": [np.zeros(1), 3], "c": _Holder(np.zeros(2), (np.zeros(1),))}
    frozen = freeze(value)
    assert isinstance(frozen["b"], FrozenList)
    for arr in (frozen["a"], frozen["b"][0], frozen["c"].matrix, frozen["c"].parts[0]):
        assert not arr.flags.writeable
    with pytest.raises(TypeError):
        frozen["b"].append(1)
    with pytest.raises(TypeError):
        frozen["b"][0] = 1


def test_frozen_list_still_indexes_numpy_like_a_list() -> None:
    ids = FrozenList([2, 0])
    table = np.arange(6).reshape(3, 2)
    np.testing.assert_array_equal(table[ids], [[4, 5], [0, 1]])
    assert ids == [2, 0] and list(ids) + [1] == [2, 0, 1]
    import pickle

    assert pickle.loads(pickle.dumps(ids)) == [2, 0]


def test_memo_keys_by_content_and_survives_redefinition() -> None:
    from serving.memo import memo

    calls: list[int] = []

    def make():
        @memo(maxsize=8)
        def total(values, names) -> float:
            calls.append(1)
            return float(len(values) + len(names))

        return total

    first, second = make(), make()  # a page script defines its function anew on every rerun
    assert first(np.arange(3), ["a", "b"]) == 5.0
    assert second(np.arange(3), ["a", "b"]) == 5.0
    assert len(calls) == 1
    second(np.arange(4), ["a", "b"])
    second(np.array(["x", None], dtype=object), ("a",))
    second(np.array(["y", None], dtype=object), ("a",))
    assert len(calls) == 4


def test_memo_keys_plain_lists_by_value_and_keeps_kinds_apart() -> None:
    """Long lists of strings / ints / floats are keyed as they are (fast), still by content and
    kind: 1, 1.0 and True are three calls; NaN equals itself; a list is not a tuple."""
    from serving.memo import memo

    calls: list[object] = []

    @memo(maxsize=32)
    def echo(items) -> int:
        calls.append(items)
        return len(calls)

    labels = [f"t{i}" for i in range(6000)] + [None]
    first = echo(labels)
    assert echo(list(labels)) == first and len(calls) == 1  # equal content, another list: a hit
    assert echo(labels[:-1] + ["None"]) != first  # None is not the string "None"
    for n in (1, 100):  # short lists take the general path, long ones the fast one: the same rules
        assert len({echo([1] * n), echo([1.0] * n), echo([True] * n)}) == 3
        assert echo([float("nan")] + [2.0] * n) == echo([float("nan")] + [2.0] * n)
        assert echo(tuple(range(n))) != echo(list(range(n)))
        assert echo([1, "a"] * n) == echo([1, "a"] * n)  # mixed kinds: the general path, same answer


def test_memo_keys_of_big_arguments_stay_small_and_keep_content_semantics(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo entry keeps a digest of a big array / long list argument, not a copy of it: 40 entries
    over a 1 MB array and 6,000 labels hold a few KB of keys (the old copies: 40 MB), and the budget
    counts every entry's key with its value."""
    import serving.memo as memo_module
    from serving.caches import estimate_bytes

    monkeypatch.setattr(memo_module, "MEMO_BUDGET", memo_module.ByteBudget(max_bytes=64 * 1024 * 1024))

    @memo_module.memo(maxsize=64)
    def picked(coords, labels, n: int) -> int:
        return n

    coords = np.random.default_rng(0).normal(size=(5933, 22))  # ~1 MB
    labels = [f"token {i}" for i in range(5933)]
    for n in range(40):
        assert picked(coords, labels, n) == n
    keys = list(picked.cache._data)
    assert len(keys) == 40
    assert sum(estimate_bytes(k) for k in keys) < 40 * 2048
    for key in keys:  # the budget's size of an entry includes its key
        assert picked.cache._sizes[key] >= estimate_bytes(key)
    misses = picked.cache.misses
    assert picked(coords.copy(), list(labels), 3) == 3 and picked.cache.misses == misses  # same content: a hit
    changed = coords.copy()
    changed[100, 5] += 1e-9
    picked(changed, labels, 3)
    picked(coords, labels[:-1] + ["token x"], 3)
    picked(coords.T, labels, 3)  # same bytes in another shape: another key
    picked(coords.astype(np.float32), labels, 3)
    assert picked.cache.misses == misses + 4


def test_memo_keys_plain_lists_by_content_whichever_string_objects() -> None:
    """Two equal long lists of strings are one key even when one repeats one string object and the
    other holds equal copies (the digest does not depend on object identity)."""
    from serving.memo import memo

    calls: list[int] = []

    @memo(maxsize=8)
    def count(items) -> int:
        calls.append(1)
        return len(items)

    word = "same word"
    shared = [word] * 40
    copies = ["".join(["same ", "word"]) for _ in range(40)]
    assert copies[0] is not copies[1]
    count(shared)
    count(copies)
    assert len(calls) == 1


def test_memo_results_are_shared_and_frozen() -> None:
    from serving.memo import memo

    @memo(maxsize=2)
    def spec(n: int) -> dict:
        return {"datasets": {"t": [{"x": i} for i in range(n)]}, "arr": np.zeros(n)}

    a, b = spec(3), spec(3)
    assert a is b
    assert isinstance(a["datasets"]["t"], FrozenList)
    with pytest.raises(ValueError):
        a["arr"][0] = 1


def test_result_cache_evicts_by_bytes_but_keeps_the_newest() -> None:
    cache = ResultCache(maxsize=100, max_bytes=3000)
    for i in range(5):
        cache.get_or_compute(i, lambda: np.zeros(100))  # 800 bytes each
    assert len(cache) == 3 and cache.total_bytes == 2400
    assert 4 in cache and 0 not in cache
    cache.get_or_compute("big", lambda: np.zeros(1000))  # larger than the budget alone
    assert "big" in cache and len(cache) == 1 and cache.total_bytes == 8000


# --- byte budgets shared by every memo cache ---------------------------------------------------


def test_estimate_bytes_counts_buffers_strings_and_shared_objects_once() -> None:
    import pandas as pd
    import torch

    from serving.caches import estimate_bytes

    array = np.zeros(10_000)  # 80,000 bytes of data
    assert 80_000 <= estimate_bytes(array) < 81_000
    assert 80_000 <= estimate_bytes(array[:5000].base) and estimate_bytes(array[:5000]) < 41_000  # a view: its part
    assert estimate_bytes(torch.zeros(1000, dtype=torch.float32)) >= 4000
    text = "x" * 50_000
    assert estimate_bytes(text) >= 50_000
    both = {"a": array, "b": array, "texts": [text, text]}  # the same objects twice: counted once
    assert estimate_bytes(both) < estimate_bytes(array) + estimate_bytes(text) + 2_000
    frame = pd.DataFrame({"word": [f"w{i}" for i in range(2000)], "x": np.arange(2000.0)})
    assert estimate_bytes(frame) >= 2000 * 8 + 2000 * 2

    class Holder:  # a plain object (e.g. a ready figure) is measured through its attributes
        def __init__(self) -> None:
            self.spec = {"data": [{"z": np.ones((100, 100))}]}

    assert estimate_bytes(Holder()) >= 80_000

    @dataclass(frozen=True)
    class Run:
        logits: np.ndarray
        tokens: list[str]

    assert estimate_bytes(Run(np.zeros((4, 1000), dtype=np.float32), ["a"] * 4)) >= 16_000
    assert estimate_bytes(estimate_bytes) == 0 and estimate_bytes(np) == 0  # code is not a result


def test_estimate_bytes_of_row_lists_is_the_sum_of_its_parts() -> None:
    """Row dicts of numbers and short strings (chart and table rows) are counted in place; the
    sum is exactly the walk's: each row, key and value by ``sys.getsizeof``, flags and None 0,
    a long string shared by rows once, anything else walked."""
    import sys

    from serving.caches import estimate_bytes

    size = sys.getsizeof
    rows = [{"token": "巴黎", "p": 0.25, "rank": 1, "chosen": True, "note": None}]
    expected = size(rows) + size(rows[0]) + sum(size(k) for k in rows[0]) + size("巴黎") + size(0.25) + size(1)
    assert estimate_bytes(rows) == expected
    assert estimate_bytes(tuple(rows)) == size(tuple(rows)) + expected - size(rows)
    long_text = "y" * 500
    shared = [{"text": long_text}, {"text": long_text}]
    one_row = size({"text": long_text}) + size("text")
    assert estimate_bytes(shared) == size(shared) + 2 * one_row + size(long_text)  # the text once
    same_row = [rows[0], rows[0]]
    assert estimate_bytes(same_row) == size(same_row) + expected - size(rows)  # one object, once
    nested = [{"z": np.zeros(1000)}, 3, "a", np.float64(2.5), [1.5, "b"]]
    walked = (size(nested) + size(nested[0]) + size("z") + estimate_bytes(nested[0]["z"]) + size(3) + size("a")
              + size(np.float64(2.5)) + size(nested[4]) + size(1.5) + size("b"))
    assert estimate_bytes(nested) == walked


def test_byte_budget_evicts_the_least_recently_used_entry_of_any_cache() -> None:
    from serving.caches import ByteBudget

    budget = ByteBudget(max_bytes=2_500_000)
    first = ResultCache(maxsize=100, budget=budget)
    second = ResultCache(maxsize=100, budget=budget)
    calls: list[str] = []

    def big(name: str):
        def compute() -> np.ndarray:
            calls.append(name)
            return np.zeros(100_000)  # 800 KB

        return compute

    first.get_or_compute("a", big("a"))
    second.get_or_compute("b", big("b"))
    first.get_or_compute("c", big("c"))
    assert budget.total_bytes < 2_500_000 and len(first) + len(second) == 3
    first.get_or_compute("a", big("a"))  # a used again: b is now the oldest
    second.get_or_compute("d", big("d"))  # over the budget: b, the least recently used, goes
    assert "b" not in second and "a" in first and "c" in first and "d" in second
    assert budget.evictions == 1 and budget.total_bytes <= 2_500_000
    assert calls == ["a", "b", "c", "d"]
    first.get_or_compute("e", big("e"))  # order of use is now c, a, d: c goes
    assert "c" not in first and {"a", "e"} <= set(first._data) and "d" in second
    second.get_or_compute("b", big("b"))  # an evicted entry is computed again when asked for
    assert calls[-1] == "b" and "b" in second
    assert budget.total_bytes == sum(first._sizes.values()) + sum(second._sizes.values())


def test_byte_budget_keeps_the_newest_entry_even_when_it_alone_is_too_big() -> None:
    from serving.caches import ByteBudget

    budget = ByteBudget(max_bytes=100_000)
    cache = ResultCache(maxsize=10, budget=budget)
    cache.get_or_compute("small", lambda: np.zeros(1000))
    cache.get_or_compute("huge", lambda: np.zeros(1_000_000))
    assert "huge" in cache and "small" not in cache and len(cache) == 1
    assert budget.total_bytes >= 8_000_000
    cache.clear()
    assert budget.total_bytes == 0


def test_memo_caches_share_the_process_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    import serving.memo as memo_module

    budget = memo_module.ByteBudget(max_bytes=3 * 1024 * 1024)
    monkeypatch.setattr(memo_module, "MEMO_BUDGET", budget)

    @memo_module.memo(maxsize=100)
    def budget_test_table(n: int) -> np.ndarray:
        return np.full(131_072, float(n))  # 1 MiB

    @memo_module.memo(maxsize=100)
    def budget_test_text(n: int) -> str:
        return str(n) * 500_000  # ~0.5-1 MB

    for n in range(6):
        budget_test_table(n)
        budget_test_text(n)
    held = len(budget_test_table.cache) + len(budget_test_text.cache)
    assert held < 12 and budget.total_bytes <= 3 * 1024 * 1024 and budget.evictions >= 6
    assert 5 in {k[0][1][0][1] for k in budget_test_table.cache._data}  # the newest table is kept


def test_the_memo_budget_is_set_from_the_cache_mb_setting() -> None:
    """Start-up sizes the one budget every memo shares (``Settings.cache_mb``, default 40 MB)."""
    from serving.memo import MEMO_BUDGET, MEMO_BUDGET_MB_DEFAULT, set_memo_budget_mb
    from serving.settings import Settings

    assert Settings().cache_mb == MEMO_BUDGET_MB_DEFAULT
    before = MEMO_BUDGET.max_bytes
    try:
        set_memo_budget_mb(12)
        assert MEMO_BUDGET.max_bytes == 12 * 1024 * 1024
        set_memo_budget_mb(-1)  # never below nothing
        assert MEMO_BUDGET.max_bytes == 0
    finally:
        MEMO_BUDGET.max_bytes = before


def test_memo_keys_a_dict_argument_in_its_order() -> None:
    """A dict of series is drawn in its order (the legend's): the same items in another order
    are another chart, not a cache hit."""
    from serving.memo import memo

    @memo(maxsize=8)
    def order_of(series: dict) -> list:
        return list(series)

    assert order_of({"raw": [1.0], "scaled": [0.5]}) == ["raw", "scaled"]
    assert order_of({"scaled": [0.5], "raw": [1.0]}) == ["scaled", "raw"]


# --- evictable models (the Training page's snapshots) -----------------------------------------


def _counting_loader(calls: list[str], name: str, size: int):
    def load() -> dict:
        calls.append(name)
        return {"w": np.full(size, float(len(name)), dtype=np.float32)}

    return load


def test_evictable_models_stay_within_the_byte_budget_and_load_again() -> None:
    registry = ModelRegistry(evictable_bytes=2_500_000)
    calls: list[str] = []
    evicted: list[str] = []
    registry.on_evict(evicted.append)
    for name in ("a", "b", "c"):  # ~1 MB each: two fit
        registry.register(name, _counting_loader(calls, name, 250_000), evictable=True)
    registry.register("pinned", _counting_loader(calls, "pinned", 250_000))  # not evictable: never counted
    registry.get("pinned")
    first_a = registry.get("a")
    registry.get("b")
    registry.get("a")  # a is now the most recently used
    registry.get("c")  # over budget: b (least recently used) goes, not a, not c
    assert evicted == ["b"] and list(registry.resident()) == ["a", "c"]
    assert not registry.is_loaded("b") and registry.is_loaded("a") and registry.is_loaded("pinned")
    assert sum(registry.resident().values()) <= 2_500_000
    again = registry.get("b")  # transparently loaded again (and now a goes)
    assert calls.count("b") == 2 and calls.count("a") == 1
    np.testing.assert_array_equal(again["w"], np.full(250_000, 1.0, dtype=np.float32))
    assert evicted == ["b", "a"] and registry.evictions == 2
    assert registry.get("a") is not first_a  # a new load, the old object stays valid for its holder
    np.testing.assert_array_equal(first_a["w"], registry.get("a")["w"])


def test_an_evicted_model_recomputes_its_derived_data_on_next_use() -> None:
    registry = ModelRegistry(evictable_bytes=1)  # every other evictable model goes at once
    calls: list[str] = []
    runs: list[str] = []
    registry.add_precompute("double", lambda loaded: (runs.append("x"), loaded["w"] * 2)[1])
    registry.register("a", _counting_loader(calls, "a", 10), evictable=True)
    registry.register("b", _counting_loader(calls, "b", 10), evictable=True)
    registry.get("a")
    assert registry.wait_ready("a", timeout=10)
    np.testing.assert_array_equal(registry.derived("a", "double"), np.full(10, 2.0))
    registry.get("b")  # the only one that fits (just used): a is unloaded
    assert not registry.is_loaded("a") and registry.resident().keys() == {"b"}
    np.testing.assert_array_equal(registry.derived("a", "double"), np.full(10, 2.0))  # loads a again
    assert calls.count("a") == 2 and registry.is_loaded("a") and not registry.is_loaded("b")
    assert registry.wait_ready("a", timeout=10)
    assert len(runs) >= 2  # the table was computed again for the new load


def test_snapshot_model_evicted_under_a_small_budget_gives_identical_outputs() -> None:
    """A Training-page snapshot ("classic @ step s"), unloaded under the budget, loads again with
    the same weights: the same logits and trace for the same prompt."""
    from core.training.snapshots import load_snapshot, read_index
    from core.engine.checkpoint import ASSETS_MODELS

    steps = read_index(ASSETS_MODELS / "classic").steps
    middle = [s for s in steps if s not in (0, steps[-1])]
    if len(middle) < 2:
        pytest.skip("the built-in classic model has fewer than two intermediate snapshots")
    registry = ModelRegistry(evictable_bytes=1)
    calls: list[int] = []

    def loader(step: int):
        def load():
            calls.append(step)
            return load_snapshot("classic", step, device="cpu")

        return load

    first, second = middle[0], middle[-1]
    registry.register("first", loader(first), evictable=True)
    registry.register("second", loader(second), evictable=True)
    loaded = registry.get("first")
    ids = loaded.tokenizer.encode("The capital of France is")
    logits_before, trace_before = loaded.model.run_with_trace(ids)
    del loaded
    registry.get("second")
    assert not registry.is_loaded("first") and registry.evictions == 1
    reloaded = registry.get("first")
    assert calls == [first, second, first]
    logits_after, trace_after = reloaded.model.run_with_trace(ids)
    np.testing.assert_array_equal(logits_after, logits_before)
    assert trace_after.keys() == trace_before.keys()
    for key in trace_before:
        np.testing.assert_array_equal(trace_after[key], trace_before[key])


def test_result_cache_discard_where_drops_matching_keys_and_their_budget() -> None:
    from serving.caches import ByteBudget

    budget = ByteBudget(10_000_000)
    cache = ResultCache(maxsize=8, budget=budget)
    for key in (("m", "x"), ("m", "y"), ("n", "x")):
        cache.get_or_compute(key, lambda: np.zeros(1000))
    held = budget.total_bytes
    assert cache.discard_where(lambda key: key[0] == "m") == 2
    assert ("n", "x") in cache and ("m", "x") not in cache and len(cache) == 1
    assert 0 < budget.total_bytes < held



def test_a_data_frame_is_sized_like_pandas_deep_count_without_its_cost() -> None:
    """Chart specs hold data frames; sizing one for the memo budget must count what pandas'
    ``memory_usage(deep=True)`` counts (text, numbers, objects, categories, nullable numbers)."""
    import pandas as pd

    from serving.caches import _frame_bytes, estimate_bytes

    frames = [
        pd.DataFrame({"q": np.arange(289), "token": [f"tok{i}" for i in range(289)], "value": np.linspace(0, 1, 289),
                      "masked": [True, False] * 144 + [True], "pair": [("a", i) for i in range(289)]}),
        pd.DataFrame({"a": pd.Categorical(["x", "y"] * 50), "b": pd.array([1, None] * 50, dtype="Int64")},
                     index=[f"r{i}" for i in range(100)]),
        pd.DataFrame({"word": ["中文", "", None] * 10}),
        pd.Series(["a", "bb", None]),
        pd.Series(np.ones(1000)),
        pd.DataFrame(),
    ]
    for frame in frames:
        usage = frame.memory_usage(index=True, deep=True)
        expected = int(usage.sum() if hasattr(usage, "sum") else usage)
        ours = _frame_bytes(frame)
        assert abs(ours - expected) <= 64 + expected // 100, (ours, expected, frame.dtypes)
        assert estimate_bytes(frame) == ours


def test_key_parts_of_shared_read_only_arguments_are_remembered_while_they_live() -> None:
    import gc

    from serving import memo as memo_module
    from serving.caches import FrozenList, freeze
    from serving.memo import _key_part

    table = freeze(np.arange(4096, dtype=np.float64))
    labels = freeze([f"token {i}" for i in range(100)])
    assert isinstance(labels, FrozenList)
    first = _key_part(table), _key_part(labels)
    assert id(table) in memo_module._SHARED_KEY_PARTS and id(labels) in memo_module._SHARED_KEY_PARTS
    assert (_key_part(table), _key_part(labels)) == first
    # equal content, another object: the same key (by content, as before)
    assert _key_part(np.arange(4096, dtype=np.float64)) == first[0]
    assert _key_part(list(labels)) != first[1]  # a plain list keeps its own type in the key
    # a writable array may change: never remembered, keyed afresh
    scratch = np.arange(4096, dtype=np.float64)
    before = _key_part(scratch)
    scratch[0] = 99
    assert id(scratch) not in memo_module._SHARED_KEY_PARTS and _key_part(scratch) != before
    # a read-only view of a writable array is not remembered either
    view = scratch[:]
    view.flags.writeable = False
    _key_part(view)
    assert id(view) not in memo_module._SHARED_KEY_PARTS
    # a frozen list of dicts: the dicts could change, so it is not remembered
    rows = freeze([{"a": i} for i in range(40)])
    _key_part(rows)
    assert id(rows) not in memo_module._SHARED_KEY_PARTS
    # gone with the object
    key = id(table)
    del table, first
    gc.collect()
    assert key not in memo_module._SHARED_KEY_PARTS
