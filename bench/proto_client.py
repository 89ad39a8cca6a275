"""A minimal Streamlit websocket client: what a browser tab sends and waits for, no browser.

It speaks Streamlit 1.67's own protocol (``/_stcore/stream``, binary ``BackMsg`` /
``ForwardMsg`` protobufs from ``streamlit.proto``): connect with the ``streamlit``
subprotocol, send ``rerun_script`` with a ``ClientState`` (page hash, widget states,
fragment id), read deltas until ``script_finished``. From the deltas it keeps the widgets
on the page (id, kind, options, range, fragment) so a bench can act like a student: pick a
widget, send a new value, time until the server says the run is done.

Like a browser tab it keeps Streamlit's message cache (``MessageCache``, the browser's
``ForwardMessageCache``): every large element (``metadata.cacheable``) is kept by its hash, the
hashes go with each ``rerun_script`` (``cached_message_hashes``), the server then sends a short
reference (``ref_hash``) instead of an element the tab already holds, and the client resolves it;
entries expire after ``max_cached_message_age`` runs without use. So the bytes and the server's
work a bench measures are a browser's.

It also keeps the page's browser knobs (``BrowserKnob``): the knobs a components-v2 element
(``bidi_component``) carries in its data as ``KnobSpec``s (``{"name", "value", "default"}``, the
shared contract of ``ui/components/knobs.py`` and ``frontend/src/knob_state.ts``), plus those of
``DECLARED_KNOBS`` for a component whose data holds plain values. A student moves them in the
browser: no message goes to the server, so a bench counts them apart from the server's work.

Used by ``bench/classroom.py`` and ``bench/interactions.py``; loopback only.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import ClientConnection, connect

WIDGET_KINDS = ("slider", "selectbox", "checkbox", "number_input", "radio", "multiselect", "button",
                "button_group", "text_area", "text_input")
FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


@dataclass
class Widget:
    id: str
    kind: str
    proto: Any
    fragment_id: str
    sidebar: bool

    @property
    def key(self) -> str:
        """The user key (the id's suffix after the hash), or '' for a keyless widget."""
        parts = self.id.split("-", 2)
        return parts[2] if len(parts) == 3 else ""


@dataclass(frozen=True)
class BrowserKnob:
    """A knob a component answers in the browser: its ``ui.state`` name and who draws it."""

    name: str
    component: str  # the component's registered name, e.g. "token_journey.positional"
    element_id: str


# Components whose data carries a knob's value without its KnobSpec: {component name: knob names}.
# tests/unit/test_bench_tables.py checks each against what the component's Python sends.
DECLARED_KNOBS: dict[str, tuple[str, ...]] = {
    # the Overview journey's sampling knobs: data["knobs"] = {temperature, top_k, top_p}
    "token_journey.journey": ("sampling_temperature", "sampling_top_k", "sampling_top_p"),
}


def knob_names(data: Any) -> list[str]:
    """The ``name`` of every KnobSpec (a dict with ``name``, ``value`` and ``default``) anywhere in a
    component's data, in order, each once.

    Example: knob_names({"knob": {"name": "tok_merge_step", "value": 3, "default": 0}}) -> ["tok_merge_step"]
    """
    found: list[str] = []
    todo = [data]
    while todo:
        item = todo.pop(0)
        if isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, str) and "value" in item and "default" in item and name not in found:
                found.append(name)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def component_knobs(element: Any) -> list[BrowserKnob]:
    """The browser knobs of one ``bidi_component`` element (its JSON data, plain or mixed)."""
    text = element.json if element.WhichOneof("data") == "json" else (
        element.mixed.json if element.WhichOneof("data") == "mixed" else "")
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    names = knob_names(data) + [n for n in DECLARED_KNOBS.get(element.component_name, ())]
    return [BrowserKnob(name, element.component_name, element.id) for name in dict.fromkeys(names)]


@dataclass
class RunResult:
    seconds: float
    ok: bool
    status: str
    exceptions: list[str]
    bytes_in: int
    messages: int
    ignored: bool = False  # the server dropped the request: its fragment no longer exists


