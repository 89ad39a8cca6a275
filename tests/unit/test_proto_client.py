"""The bench's simulated student (``bench.proto_client.new_value``): every value it sends is valid
for the widget and differs from what the widget shows, as a browser's click does; where no
different value exists it sends nothing.

Widgets are drawn at random (kind, options, range, step, which of the server's value, the
client's last value or the default the widget shows now), for many seeds."""

from __future__ import annotations

import random

import pytest
from streamlit.proto.ButtonGroup_pb2 import ButtonGroup
from streamlit.proto.Checkbox_pb2 import Checkbox
from streamlit.proto.MultiSelect_pb2 import MultiSelect
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Radio_pb2 import Radio
from streamlit.proto.Selectbox_pb2 import Selectbox
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.TextArea_pb2 import TextArea
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.forward_msg_cache import create_reference_msg, populate_hash_if_needed

from bench.proto_client import (CacheMiss, MessageCache, Session, Widget, _Cached, _same, _state_value, current_value,
                                new_value)

PROMPTS = ["The cat sat on the", "法国的首都是", "一 二 三 四 五"]
KINDS = ("slider", "select_slider", "selectbox", "radio", "checkbox", "number_input", "multiselect",
         "button_group", "text_area")


def _options(rng: random.Random) -> list[str]:
    return [f"option {i}" for i in range(rng.randint(1, 5))]


def _grid(rng: random.Random, whole: bool = False) -> tuple[float, float, float]:
    """(min, max, step) of a numeric range: sometimes a single point, sometimes a float step
    (``whole``: whole numbers only, as an int widget has)."""
    step = rng.choice([1.0, 2.0] if whole else [1.0, 2.0, 0.1, 0.25])
    lo = rng.choice([0.0, 1.0, -3.0] if whole else [0.0, 1.0, -3.0, 0.5])
    return lo, lo + step * rng.randint(0, 6), step


def _on_grid(rng: random.Random, lo: float, hi: float, step: float) -> float:
    return min(hi, lo + rng.randint(0, int(round((hi - lo) / step))) * step)


