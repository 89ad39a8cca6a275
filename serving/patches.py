"""Every patch of Streamlit's private internals, in one place, installed by one call.

``install(settings)`` (called once by ``serving.startup.start``) installs each patch whose
``Settings`` switch is on, and only on the exact Streamlit version they were written and
tested for (``STREAMLIT_VERSION``); on any other version each is skipped with one log line,
and Streamlit behaves as shipped. ``tests/unit/test_patches.py`` runs each against the real
library and pins the source of every private function it replaces or relies on.

The patches (``PATCHES``; name: Settings switch):

- ``coalesce`` (``coalesce``): fewer event-loop wake-ups per rerun. Every element a script
  draws becomes one ``ForwardMsg``, and Streamlit 1.67 hands each one to the event loop twice
  with ``loop.call_soon_threadsafe`` (a self-pipe write and a wake-up): from the script thread
  (``AppSession._call_soon_on_event_loop``) and for the flush (``Runtime._enqueued_some_message``).
  A full rerun sends 100-200 messages. Both hand-overs are batched: events go into a
  per-session FIFO that one scheduled callback drains in order (lingering ``DRAIN_LINGER_S``
  for the next message), and the flush wake-up is skipped while one is pending or the "send
  data" event is still set. The same messages reach the browser in the same order.
- ``post_run_gc`` (``post_run_full_gc_s``): Streamlit ends every run with ``gc.collect(2)``;
  ``PostRunCollector`` collects generations 0-1 after each run and all three at most every
  ``post_run_full_gc_s`` seconds (0: the switch is off, Streamlit's full one every run).
- ``light_frame_check`` (``light_frame_check``): a component's plain lists and dicts skip the
  data-frame check that imports pandas (the Overview's picture stays pandas-free).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from serving.settings import Settings

STREAMLIT_VERSION = "1.67.0"  # the only version these patches were written and tested for


@dataclass(frozen=True)
class Patch:
    """One patch: its name, the ``Settings`` field that switches it, what it relies on."""

    name: str
    switch: str
    install: Callable[[Settings], bool]
    relies_on: tuple[str, ...]  # "module:qualname" of each private function it replaces or reads


def install(settings: Settings, log: Callable[[str], None] | None = None) -> dict[str, str]:
    """Install every switched-on patch (idempotent); returns ``{name: "installed" | "off" |
    "skipped"}``. A Streamlit other than ``STREAMLIT_VERSION`` gets none: one log line each.

    Example: install(Settings()) -> {"coalesce": "installed", ...}
    """
    import streamlit

    say = log or (lambda line: print(line, file=sys.stderr, flush=True))
    done: dict[str, str] = {}
    for patch in PATCHES:
        if not _switched_on(settings, patch.switch):
            done[patch.name] = "off"
        elif streamlit.__version__ != STREAMLIT_VERSION:
            say(f"[token-journey] patch {patch.name} skipped: written for Streamlit {STREAMLIT_VERSION}, "
                f"this is {streamlit.__version__}")
            done[patch.name] = "skipped"
        else:
            done[patch.name] = "installed" if patch.install(settings) else "skipped"
    return done


def _switched_on(settings: Settings, switch: str) -> bool:
    value = getattr(settings, switch)
    return value > 0 if isinstance(value, float) else bool(value)


# --- coalesce: one event-loop wake-up per batch of messages ----------------------------------

_PATCHED_FLAG = "_token_journey_coalesced"
_PENDING = "_token_journey_wake_pending"


def _enqueued_some_message(self: Any) -> None:
    """``Runtime._enqueued_some_message`` that wakes the loop at most once per flush."""
    async_objs = self._get_async_objs()
    if _on_loop_thread(async_objs.eventloop):
        async_objs.need_send_data.set()  # what the scheduled callback would do, without the pipe
        return
    # A set event means the loop has not yet started the flush that clears it, or was woken
    # again after clearing it: either way a flush that reads the queue after now will run.
    if self.__dict__.get(_PENDING) or async_objs.need_send_data.is_set():
        return
    setattr(self, _PENDING, True)

    def wake() -> None:
        setattr(self, _PENDING, False)
        async_objs.need_send_data.set()

    try:
        async_objs.eventloop.call_soon_threadsafe(wake)
    except BaseException:
        setattr(self, _PENDING, False)
        raise


def _on_loop_thread(loop: Any) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:  # no loop runs on this thread (a script thread)
        return False


_EVENTS = "_token_journey_events"
# How long a session's drain stays scheduled after it empties the FIFO, waiting for the next
# message without a self-pipe write (a rerun sends one every ~0.1-1 ms).
DRAIN_LINGER_S = 0.004
_DRAIN_SCHEDULED = "_token_journey_drain_scheduled"
_EVENTS_LOCK = threading.Lock()  # guards every session's FIFO and flag; held only to append/pop


def _call_soon_on_event_loop(self: Any, callback: Callable[[], None]) -> None:
    """``AppSession._call_soon_on_event_loop`` that queues ``callback`` behind the ones waiting.

    Only the first event of a batch writes to the loop's self-pipe; the drain runs them all in
    the order they were sent. Events for a closed loop are dropped, as Streamlit does.
    """
    with _EVENTS_LOCK:
        events = self.__dict__.get(_EVENTS)
        if events is None:
            events = deque()
            setattr(self, _EVENTS, events)
        events.append(callback)
        if self.__dict__.get(_DRAIN_SCHEDULED):
            return
        setattr(self, _DRAIN_SCHEDULED, True)
    try:
        self._event_loop.call_soon_threadsafe(_drain_events, self)
    except RuntimeError:
        with _EVENTS_LOCK:
            events.clear()
            setattr(self, _DRAIN_SCHEDULED, False)
        if not self._event_loop.is_closed():
            raise


def _drain_events(session: Any) -> None:
    """Run the session's waiting events in order (on its event loop).

    At most the events waiting when it starts: later ones get another turn of the loop, so one
    busy script cannot keep the loop from the other sessions. A failing event is reported the
    way asyncio reports a failing callback, and the rest still run.
    """
    events: deque = session.__dict__[_EVENTS]
    with _EVENTS_LOCK:
        count = len(events)
    for _ in range(count):
        with _EVENTS_LOCK:
            callback = events.popleft()
        try:
            callback()
        except BaseException as error:  # noqa: BLE001 - as asyncio does for one callback
            session._event_loop.call_exception_handler(
                {"message": "Exception in a Streamlit script-runner event", "exception": error})
    with _EVENTS_LOCK:
        more = bool(events)
    if more:
        session._event_loop.call_soon(_drain_events, session)
    else:
        session._event_loop.call_later(DRAIN_LINGER_S, _drain_or_stop, session)


def _drain_or_stop(session: Any) -> None:
    """The lingering check: drain what came meanwhile, or let the next message wake the loop."""
    with _EVENTS_LOCK:
        if not session.__dict__[_EVENTS]:
            setattr(session, _DRAIN_SCHEDULED, False)
            return
    _drain_events(session)


def coalesce_wakeups() -> bool:
    """Install the coalescing callback (idempotent); False when this Streamlit has no such hook.

    Sessions capture the runtime's bound callback when they are created, so a runtime that is
    already running has its session manager and live sessions pointed at the new one too
    (with ``streamlit run app.py`` our code is first imported inside the first session).
    """
    try:
        from streamlit.runtime.app_session import AppSession
        from streamlit.runtime.runtime import Runtime
    except ImportError:  # pragma: no cover - Streamlit always has them; stay harmless if not
        return False
    if (not callable(getattr(Runtime, "_enqueued_some_message", None)) or not hasattr(Runtime, "_get_async_objs")
            or not callable(getattr(AppSession, "_call_soon_on_event_loop", None))):
        return False
    if not getattr(Runtime, _PATCHED_FLAG, False):
        Runtime._enqueued_some_message = _enqueued_some_message  # type: ignore[method-assign]
        AppSession._call_soon_on_event_loop = _call_soon_on_event_loop  # type: ignore[method-assign]
        setattr(Runtime, _PATCHED_FLAG, True)
    if Runtime.exists():
        _rebind_running(Runtime.instance())
    return True


def _rebind_running(runtime: Any) -> None:
    callback = runtime._enqueued_some_message
    manager = getattr(runtime, "_session_mgr", None)
    if manager is None:
        return
    if hasattr(manager, "_message_enqueued_callback"):
        manager._message_enqueued_callback = callback
    try:
        sessions = manager.list_sessions()
    except Exception as error:  # noqa: BLE001 - an internal API that moved: new sessions still get it
        print(f"[token-journey] running sessions keep Streamlit's own wake-up: {error!r}", file=sys.stderr)
        return
    for info in sessions:
        session = getattr(info, "session", None)
        if session is not None and getattr(session, "_message_enqueued_callback", None) is not None:
            session._message_enqueued_callback = callback


# --- post_run_gc: the collection after every script run ---------------------------------------------------


class PostRunCollector:
    """Stands in for the ``gc`` module inside Streamlit's script runner (``lighter_post_run_gc``).

    Streamlit ends every run with ``gc.collect(2)``: a walk over every object the collector
    tracks (torch, pandas, both models, the sessions and the caches), on every click.
    A run's own garbage is young, so this collects generations 0 and 1 after each run and all
    three at most once every ``full_every_s`` seconds (a cycle that reached the old generation
    waits at most that long; Python's own threshold-based collections still run meanwhile).
    Everything else is the ``gc`` module's.
    """

    def __init__(self, full_every_s: float) -> None:
        import time

        self._clock = time.monotonic
        self._full_every_s = full_every_s
        self._last_full = self._clock()
        self.light = 0
        self.full = 0

    def collect(self, generation: int = 2) -> int:
        import gc

        if generation >= 2 and self._clock() - self._last_full < self._full_every_s:
            self.light += 1
            return gc.collect(1)
        if generation >= 2:
            self._last_full = self._clock()
            self.full += 1
        return gc.collect(generation)

    def __getattr__(self, name: str) -> Any:
        import gc

        return getattr(gc, name)


def lighter_post_run_gc(full_every_s: float = 30.0) -> PostRunCollector | None:
    """Install ``PostRunCollector`` in Streamlit's script runner (idempotent); None when this
    Streamlit's runner does not collect through a module-level ``gc`` (nothing is changed)."""
    try:
        from streamlit.runtime.scriptrunner import script_runner
    except ImportError:  # pragma: no cover - Streamlit always has it
        return None
    current = getattr(script_runner, "gc", None)
    if isinstance(current, PostRunCollector):
        return current
    import gc

    if current is not gc:
        return None
    collector = PostRunCollector(full_every_s)
    script_runner.gc = collector  # type: ignore[attr-defined]
    return collector


# --- light_frame_check: a component's data, checked for data frames ------------------------------------------------

_FRAME_CHECK_FLAG = "_token_journey_light_frame_check"


def light_component_frame_check() -> bool:
    """Let Streamlit's components (v2) skip its data-frame check for plain lists and dicts while
    pandas is not imported (idempotent); False when this Streamlit has no such check.

    Streamlit asks ``is_dataframe_like`` of every top-level value of a component's data, and that
    imports pandas and pyarrow first: the Overview's journey picture made the first student's first
    Overview import pandas (0.42 s of its 1.3 s run, cProfile), which nothing on that page uses. A
    plain list is never one of the data-frame formats; a plain dict is one only when its first value
    is a pandas Series, and none can exist before pandas is imported. Every other value, and every
    dict once pandas is loaded, gets Streamlit's own check.
    """
    try:
        from streamlit.components.v2.bidi_component import serialization
    except ImportError:  # pragma: no cover - a Streamlit without components v2
        return False
    original = getattr(serialization, "is_dataframe_like", None)
    if not callable(original):
        return False
    if getattr(original, _FRAME_CHECK_FLAG, False):
        return True

    def is_dataframe_like(obj: object) -> bool:
        kind = type(obj)
        if kind is list or (kind is dict and "pandas" not in sys.modules):
            return False
        return original(obj)

    setattr(is_dataframe_like, _FRAME_CHECK_FLAG, True)
    serialization.is_dataframe_like = is_dataframe_like  # type: ignore[attr-defined]
    return True


def _install_post_run_gc(settings: Settings) -> bool:
    return lighter_post_run_gc(settings.post_run_full_gc_s) is not None


PATCHES: tuple[Patch, ...] = (
    Patch("coalesce", "coalesce", lambda _s: coalesce_wakeups(),
          ("streamlit.runtime.runtime:Runtime._enqueued_some_message",
           "streamlit.runtime.runtime:Runtime._get_async_objs",
           "streamlit.runtime.runtime:AsyncObjects",
           "streamlit.runtime.app_session:AppSession.__init__",
           "streamlit.runtime.app_session:AppSession._call_soon_on_event_loop",
           "streamlit.runtime.app_session:AppSession._on_scriptrunner_event")),
    Patch("post_run_gc", "post_run_full_gc_s", _install_post_run_gc,
          ("streamlit.runtime.scriptrunner.script_runner:ScriptRunner._on_script_finished",)),
    Patch("light_frame_check", "light_frame_check", lambda _s: light_component_frame_check(),
          ("streamlit.components.v2.bidi_component.serialization:_extract_dataframes_from_dict",
           "streamlit.dataframe_util:is_dataframe_like")),
)
