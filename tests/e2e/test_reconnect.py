"""In real Chromium, a real ``streamlit run`` restarted on the same port ([W3-F] #47 item 2).

The page reconnects by itself; the student's first changes after the reconnect reach a new
session that has not drawn those widgets yet (so no ``on_change`` runs for them). They must be
kept, not overwritten by the values the link carried from before the restart — for Streamlit
widgets on the server (the sidebar's seed, Logits' top-n slider inside a fragment) and for a
browser knob (the temperature of the sampling lab). tests/app/test_reconnect_state.py has the
same at the AppTest level (and the crafted and select cases).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import _free_port, serve, streamlit_command
from tests.e2e.helpers import assert_no_error, wait_for_app

LOGITS_LAB = ".st-key-logits_sampling_knobs .sl"
NN_K = '.st-key-embeddings_nn_k input[type="range"]'  # a server slider inside a fragment
NEAREST = ".st-key-embeddings_nn_k"
SEED = ".st-key-w_seed input"
TEMPERATURE = f"{LOGITS_LAB} .knob[data-knob='temperature'] input"


@pytest.fixture()
def port() -> Iterator[int]:
    yield _free_port()


def _query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def _knobs(page: Page) -> dict:
    return page.locator(LOGITS_LAB).evaluate("root => JSON.parse(root.dataset.knobs)")


def _nn_k(page: Page) -> int:
    return int(page.locator(NN_K).input_value())


# Counts the websockets the page has opened (an event handler in the page, so the count is right
# whenever it is read: Playwright's own events arrive only while the test talks to the browser).
_COUNT_OPEN_SOCKETS = """
(() => {
  const Native = window.WebSocket;
  window.__tjSocketsOpened = 0;
  window.WebSocket = class extends Native {
    constructor(...args) { super(...args); this.addEventListener('open', () => { window.__tjSocketsOpened += 1; }); }
  };
})();
"""


def _wait_reconnected(page: Page) -> None:
    """Until the page has opened a websocket to the new server (Streamlit retries by itself; the
    new session runs nothing until the student's first change asks for a run)."""
    page.wait_for_function("() => window.__tjSocketsOpened >= 2", polling=20, timeout=90_000)


def _restart_and_move(page: Page, port: int, path: str, ready: str, before: Callable[[], None],
                      move: Callable[[], None], check: Callable[[], None]) -> None:
    """Open ``path`` (with its query), wait for ``ready``, do ``before``, restart the server on
    the same port, ``move`` as soon as the page has reconnected, then ``check``."""
    page.add_init_script(_COUNT_OPEN_SOCKETS)
    with serve(streamlit_command(port), port, "server-reconnect-1.log") as url:
        page.goto(f"{url}/{path}")
        wait_for_app(page)
        expect(page.locator(ready)).to_be_visible(timeout=60_000)
        before()
    with serve(streamlit_command(port), port, "server-reconnect-2.log"):
        _wait_reconnected(page)
        move()
        wait_for_app(page)
        page.wait_for_timeout(1500)  # a chained run (the link's sync) has come and gone
        assert_no_error(page)
        check()


def test_first_moves_after_a_restart_are_kept(page: Page, port: int) -> None:
    """The seed (a sidebar widget: a full run) and the neighbours slider (inside a fragment) moved right
    after the reconnect keep their new values; the link's values from before do not come back.

    Streamlit 1.67 drops a fragment's rerun request that reaches a session which has not run that
    fragment yet (``AppSession.request_rerun``: "does not exist anymore"), so the slider's move
    alone starts no run on the new server; the browser still holds it and sends it with the next
    full run (here the seed's), where ``ui.state.bind`` must keep it.
    """

    def move() -> None:
        page.locator(NN_K).focus()
        page.keyboard.press("ArrowLeft")  # 12 -> 11 (a fragment's run: dropped by the new server)
        seed = page.locator(SEED)
        seed.fill("8")  # 7 -> 8
        seed.press("Enter")

    def check() -> None:
        expect(page).to_have_url(re.compile(r"seed=8\b"), timeout=90_000)  # the new server's run
        expect(page).to_have_url(re.compile(r"embeddings_nn_k=11\b"), timeout=30_000)
        assert _nn_k(page) == 11 and page.locator(SEED).input_value() == "8"

    def before() -> None:
        expect(page.locator(SEED)).to_have_value("7", timeout=30_000)  # the link's values, once drawn
        expect(page.locator(NN_K)).to_have_value("12", timeout=30_000)

    _restart_and_move(page, port, "embeddings?seed=7&embeddings_nn_k=12", NEAREST, before, move, check)


def test_first_knob_move_after_a_restart_is_kept(page: Page, port: int) -> None:
    """A browser knob moved before the restart (only the link has it) and again right after the
    reconnect keeps the last move through the new server's first full run (the seed's)."""

    def move() -> None:
        knob = page.locator(TEMPERATURE)
        knob.focus()
        page.keyboard.press("ArrowLeft")  # 0.70 -> 0.65 in the browser, no frame
        seed = page.locator(SEED)
        seed.fill("8")
        seed.press("Enter")  # a full run: the component is drawn again with the server's value

    def check() -> None:
        expect(page).to_have_url(re.compile(r"seed=8\b"), timeout=90_000)
        page.wait_for_timeout(1000)
        assert _knobs(page)["temperature"] == 0.65
        assert _query(page).get("sampling_temperature") == "0.65"

    def before() -> None:  # moved in the browser only: the server never saw 0.70, the link has it
        page.locator(TEMPERATURE).focus()
        for _ in range(6):
            page.keyboard.press("ArrowLeft")
        assert _knobs(page)["temperature"] == 0.7 and _query(page).get("sampling_temperature") == "0.7"

    _restart_and_move(page, port, "logits_sampling", LOGITS_LAB, before, move, check)