# Streamlit ignores, without a word, a rerun request for a fragment it no longer has
# (``AppSession.request_rerun``: "The fragment with id ... does not exist anymore"): a section
# whose outer section reran without drawing it (Tokenization's merge steps after a corpus the
# page refuses). A browser shows nothing happening. Every real run answers at once (the status
# "running"), so a fragment request with no message at all for this long was ignored.
IGNORED_AFTER_S = 20.0
IGNORED = "IGNORED_GONE_FRAGMENT"


class CacheMiss(RuntimeError):
    """The server referred to a message this tab does not hold (a browser shows an error)."""


@dataclass
class _Cached:
    data: bytes  # the message as it came, serialised
    run_count: int  # the cache's run count when the message last came or was referred to
    fragment_id: str  # the fragment that drew it ('' for the page's main run)


@dataclass
class MessageCache:
    """Streamlit's client-side ``ForwardMsg`` cache, as its frontend (1.67) keeps it.

    ``receive`` keeps each ``cacheable`` message (or marks it used) and turns a ``ref_hash``
    message into the message it names; ``run_finished`` ages the entries after each finished run
    and drops those unused for more than ``max_age`` runs (after a fragment run, only that
    fragment's entries age); ``hashes()`` is what the next ``rerun_script`` sends.

    Example:
        msg = cache.receive(data)        # a ForwardMsg, references resolved
        cache.run_finished([])           # after script_finished of a full run
    """

    max_age: int = 2  # the server's global.maxCachedMessageAge, from new_session.config
    run_count: int = 0
    entries: dict[str, _Cached] = field(default_factory=dict)
    hits: int = 0  # references resolved

    def hashes(self) -> list[str]:
        return list(self.entries)

    def receive(self, data: bytes) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "ref_hash":
            entry = self.entries.get(msg.ref_hash)
            if entry is None:
                raise CacheMiss(f"the server referred to message {msg.ref_hash}, which this client does not hold")
            entry.run_count = self.run_count
            self.hits += 1
            resolved = ForwardMsg()
            resolved.ParseFromString(entry.data)
            resolved.metadata.CopyFrom(msg.metadata)
            return resolved
        if msg.metadata.cacheable and msg.hash:
            entry = self.entries.get(msg.hash)
            if entry is None:
                fragment = msg.delta.fragment_id if msg.WhichOneof("type") == "delta" else ""
                self.entries[msg.hash] = _Cached(data, self.run_count, fragment)
            else:
                entry.run_count = self.run_count
        return msg

    def run_finished(self, fragment_ids: list[str]) -> None:
        self.run_count += 1
        for key, entry in list(self.entries.items()):
            if fragment_ids and (not entry.fragment_id or entry.fragment_id not in fragment_ids):
                continue  # a fragment's run ages only that fragment's messages
            if self.run_count - entry.run_count > self.max_age:
                del self.entries[key]


