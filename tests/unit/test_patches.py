"""``serving.patches``: every patch of Streamlit's internals, checked against the real library.

For each patch: the source of every private function it replaces or relies on is pinned to the
one recorded for Streamlit 1.67.0 (a change there fails here first), a behavioural check runs it
inside the real classes, its switch turns it off, and on any other version it is skipped with
one log line. The coalescing logic also has focused tests with a counting event loop.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from serving import patches
from serving.settings import Settings

ROOT = Path(__file__).resolve().parents[2]

# sha256 (first 16 hex digits) of ``inspect.getsource`` of each function a patch relies on, in
# Streamlit 1.67.0. A new Streamlit that changes any of them must be re-read before the patch
# is allowed on it (then update STREAMLIT_VERSION and these together).
RECORDED_SOURCES = {
    "streamlit.runtime.runtime:Runtime._enqueued_some_message": "82ae537d91f146d1",
    "streamlit.runtime.runtime:Runtime._get_async_objs": "64420a2ed8cd3022",
    "streamlit.runtime.runtime:AsyncObjects": "44132ee53edbf5b9",
    "streamlit.runtime.app_session:AppSession.__init__": "64cab45766dcefc4",
    "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop": "565b1968d78c9283",
    "streamlit.runtime.app_session:AppSession._on_scriptrunner_event": "a622d57aa2bacdc2",
    "streamlit.runtime.scriptrunner.script_runner:ScriptRunner._on_script_finished": "f82112c1ee58a0b7",
    "streamlit.components.v2.bidi_component.serialization:_extract_dataframes_from_dict": "d72ae867c7c44b3e",
    "streamlit.dataframe_util:is_dataframe_like": "4ddfa5786edda9dc",
}

_HASH_SCRIPT = r"""
import hashlib, importlib, inspect, json, sys
out = {}
for ref in json.loads(sys.argv[1]):
    module, qualname = ref.split(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    obj = obj.fget if isinstance(obj, property) else obj
    out[ref] = hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]