def random_widget(rng: random.Random, kind: str) -> tuple[Session, Widget]:
    """A widget of ``kind`` with random parameters, showing a random valid value that came from the
    server (``set_value``), from this client's last message, or from the default."""
    session = Session("http://127.0.0.1:1")
    source = rng.choice(["server", "sent", "default"])
    sent = WidgetState(id=f"$$ID-{kind}-0-k_{kind}")
    if kind in ("slider", "select_slider"):
        proto = Slider(id=sent.id, data_type=rng.choice([0, 1]))
        n_values = rng.choice([1, 2])
        if kind == "select_slider":
            options = _options(rng)
            proto.options.extend(options)
            indices = sorted(rng.randrange(len(options)) for _ in range(n_values))
            proto.default.extend(indices)
            proto.min, proto.max, proto.step = 0, len(options) - 1, 1
            shown = [options[i] for i in sorted(rng.randrange(len(options)) for _ in range(n_values))]
            if source == "server":
                proto.raw_value.extend(shown)
            sent.string_array_value.data.extend(shown)
        else:
            proto.min, proto.max, proto.step = _grid(rng, whole=proto.data_type == 0)
            proto.default.extend(sorted(_on_grid(rng, proto.min, proto.max, proto.step) for _ in range(n_values)))
            shown = sorted(_on_grid(rng, proto.min, proto.max, proto.step) for _ in range(n_values))
            if source == "server":
                proto.value.extend(shown)
            sent.double_array_value.data.extend(shown)
        widget = Widget(sent.id, "slider", proto, "", False)
    elif kind in ("selectbox", "radio"):
        options = _options(rng)
        proto = (Selectbox if kind == "selectbox" else Radio)(id=sent.id, options=options)
        if rng.random() < 0.8:  # else index=None: nothing chosen
            proto.default = rng.randrange(len(options))
        shown = rng.choice(options)
        if source == "server":
            proto.raw_value = shown
        sent.string_value = shown
        widget = Widget(sent.id, kind, proto, "", False)
    elif kind == "checkbox":
        proto = Checkbox(id=sent.id, default=rng.random() < 0.5, value=rng.random() < 0.5)
        sent.bool_value = rng.random() < 0.5
        widget = Widget(sent.id, kind, proto, "", False)
    elif kind == "number_input":
        data_type = rng.choice([0, 1])  # INT, FLOAT
        lo, hi, step = _grid(rng, whole=data_type == 0)
        proto = NumberInput(id=sent.id, data_type=data_type, step=step, min=lo, max=hi,
                            has_min=rng.random() < 0.8, has_max=rng.random() < 0.8)
        if not proto.has_min:
            hi = hi if proto.has_max else 100 * step
            lo = hi - 100 * step
        elif not proto.has_max:
            hi = lo + 100 * step
        proto.default = _on_grid(rng, lo, hi, step)
        shown = _on_grid(rng, lo, hi, step)
        if source == "server":
            proto.value = shown
        sent.double_value = shown
        widget = Widget(sent.id, kind, proto, "", False)
    elif kind == "multiselect":
        options = _options(rng)
        proto = MultiSelect(id=sent.id, options=options)
        proto.default.extend(rng.sample(range(len(options)), k=rng.randint(0, len(options))))
        shown = rng.sample(options, k=rng.randint(0, len(options)))
        if source == "server":
            proto.raw_values.extend(shown)
        sent.string_array_value.data.extend(shown)
        widget = Widget(sent.id, kind, proto, "", False)
    elif kind == "button_group":
        options = _options(rng)
        proto = ButtonGroup(id=sent.id, options=[ButtonGroup.Option(content=o) for o in options])
        proto.default.extend(rng.sample(range(len(options)), k=rng.randint(0, 1)))
        shown = rng.sample(options, k=rng.randint(0, 1))
        if source == "server":
            proto.raw_values.extend(shown)
        sent.string_array_value.data.extend(shown)
        widget = Widget(sent.id, kind, proto, "", False)
    else:  # the sidebar prompt
        sent.id = "$$ID-text-0-prompt"
        proto = TextArea(id=sent.id, default=rng.choice(PROMPTS), value=rng.choice(PROMPTS))
        sent.string_value = rng.choice(PROMPTS)
        widget = Widget(sent.id, kind, proto, "", False)
    if source == "server":
        proto.set_value = True
    if source == "sent":
        session.states[widget.id] = sent
    return session, widget


def expected_current(session: Session, widget: Widget) -> object:
    """What the widget shows, worked out independently of ``current_value``'s code paths."""
    p = widget.proto
    if p.set_value:
        if widget.kind == "slider":
            return list(p.raw_value) if len(p.options) else list(p.value)
        if widget.kind in ("selectbox", "radio"):
            return p.raw_value
        if widget.kind in ("multiselect", "button_group"):
            return list(p.raw_values)
        return p.value
    if widget.id in session.states:
        return _state_value(session.states[widget.id])
    if widget.kind == "slider":
        return [p.options[int(i)] for i in p.default] if len(p.options) else list(p.default)
    if widget.kind in ("selectbox", "radio"):
        return p.options[p.default] if p.HasField("default") else None
    if widget.kind == "multiselect":
        return [p.options[i] for i in p.default]
    if widget.kind == "button_group":
        return [p.options[i].content for i in p.default]
    return p.default


def assert_valid(widget: Widget, state: WidgetState) -> object:
    """The value ``state`` carries, checked against the widget's options or range."""
    p = widget.proto
    assert state.id == widget.id
    value = _state_value(state)
    if widget.kind == "slider":
        n_values = len(p.value) or len(p.default)
        assert len(value) == n_values and value == sorted(value, key=(list(p.options).index if len(p.options) else None))
        if len(p.options):
            assert set(value) <= set(p.options)
        else:
            for v in value:
                assert p.min - 1e-9 <= v <= p.max + 1e-9
                steps = (v - p.min) / p.step
                assert abs(steps - round(steps)) < 1e-6
    elif widget.kind in ("selectbox", "radio"):
        assert value in p.options
    elif widget.kind == "checkbox":
        assert isinstance(value, bool)
    elif widget.kind == "number_input":
        if p.has_min:
            assert value >= p.min - 1e-9
        if p.has_max:
            assert value <= p.max + 1e-9
        assert state.WhichOneof("value") == ("int_value" if p.data_type == 0 else "double_value")
    elif widget.kind == "multiselect":
        assert value and set(value) <= set(p.options) and len(set(value)) == len(value)
    elif widget.kind == "button_group":
        assert len(value) == 1 and value[0] in [o.content for o in p.options]
    else:
        assert value in PROMPTS
    return value