@dataclass
class Session:
    """One simulated browser tab (``use_cache=False``: a client that never sends
    ``cached_message_hashes``, so the server sends every element in full)."""

    url: str
    ws: ClientConnection | None = None
    pages: dict[str, str] = field(default_factory=dict)  # url_pathname ("" = main) -> page hash
    page: str = ""
    widgets: dict[str, Widget] = field(default_factory=dict)
    knobs: dict[str, BrowserKnob] = field(default_factory=dict)  # name -> the browser knob drawn now
    _knob_fragments: dict[str, str] = field(default_factory=dict)  # knob name -> its element's fragment id
    states: dict[str, WidgetState] = field(default_factory=dict)
    closed: bool = False
    cookie: str | None = None  # the load balancer's affinity cookie, from a first GET /
    query_string: str = ""  # the address' query, as a browser sends it with every run (e.g. "class=ABC234")
    ignored_after: float = IGNORED_AFTER_S
    use_cache: bool = True
    cache: MessageCache = field(default_factory=MessageCache)

    async def open(self, timeout: float = 30) -> RunResult:
        host = self.url.split("//", 1)[1].split("/", 1)[0]
        self.ws = await asyncio.wait_for(connect(
            "ws" + self.url.rstrip("/").removeprefix("http") + "/_stcore/stream", subprotocols=["streamlit"], origin=f"http://{host}",
            max_size=None, open_timeout=timeout, ping_interval=None, compression=None,
            additional_headers={"Cookie": self.cookie} if self.cookie else None,
        ), timeout)
        return await self.rerun(timeout=timeout)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        self.closed = True

    # --- one rerun ---------------------------------------------------------------------

    async def rerun(self, fragment_id: str = "", timeout: float = 30) -> RunResult:
        """Send the current client state and wait for ``script_finished``."""
        assert self.ws is not None
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        cs.page_script_hash = self.pages.get(self.page, "")
        cs.page_name = self.page
        if fragment_id:
            cs.fragment_id = fragment_id
        cs.widget_states.widgets.extend(self.states.values())
        if self.use_cache:
            cs.cached_message_hashes.extend(self.cache.hashes())
        start = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        if not fragment_id:
            self.widgets = {}
            self.knobs = {}
        else:  # the fragment draws its widgets again; what it no longer draws is gone in a browser too
            self.widgets = {k: w for k, w in self.widgets.items() if w.fragment_id != fragment_id}
            self.knobs = {k: v for k, v in self.knobs.items() if self._knob_fragments.get(k) != fragment_id}
        exceptions: list[str] = []
        bytes_in = 0
        count = 0
        deadline = start + timeout
        ignored_at = start + self.ignored_after  # see IGNORED_AFTER_S
        started = False
        new_session = False  # the browser ages its cache only after a run that began with one
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError("no script_finished before the timeout")
            if fragment_id and not started:
                try:
                    data = await asyncio.wait_for(self.ws.recv(), min(remaining, max(0.0, ignored_at - time.perf_counter())))
                except (TimeoutError, asyncio.TimeoutError):
                    if time.perf_counter() < deadline:
                        self.widgets = {k: w for k, w in self.widgets.items() if w.fragment_id != fragment_id}
                        self.knobs = {k: v for k, v in self.knobs.items() if self._knob_fragments.get(k) != fragment_id}
                        return RunResult(time.perf_counter() - start, True, IGNORED, [], bytes_in, count, ignored=True)
                    raise
            else:
                data = await asyncio.wait_for(self.ws.recv(), remaining)
            bytes_in += len(data)
            count += 1
            fwd = self.cache.receive(data)
            kind = fwd.WhichOneof("type")
            # The previous run's last "not running" status may arrive after its script_finished.
            started = started or not (kind == "session_status_changed"
                                      and not fwd.session_status_changed.script_is_running)
            if kind == "new_session":
                self._on_new_session(fwd)
                new_session = True
            elif kind == "delta":
                self._on_delta(fwd, exceptions)
            elif kind == "script_finished":
                status = fwd.script_finished
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    continue  # a rerun we triggered ourselves (e.g. st.rerun in a callback) follows
                if new_session:
                    self.cache.run_finished([fragment_id] if fragment_id else [])
                seconds = time.perf_counter() - start
                name = ForwardMsg.ScriptFinishedStatus.Name(status)
                return RunResult(seconds, status in FINISHED_OK and not exceptions, name, exceptions,
                                 bytes_in, count)
            elif kind == "page_not_found":
                exceptions.append("page_not_found")

    def _on_new_session(self, fwd: ForwardMsg) -> None:
        ns = fwd.new_session
        if ns.config.max_cached_message_age:
            self.cache.max_age = ns.config.max_cached_message_age
        for page in ns.app_pages:
            self.pages[page.url_pathname] = page.page_script_hash
        if ns.main_script_hash:
            self.pages.setdefault("", ns.main_script_hash)

    def _on_delta(self, fwd: ForwardMsg, exceptions: list[str]) -> None:
        delta = fwd.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "page_link" and element.page_link.page_script_hash:
            link = element.page_link
            name = link.page.strip("/").removeprefix("pages/").removesuffix(".py")
            self.pages.setdefault("" if name in ("", "app") else name, link.page_script_hash)
            return
        if kind == "bidi_component":
            for knob in component_knobs(element.bidi_component):
                self.knobs[knob.name] = knob
                self._knob_fragments[knob.name] = delta.fragment_id
            return
        if kind == "exception":
            exceptions.append(f"{element.exception.type}: {element.exception.message}"[:300])
            return
        if kind not in WIDGET_KINDS:
            return
        proto = getattr(element, kind)
        if getattr(proto, "disabled", False):
            return
        path = list(fwd.metadata.delta_path)
        widget = Widget(proto.id, kind, proto, delta.fragment_id, bool(path) and path[0] == 1)
        if widget.key:
            # A user key is unique on a page: a widget drawn again under a new id (its fragment
            # moved, or a parameter such as its range changed) replaces the old one, which a
            # browser removes. Sending the stale id with its old fragment id gets no answer.
            self.widgets = {k: w for k, w in self.widgets.items() if w.key != widget.key}
        self.widgets[proto.id] = widget

    # --- acting like a student ---------------------------------------------------------

    async def go_to(self, page: str, timeout: float = 30) -> RunResult:
        """Open another page (what ``st.page_link`` does in the browser)."""
        self.page = page
        self.states = {}
        return await self.rerun(timeout=timeout)

    def latest(self, widget: Widget) -> Widget | None:
        """``widget`` as the server last drew it: same id, or same user key under a new id (its
        range or fragment changed); None when the page no longer shows it."""
        if widget.id in self.widgets:
            return self.widgets[widget.id]
        return next((w for w in self.widgets.values() if widget.key and w.key == widget.key), None)

    async def set_widget(self, widget: Widget, state: WidgetState, timeout: float = 30) -> RunResult:
        if widget.kind == "button":
            sent = {**self.states, widget.id: state}
            keep, self.states = self.states, sent
            try:
                return await self.rerun(widget.fragment_id, timeout)
            finally:
                self.states = keep  # a trigger is true for one run only
        self.states[widget.id] = state
        return await self.rerun(widget.fragment_id, timeout)