print(json.dumps(out))
"""


def test_the_installed_streamlit_is_the_one_the_patches_were_written_for() -> None:
    import streamlit

    assert streamlit.__version__ == patches.STREAMLIT_VERSION


def test_every_function_a_patch_relies_on_is_unchanged() -> None:
    """Hashed in a fresh interpreter, where nothing is patched yet (the originals' own source)."""
    relied = sorted({ref for patch in patches.PATCHES for ref in patch.relies_on})
    assert relied == sorted(RECORDED_SOURCES)
    out = subprocess.run([sys.executable, "-c", _HASH_SCRIPT, json.dumps(relied)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == RECORDED_SOURCES


def test_each_patch_has_its_own_switch() -> None:
    switches = [patch.switch for patch in patches.PATCHES]
    assert len(set(switches)) == len(switches)
    assert all(hasattr(Settings(), switch) for switch in switches)


def test_switched_off_patches_are_not_installed() -> None:
    """In a fresh interpreter: every switch off, nothing of Streamlit's is replaced or read."""
    code = (
        "import json, gc, streamlit.delta_generator as dg; from serving import patches; "
        "from serving.settings import Settings; "
        "from streamlit.runtime.runtime import Runtime; from streamlit.runtime.app_session import AppSession; "
        "from streamlit.runtime.scriptrunner import script_runner; "
        "from streamlit.elements.widgets import slider; "
        "from streamlit.components.v2.bidi_component import serialization; "
        "before = [Runtime._enqueued_some_message, AppSession._call_soon_on_event_loop, script_runner.gc, "
        "slider.get_session_state, serialization.is_dataframe_like, dg._use_warning_has_been_displayed]; "
        "off = Settings(coalesce=False, post_run_full_gc_s=0.0, light_frame_check=False); "
        "done = patches.install(off); "
        "after = [Runtime._enqueued_some_message, AppSession._call_soon_on_event_loop, script_runner.gc, "
        "slider.get_session_state, serialization.is_dataframe_like, dg._use_warning_has_been_displayed]; "
        "print(json.dumps([sorted(set(done.values())), [a is b for a, b in zip(before, after)]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [["off"], [True] * 6]


def test_another_streamlit_version_gets_no_patch_and_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit
    from streamlit.runtime.runtime import Runtime

    monkeypatch.setattr(streamlit, "__version__", "1.68.0")
    before = Runtime._enqueued_some_message
    lines: list[str] = []
    done = patches.install(Settings(), log=lines.append)
    assert set(done.values()) == {"skipped"}
    assert len(lines) == len(patches.PATCHES)
    assert all("1.68.0" in line and "1.67.0" in line for line in lines)
    assert [line.split()[2] for line in lines] == [p.name for p in patches.PATCHES]  # each names its patch
    assert Runtime._enqueued_some_message is before


def test_install_installs_every_patch_on_the_pinned_version() -> None:
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    done = patches.install(Settings())
    assert done == {p.name: "installed" for p in patches.PATCHES}
    assert Runtime._enqueued_some_message is patches._enqueued_some_message
    assert AppSession._call_soon_on_event_loop is patches._call_soon_on_event_loop
    assert patches.install(Settings()) == done  # idempotent


def test_messages_reach_a_real_app_session_queue_in_order() -> None:
    """A real ``AppSession``: 300 messages sent from a script thread, as a ScriptRunner sends them,
    all arrive in its browser queue in order, with the patched hand-over and far fewer wake-ups."""
    patches.coalesce_wakeups()
    _on_own_thread(_real_session_in_order)


def _real_session_in_order() -> None:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.script_data import ScriptData
    from streamlit.runtime.scriptrunner import ScriptRunnerEvent
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    total = 300
    wakeups = [0]
    loop = _CountingLoop()

    async def main() -> list[str]:
        session = AppSession(ScriptData(str(ROOT / "app.py")), MemoryUploadedFileManager("/upload"), ScriptCache(),
                             message_enqueued_callback=lambda: wakeups.__setitem__(0, wakeups[0] + 1), user_info={})
        calls_before = loop.threadsafe_calls

        def script_thread() -> None:
            for i in range(total):
                msg = ForwardMsg()
                msg.page_info_changed.query_string = str(i)  # not a delta: never merged in the queue
                session._on_scriptrunner_event(None, ScriptRunnerEvent.ENQUEUE_FORWARD_MSG, forward_msg=msg)

        worker = threading.Thread(target=script_thread)
        worker.start()
        got: list[str] = []
        while worker.is_alive() or len(got) < total:
            got += [m.page_info_changed.query_string for m in session.flush_browser_queue()]
            await asyncio.sleep(0.001)
        worker.join()
        assert loop.threadsafe_calls - calls_before < total / 2  # batched hand-overs
        session._script_event_loop.close()
        return got

    try:
        got = loop.run_until_complete(main())
    finally:
        loop.close()
    assert got == [str(i) for i in range(total)]
    assert wakeups[0] == total  # the flush callback still hears of every message


def test_a_real_runtime_flush_wake_up_is_set() -> None:
    """``Runtime._enqueued_some_message`` on a real Runtime object and its real AsyncObjects."""
    patches.coalesce_wakeups()
    _on_own_thread(_real_runtime_flush)


def _real_runtime_flush() -> None:
    from streamlit.runtime.runtime import AsyncObjects, Runtime

    loop = _CountingLoop()
    try:
        runtime = object.__new__(Runtime)
        need = asyncio.Event()
        runtime._async_objs = AsyncObjects(loop, asyncio.Event(), asyncio.Event(), need, loop.create_future(),
                                           loop.create_future())
        for _ in range(5):
            runtime._enqueued_some_message()  # from a thread without a running loop: one wake-up
        assert loop.threadsafe_calls == 1 and not need.is_set()
        loop.run_until_complete(asyncio.sleep(0))
        assert need.is_set()

        async def on_loop() -> None:
            need.clear()
            runtime._enqueued_some_message()

        loop.run_until_complete(on_loop())
        assert need.is_set() and loop.threadsafe_calls == 1  # on the loop: set directly
    finally:
        loop.close()


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
            patches._call_soon_on_event_loop(session, lambda i=i: ran.append(i))

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
        patches._call_soon_on_event_loop(session, lambda: ran.append("a"))
        patches._call_soon_on_event_loop(session, boom)
        patches._call_soon_on_event_loop(session, lambda: ran.append("c"))
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
    patches._call_soon_on_event_loop(session, lambda: None)  # no "Event loop is closed"
    patches._call_soon_on_event_loop(session, lambda: None)  # and the next one is tried again


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
            patches._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 1  # one wake-up pending covers the other nine
        loop.run_until_complete(asyncio.sleep(0))
        assert objs.need_send_data.is_set()
        patches._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 1  # the flush that clears the event has not run yet
        objs.need_send_data.value = False  # the loop flushed (it clears the event first)
        patches._enqueued_some_message(runtime)
        assert loop.threadsafe_calls == 2
    finally:
        loop.close()


def test_on_the_loop_thread_the_flush_event_is_set_without_a_wake_up() -> None:
    _on_own_thread(_flush_on_loop_thread)


def _flush_on_loop_thread() -> None:
    loop = _CountingLoop()
    objs = _AsyncObjects(loop)

    async def main() -> None:
        patches._enqueued_some_message(_Runtime(objs))

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert objs.need_send_data.is_set() and loop.threadsafe_calls == 0


def test_a_lingering_drain_takes_the_next_events_without_a_self_pipe_write() -> None:
    _on_own_thread(_lingering_drain)


def _lingering_drain() -> None:
    linger = patches.DRAIN_LINGER_S
    patches.DRAIN_LINGER_S = 0.3  # long enough that a busy test machine cannot outlast it
    try:
        _lingering_drain_checks(patches.DRAIN_LINGER_S)
    finally:
        patches.DRAIN_LINGER_S = linger


def _lingering_drain_checks(linger: float) -> None:
    loop = _CountingLoop()
    session = _Session(loop)
    ran: list[str] = []

    async def main() -> None:
        patches._call_soon_on_event_loop(session, lambda: ran.append("a"))
        await asyncio.sleep(0.0005)  # drained; the drain now lingers
        assert ran == ["a"] and loop.threadsafe_calls == 1
        patches._call_soon_on_event_loop(session, lambda: ran.append("b"))
        assert loop.threadsafe_calls == 1  # appended only: the lingering drain will take it
        await asyncio.sleep(linger * 1.5)
        assert ran == ["a", "b"]
        await asyncio.sleep(linger * 2.5)  # an empty check ends the linger
        patches._call_soon_on_event_loop(session, lambda: ran.append("c"))
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

    assert patches.coalesce_wakeups() is True
    assert Runtime._enqueued_some_message is patches._enqueued_some_message
    assert AppSession._call_soon_on_event_loop is patches._call_soon_on_event_loop
    assert patches.coalesce_wakeups() is True  # idempotent


def test_post_run_collection_is_light_between_full_ones() -> None:
    import gc
    import weakref

    collector = patches.PostRunCollector(full_every_s=30)
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
        installed = patches.lighter_post_run_gc(30)
        assert isinstance(installed, patches.PostRunCollector)
        assert script_runner.gc is installed
        assert patches.lighter_post_run_gc(30) is installed  # idempotent
        # Streamlit still calls gc.collect(2) after a run: the name it uses is there
        assert "gc.collect(2)" in Path(script_runner.__file__).read_text(encoding="utf-8")
    finally:
        script_runner.gc = before


def test_component_data_frames_are_still_found_once_pandas_is_loaded() -> None:
    import pandas as pd
    from streamlit.components.v2.bidi_component import serialization

    assert patches.light_component_frame_check() and patches.light_component_frame_check()
    blobs: dict[str, bytes] = {}
    out = serialization._extract_dataframes_from_dict(
        {"table": pd.DataFrame({"a": [1, 2]}), "columns": {"a": pd.Series([3, 4])}, "rows": [{"a": 1}],
         "labels": {"x": "y"}, "n": 3}, blobs)
    assert set(out["table"]) == {serialization.ARROW_REF_KEY}
    assert set(out["columns"]) == {serialization.ARROW_REF_KEY}  # a mapping of Series: a frame too
    assert out["rows"] == [{"a": 1}] and out["labels"] == {"x": "y"} and out["n"] == 3
    assert len(blobs) == 2