def no_different_value_exists(widget: Widget, current: object) -> bool:
    p = widget.proto
    if widget.kind == "slider":
        if len(p.options):
            return len(p.options) == 1
        return p.max == p.min
    if widget.kind in ("selectbox", "radio"):
        return list(p.options) == [current]
    if widget.kind == "button_group":
        return [o.content for o in p.options] == current
    if widget.kind == "multiselect":
        return list(p.options) == current
    if widget.kind == "number_input":
        return p.has_min and p.has_max and p.min == p.max
    return False


@pytest.mark.parametrize("kind", KINDS)
def test_every_new_value_is_valid_and_differs_from_what_the_widget_shows(kind: str) -> None:
    sent_nothing = sent_something = 0
    for seed in range(400):
        rng = random.Random(seed)
        session, widget = random_widget(rng, kind)
        current = current_value(session, widget)
        assert _same(current, expected_current(session, widget)), (seed, current)
        state = new_value(session, widget, random.Random(seed + 10_000), PROMPTS)
        if state is None:
            assert no_different_value_exists(widget, current), (seed, widget.proto)
            sent_nothing += 1
            continue
        value = assert_valid(widget, state)
        if kind == "multiselect":
            assert set(value) != set(current or []), seed
        else:
            assert not _same(value, current), (seed, value, current)
        sent_something += 1
    assert sent_something > 300  # the check above ran on real values, not only on refusals
    assert sent_nothing < 100


def test_the_value_sent_is_what_the_widget_shows_next() -> None:
    """A student moving one 2-option select twice sends each option once: the second click does
    not send the value the first one set (a no-change rerun a browser never sends)."""
    session = Session("http://127.0.0.1:1")
    widget = Widget("$$ID-a-0-pick", "selectbox", Selectbox(id="$$ID-a-0-pick", options=["a", "b"], default=0), "", False)
    for seed in range(50):
        first = new_value(session, widget, random.Random(seed), PROMPTS)
        assert first is not None and first.string_value == "b"
        session.states[widget.id] = first  # what ``Session.set_widget`` keeps
        second = new_value(session, widget, random.Random(seed), PROMPTS)
        assert second is not None and second.string_value == "a"
        session.states.clear()


def test_a_value_the_server_set_wins_over_the_one_this_client_sent() -> None:
    session = Session("http://127.0.0.1:1")
    proto = Checkbox(id="$$ID-c-0-show", default=False, value=True, set_value=True)
    widget = Widget(proto.id, "checkbox", proto, "", False)
    session.states[widget.id] = WidgetState(id=widget.id, bool_value=False)
    assert current_value(session, widget) is True
    assert new_value(session, widget, random.Random(0), PROMPTS).bool_value is False


def test_a_one_point_slider_and_a_one_option_select_send_nothing() -> None:
    session = Session("http://127.0.0.1:1")
    slider = Slider(id="$$ID-s-0-layer", min=0, max=0, step=1, default=[0], data_type=0)
    select = Selectbox(id="$$ID-b-0-model", options=["only"], default=0)
    assert new_value(session, Widget(slider.id, "slider", slider, "", False), random.Random(0), PROMPTS) is None
    assert new_value(session, Widget(select.id, "selectbox", select, "", False), random.Random(0), PROMPTS) is None


# --- Streamlit's message cache, as a browser keeps it ----------------------------------------------


def _element(text: str, fragment_id: str = "", cacheable: bool = True) -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.new_element.markdown.body = text
    if fragment_id:
        msg.delta.fragment_id = fragment_id
    populate_hash_if_needed(msg)
    msg.metadata.cacheable = cacheable
    msg.metadata.delta_path.extend([0, 1])
    return msg


def _reference(msg: ForwardMsg, path: list[int]) -> bytes:
    ref = create_reference_msg(msg)
    ref.metadata.ClearField("delta_path")
    ref.metadata.delta_path.extend(path)
    return ref.SerializeToString()