# --- a different value, as a student's click sends ---------------------------------------------

# How many random draws ``new_value`` tries before it concludes no different value exists (a
# one-point slider, a one-option select). With two or more values to choose from, all draws
# landing on the current one is at most 2**-64 likely.
_DRAWS = 64


def _state_value(state: WidgetState) -> Any:
    """The value a ``WidgetState`` carries, as a plain Python value (lists for arrays)."""
    kind = state.WhichOneof("value")
    if kind is None:
        return None
    value = getattr(state, kind)
    return list(value.data) if kind.endswith("_array_value") else value


def current_value(session: Session, widget: Widget) -> Any:
    """What ``widget`` shows now, in the form ``new_value`` sends it; None when it shows nothing.

    In order: the value the server set in its latest draw (``set_value``: a callback or the app's
    state wrote it), else the value this client last sent for that widget id (the browser keeps
    it), else the widget's default. Sliders: a list of numbers (select sliders: of options);
    selects and radios: the option; multiselects and button groups: a list of options.
    """
    p = widget.proto
    kind = widget.kind
    server_set = bool(getattr(p, "set_value", False))
    sent = session.states.get(widget.id)
    if kind == "slider":
        options = list(p.options)
        if options:
            if server_set and len(p.raw_value):
                return list(p.raw_value)
            if sent is not None:
                return _state_value(sent)
            return [options[int(i)] for i in p.default if 0 <= int(i) < len(options)]
        if server_set and len(p.value):
            return list(p.value)
        return _state_value(sent) if sent is not None else list(p.default)
    if kind in ("selectbox", "radio"):
        if server_set and p.HasField("raw_value"):
            return p.raw_value
        if sent is not None:
            return _state_value(sent)
        options = list(p.options)
        return options[p.default] if p.HasField("default") and 0 <= p.default < len(options) else None
    if kind == "checkbox":
        if server_set:
            return bool(p.value)
        return bool(_state_value(sent)) if sent is not None else bool(p.default)
    if kind == "number_input":
        if server_set and p.HasField("value"):
            return p.value
        if sent is not None:
            return _state_value(sent)
        return p.default if p.HasField("default") else None
    if kind == "multiselect":
        if server_set:
            return list(p.raw_values)
        if sent is not None:
            return _state_value(sent)
        options = list(p.options)
        return [options[i] for i in p.default if 0 <= i < len(options)]
    if kind == "button_group":
        if server_set:
            return list(p.raw_values)
        if sent is not None:
            return _state_value(sent)
        options = [o.content for o in p.options]
        return [options[i] for i in p.default if 0 <= i < len(options)]
    if kind in ("text_area", "text_input"):
        if server_set:
            return p.value
        return _state_value(sent) if sent is not None else p.default
    return None  # buttons hold no value


