"""The server's per-rerun savings outside our pages: batched event-loop hand-overs
(``ui.server_tuning``) and one BLAS/OpenMP thread per request (``ui.resources.limit_cpu_threads``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ui import server_tuning

ROOT = Path(__file__).resolve().parents[2]


def _on_own_thread(work) -> None:
    """Run ``work()`` on a fresh thread: a worker that ran the browser tests before has an event
    loop running on its main thread (Playwright's), and asyncio allows one per thread."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - re-raised on the test's thread
            failure.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the event loop did not finish"
    if failure:
        raise failure[0]


class _Session:
    """The two attributes of a Streamlit ``AppSession`` the batched hand-over uses."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._event_loop = loop


class _CountingLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        super().__init__()
        self.threadsafe_calls = 0

    def call_soon_threadsafe(self, *args, **kwargs):  # type: ignore[override]
        self.threadsafe_calls += 1
        return super().call_soon_threadsafe(*args, **kwargs)


def test_events_from_the_script_thread_all_run_in_order_with_fewer_wake_ups() -> None:
    _on_own_thread(_events_run_in_order)


def _events_run_in_order() -> None:
    loop = _CountingLoop()
    session = _Session(loop)
    ran: list[int] = []
    total = 500

    def script_thread() -> None:
        for i in range(total):
            server_tuning._call_soon_on_event_loop(session, lambda i=i: ran.append(i))

    async def main() -> None:
        worker = threading.Thread(target=script_thread)
        worker.start()
        while worker.is_alive() or len(ran) < total:
            await asyncio.sleep(0.001)
        worker.join()

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert ran == list(range(total))
    assert 1 <= loop.threadsafe_calls < total  # batched: not one self-pipe write per event


def test_a_failing_event_is_reported_and_the_rest_still_run() -> None:
    _on_own_thread(_failing_event)


def _failing_event() -> None:
    loop = _CountingLoop()
    errors: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    session = _Session(loop)
    ran: list[str] = []

    def boom() -> None:
        raise RuntimeError("one bad event")

    async def main() -> None:
        server_tuning._call_soon_on_event_loop(session, lambda: ran.append("a"))
        server_tuning._call_soon_on_event_loop(session, boom)
        server_tuning._call_soon_on_event_loop(session, lambda: ran.append("c"))
        for _ in range(50):
            await asyncio.sleep(0)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert ran == ["a", "c"]
    assert len(errors) == 1 and isinstance(errors[0]["exception"], RuntimeError)


def test_events_for_a_closed_loop_are_dropped_as_streamlit_drops_them() -> None:
    _on_own_thread(_closed_loop)


def _closed_loop() -> None:
    loop = asyncio.new_event_loop()
    loop.close()
    session = _Session(loop)
    server_tuning._call_soon_on_event_loop(session, lambda: None)  # no "Event loop is closed"
    server_tuning._call_soon_on_event_loop(session, lambda: None)  # and the next one is tried again


class _Event:
    def __init__(self) -> None:
        self.value = False

    def is_set(self) -> bool:
        return self.value

    def set(self) -> None:
        self.value = True


class _AsyncObjects:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.eventloop = loop
        self.need_send_data = _Event()


class _Runtime:
    def __init__(self, objs: _AsyncObjects) -> None:
        self._objs = objs

    def _get_async_objs(self) -> _AsyncObjects:
        return self._objs


def test_the_flush_wake_up_is_skipped_while_one_is_pending_or_the_event_is_set() -> None:
    _on_own_thread(_flush_wake_up)


def _flush_wake_up() -> None:
    loop = _CountingLoop()
    objs = _AsyncObjects(loop)
    runtime = _Runtime(objs)
    try:
        for _ in range(10):
            server_tuning._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 1  # one wake-up pending covers the other nine
        loop.run_until_complete(asyncio.sleep(0))
        assert objs.need_send_data.is_set()
        server_tuning._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 1  # the flush that clears the event has not run yet
        objs.need_send_data.value = False  # the loop flushed (it clears the event first)
        server_tuning._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 2
    finally:
        loop.close()


def test_on_the_loop_thread_the_flush_event_is_set_without_a_wake_up() -> None:
    _on_own_thread(_flush_on_loop_thread)


def _flush_on_loop_thread() -> None:
    loop = _CountingLoop()
    objs = _AsyncObjects(loop)

    async def main() -> None:
        server_tuning._enqueued_some_message(_Runtime(objs))

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert objs.need_send_data.is_set() and loop.threadsafe_calls == 0


def test_a_lingering_drain_takes_the_next_events_without_a_self_pipe_write() -> None:
    _on_own_thread(_lingering_drain)


def _lingering_drain() -> None:
    linger = server_tuning.DRAIN_LINGER_S
    server_tuning.DRAIN_LINGER_S = 0.3  # long enough that a busy test machine cannot outlast it
    try:
        _lingering_drain_checks(server_tuning.DRAIN_LINGER_S)
    finally:
        server_tuning.DRAIN_LINGER_S = linger


def _lingering_drain_checks(linger: float) -> None:
    loop = _CountingLoop()
    session = _Session(loop)
    ran: list[str] = []

    async def main() -> None:
        server_tuning._call_soon_on_event_loop(session, lambda: ran.append("a"))
        await asyncio.sleep(0.0005)  # drained; the drain now lingers
        assert ran == ["a"] and loop.threadsafe_calls == 1
        server_tuning._call_soon_on_event_loop(session, lambda: ran.append("b"))
        assert loop.threadsafe_calls == 1  # appended only: the lingering drain will take it
        await asyncio.sleep(linger * 1.5)
        assert ran == ["a", "b"]
        await asyncio.sleep(linger * 2.5)  # an empty check ends the linger
        server_tuning._call_soon_on_event_loop(session, lambda: ran.append("c"))
        assert loop.threadsafe_calls == 2  # so the next event wakes the loop again
        await asyncio.sleep(0.01)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert ran == ["a", "b", "c"]


def test_the_pinned_streamlit_is_patched() -> None:
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    assert server_tuning.coalesce_wakeups() is True
    assert Runtime._enqueued_some_message is server_tuning._enqueued_some_message
    assert AppSession._call_soon_on_event_loop is server_tuning._call_soon_on_event_loop
    assert server_tuning.coalesce_wakeups() is True  # idempotent


@pytest.mark.parametrize("threads", ["1", "2"])
def test_numpy_and_torch_pools_get_the_servers_thread_count(threads: str) -> None:
    code = ("import json, threadpoolctl, torch; from ui import resources; resources.limit_cpu_threads(); "
            "print(json.dumps([torch.get_num_threads(), "
            "[p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas']]))")
    env = {**os.environ, "TOKEN_JOURNEY_BACKGROUND_LOAD": "0", "TOKEN_JOURNEY_THREADS": threads}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)  # the pool starts with one per core; the limit must bring it down
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    torch_threads, blas_pools = json.loads(out.stdout.strip().splitlines()[-1])
    assert torch_threads == int(threads)
    assert blas_pools and all(n == int(threads) for n in blas_pools)


def test_post_run_collection_is_light_between_full_ones() -> None:
    import gc
    import weakref

    collector = server_tuning.PostRunCollector(full_every_s=30)
    now = [1000.0]
    collector._clock = lambda: now[0]
    collector._last_full = now[0]

    class Node:
        pass

    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection may age the cycle into the old generation meanwhile
    try:
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        gone = weakref.ref(a)
        del a, b
        collector.collect(2)  # what Streamlit calls after a run, 1 s after the last full one
    finally:
        if was_enabled:
            gc.enable()
    assert gone() is None  # a run's young garbage is freed by the light collection
    assert (collector.light, collector.full) == (1, 0)
    now[0] += 31
    collector.collect(2)
    assert (collector.light, collector.full) == (1, 1)  # due again: the full collection
    collector.collect(2)
    assert (collector.light, collector.full) == (2, 1)
    collector.collect(0)  # other generations pass through unchanged
    assert collector.get_threshold() == gc.get_threshold()  # the rest is the gc module's


def test_the_pinned_streamlit_collects_through_the_lighter_collector() -> None:
    import gc

    from streamlit.runtime.scriptrunner import script_runner

    before = script_runner.gc
    try:
        script_runner.gc = gc
        installed = server_tuning.lighter_post_run_gc(30)
        assert isinstance(installed, server_tuning.PostRunCollector)
        assert script_runner.gc is installed
        assert server_tuning.lighter_post_run_gc(30) is installed  # idempotent
        # Streamlit still calls gc.collect(2) after a run: the name it uses is there
        assert "gc.collect(2)" in Path(script_runner.__file__).read_text(encoding="utf-8")
    finally:
        script_runner.gc = before


def _compare_views_script() -> None:
    """An app whose widgets cover each way a key can be held (a plain value, a widget's user key,
    None values, a keyless widget); it prints every key on which the one-key view and
    ``filtered_state`` disagree, and how many keys it probed."""
    import streamlit as st
    from streamlit.runtime.state import get_session_state

    from ui.server_tuning import _OneKeyView

    st.session_state.setdefault("plain", 3)
    st.session_state.setdefault("nothing", None)
    st.slider("s", 0, 10, key="slider_key")
    st.selectbox("b", ["a", "b"], key="box", index=None)
    st.text_input("t", key="text")
    st.number_input("n", key="num", value=None)
    st.checkbox("keyless")
    safe = get_session_state()
    full = safe.filtered_state
    view = _OneKeyView(safe)
    probes = [*full, "missing", "$$STREAMLIT_INTERNAL_KEY_x", *safe._state._keys(), 7]
    wrong = [k for k in probes if (k in view) != (k in full) or (k in full and view[k] != full[k])]
    st.text(repr(wrong))
    st.text(f"probed {len(probes)} held {sorted(view)} len {len(view)}")


def test_a_widgets_one_key_view_answers_as_the_whole_filtered_state() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_compare_views_script).run()
    assert at.text[0].value == "[]" and "probed" in at.text[1].value
    assert "'box'" in at.text[1].value and "'nothing'" in at.text[1].value and "'plain'" in at.text[1].value
    at.slider(key="slider_key").set_value(7)
    at.selectbox(key="box").select("b")
    at.text_input(key="text").input("hi")
    at.number_input(key="num").set_value(5)
    at.run()
    assert at.text[0].value == "[]"
    assert at.slider(key="slider_key").value == 7 and at.selectbox(key="box").value == "b"


def _none_values_script() -> None:
    import streamlit as st

    from ui.server_tuning import one_key_widget_state

    st.text(str(one_key_widget_state()))
    if "num" not in st.session_state:
        st.session_state["num"] = None
        st.session_state["box"] = None
    st.number_input("n", key="num", value=3)
    st.selectbox("b", ["a", "b"], key="box")
    st.text(f"{st.session_state['num']!r} {st.session_state['box']!r}")


def test_patched_widgets_still_see_a_none_their_key_holds() -> None:
    """The patched read decides what a number input or select shows when session state set its
    key to None (empty, not its default): the same as Streamlit's own."""
    from streamlit.elements.widgets import number_input, selectbox
    from streamlit.testing.v1 import AppTest

    from ui.server_tuning import one_key_widget_state

    assert one_key_widget_state() and one_key_widget_state()  # idempotent
    for module in (number_input, selectbox):
        assert type(module.get_session_state).__name__ == "function" and getattr(module, "_token_journey_one_key_state")
    at = AppTest.from_function(_none_values_script).run()
    assert at.text[0].value == "True"
    assert at.number_input(key="num").value is None and at.selectbox(key="box").value is None
    assert at.text[1].value == "None None"


def test_start_up_work_waits_for_the_first_page_or_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from ui import resources

    monkeypatch.setattr(resources, "_FIRST_PAGE_DRAWN", threading.Event())
    monkeypatch.setattr(resources, "_GRACE_STARTED", threading.Event())
    started = time.monotonic()
    resources._hold_until_first_page(started + 0.3)  # nobody drew a page: the deadline ends it
    assert 0.25 <= time.monotonic() - started < 5
    threading.Timer(0.1, resources.first_page_drawn).start()
    started = time.monotonic()
    resources._hold_until_first_page(started + 30)  # the first page drawn ends it, after the grace
    assert resources.START_GRACE_S <= time.monotonic() - started < 5
    started = time.monotonic()
    resources._hold_until_first_page(started + 30)  # and every later hold
    assert time.monotonic() - started < 0.5


def test_component_data_frames_are_still_found_once_pandas_is_loaded() -> None:
    import pandas as pd
    from streamlit.components.v2.bidi_component import serialization

    assert server_tuning.light_component_frame_check() and server_tuning.light_component_frame_check()
    blobs: dict[str, bytes] = {}
    out = serialization._extract_dataframes_from_dict(
        {"table": pd.DataFrame({"a": [1, 2]}), "columns": {"a": pd.Series([3, 4])}, "rows": [{"a": 1}],
         "labels": {"x": "y"}, "n": 3}, blobs)
    assert set(out["table"]) == {serialization.ARROW_REF_KEY}
    assert set(out["columns"]) == {serialization.ARROW_REF_KEY}  # a mapping of Series: a frame too
    assert out["rows"] == [{"a": 1}] and out["labels"] == {"x": "y"} and out["n"] == 3
    assert len(blobs) == 2