def test_the_cache_keeps_large_elements_and_resolves_the_servers_references() -> None:
    cache = MessageCache(max_age=2)
    big, small = _element("x" * 20_000), _element("small", cacheable=False)
    assert cache.receive(big.SerializeToString()).delta.new_element.markdown.body == "x" * 20_000
    cache.receive(small.SerializeToString())
    assert cache.hashes() == [big.hash]  # only what the server marked cacheable
    resolved = cache.receive(_reference(big, [0, 7]))
    assert resolved.delta.new_element.markdown.body == "x" * 20_000
    assert list(resolved.metadata.delta_path) == [0, 7]  # placed where the reference says
    assert cache.hits == 1
    with pytest.raises(CacheMiss):
        cache.receive(_reference(small, [0, 2]))


def test_cached_messages_expire_after_max_age_runs_without_use_and_a_fragment_ages_only_its_own() -> None:
    cache = MessageCache(max_age=2)
    page, part = _element("p" * 20_000), _element("f" * 20_000, fragment_id="frag")
    cache.receive(page.SerializeToString())
    cache.receive(part.SerializeToString())
    cache.run_finished(["frag"])
    cache.run_finished(["frag"])
    assert set(cache.hashes()) == {page.hash, part.hash}  # age 2: still kept
    cache.run_finished(["frag"])
    assert cache.hashes() == [page.hash]  # the fragment's element expired; a fragment run ages only its own
    cache.receive(_reference(page, [0, 1]))  # the page's element used again: young again
    cache.run_finished([])
    cache.run_finished([])
    assert cache.hashes() == [page.hash]
    cache.run_finished([])
    assert cache.hashes() == []


def test_a_session_sends_its_cached_hashes_unless_told_not_to() -> None:
    from streamlit.proto.BackMsg_pb2 import BackMsg

    sent: list[bytes] = []

    class Socket:
        async def send(self, data: bytes) -> None:
            sent.append(data)

        async def recv(self) -> bytes:
            done = ForwardMsg()
            done.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
            return done.SerializeToString()

    import asyncio

    for use_cache, expected in ((True, ["h1", "h2"]), (False, [])):
        session = Session("http://127.0.0.1:1", use_cache=use_cache)
        session.cache.entries = {h: _Cached(b"", 0, "") for h in ("h1", "h2")}
        session.ws = Socket()  # type: ignore[assignment]
        asyncio.run(session.rerun(timeout=5))
        msg = BackMsg()
        msg.ParseFromString(sent[-1])
        assert list(msg.rerun_script.cached_message_hashes) == expected


def test_a_real_server_sends_references_for_what_the_client_holds_and_it_resolves_them() -> None:
    """``streamlit run app.py``: the second visit of a page sends its large elements as references
    to the client's cache (fewer bytes, the same widgets); a client without a cache gets them again."""
    import asyncio
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_JOURNEY_")}
    env["TOKEN_JOURNEY_DEVICE"] = "cpu"
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                             "--server.port", str(port), "--server.headless", "true"],
                            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    async def two_visits(use_cache: bool) -> tuple[int, int, int, int, int]:
        session = Session(url, use_cache=use_cache)
        await session.open(timeout=120)
        first = await session.go_to("embeddings", 120)
        widgets = sorted(w.key for w in session.widgets.values())
        second = await session.go_to("embeddings", 120)
        assert first.ok and second.ok, (first, second)
        assert sorted(w.key for w in session.widgets.values()) == widgets  # nothing lost in the references
        await session.close()
        return first.bytes_in, second.bytes_in, session.cache.hits, len(widgets), len(session.cache.hashes())

    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "the server did not start"
                time.sleep(0.3)
        first, second, hits, widgets, held = asyncio.run(two_visits(True))
        assert hits > 0 and held > 0 and widgets > 0
        assert second < first / 2, (first, second)  # the large elements came as short references
        plain_first, plain_second, plain_hits, _, _ = asyncio.run(two_visits(False))
        assert plain_hits == 0 and plain_second > plain_first / 2
    finally:
        proc.terminate()
        proc.wait(30)