def _same(a: Any, b: Any) -> bool:
    """Equal values, numbers compared to a part in 10**9 (a slider's grid point may come back
    from the server as 0.30000000000000004)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not (isinstance(a, bool) or isinstance(b, bool)):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return a == b


def _different(draw: Any, current: Any, same: Any = _same) -> Any:
    """``draw()`` until it gives a value that is not ``current`` (``_DRAWS`` tries; None if none)."""
    for _ in range(_DRAWS):
        value = draw()
        if not same(value, current):
            return value
    return None


def _other_choice(rng: random.Random, options: list[str], current: Any) -> str | None:
    """One of ``options`` that is not ``current``, uniformly; None when there is none."""
    others = [o for o in options if o != current]
    return rng.choice(others) if others else None


def new_value(session: Session, widget: Widget, rng: random.Random, prompts: list[str]) -> WidgetState | None:
    """A valid value for ``widget`` that differs from what it shows now (``current_value``), as a
    student's click sends; None when there is no such value or the bench leaves this kind alone.

    A browser never sends a rerun for a control set to the value it already has, so neither does
    the bench: every interaction it times is a real change.

    Example:
        state = new_value(session, widget, random.Random(0), ["The cat sat on the"])
        if state is not None:
            await session.set_widget(widget, state)
    """
    p = widget.proto
    state = WidgetState(id=widget.id)
    current = current_value(session, widget)
    if widget.kind == "slider":
        options = list(p.options)
        n_values = max(1, len(p.value) or len(p.default))
        if options:
            # a range's two ends may meet, as a browser's may: drawn with replacement
            picks = _different(lambda: sorted((rng.choice(options) for _ in range(n_values)), key=options.index),
                               current)
            if picks is None:
                return None
            state.string_array_value.data.extend(picks)
            return state
        if p.data_type not in (0, 1):  # INT or FLOAT only (no dates)
            return None
        step = p.step or 1
        steps = max(0, int(round((p.max - p.min) / step)))

        def draw() -> list[float]:
            return sorted(min(p.max, p.min + rng.randint(0, steps) * step) for _ in range(n_values))

        picks = _different(draw, [float(v) for v in current] if isinstance(current, list) else current)
        if picks is None:
            return None
        state.double_array_value.data.extend(picks)
        return state
    if widget.kind in ("selectbox", "radio"):
        choice = _other_choice(rng, list(p.options), current)
        if choice is None:
            return None
        state.string_value = choice
        return state
    if widget.kind == "checkbox":
        state.bool_value = not current
        return state
    if widget.kind == "number_input":
        step = p.step or 1
        if p.has_min:
            lo = p.min
            hi = p.max if p.has_max else lo + 100 * step
        else:  # an open end: a hundred steps from the other end (or from 0)
            hi = p.max if p.has_max else 100 * step
            lo = hi - 100 * step
        count = max(0, int(round((hi - lo) / step)))
        value = _different(lambda: lo + rng.randint(0, count) * step, current)
        if value is None:
            return None
        if p.data_type == 0:  # INT
            state.int_value = int(value)
        else:
            state.double_value = float(value)
        return state
    if widget.kind == "multiselect":
        options = list(p.options)
        if not options:
            return None
        most = min(3, len(options), p.max_selections or len(options))
        picks = _different(lambda: rng.sample(options, k=rng.randint(1, most)), current,
                           lambda a, b: set(a) == set(b or []))
        if picks is None:
            return None
        state.string_array_value.data.extend(picks)
        return state
    if widget.kind == "button_group":
        choice = _other_choice(rng, [o.content for o in p.options], (current or [None])[0] if len(current or []) == 1 else None)
        if choice is None:
            return None
        state.string_array_value.data.append(choice)
        return state
    if widget.kind == "button":
        state.trigger_value = True  # a click: always an event, never a value that could be unchanged
        return state
    if widget.kind in ("text_area", "text_input") and widget.key.endswith("prompt"):
        choice = _other_choice(rng, list(prompts), current)
        if choice is None:
            return None
        state.string_value = choice
        return state
    return None  # other free text, uploads, editors: not part of the mix
