"""[W3-F] A replica dies mid-lesson under ``scripts/serve.sh --replicas 2`` (real processes,
loopback, two Chromium students on different replicas):

* the service stays up; student A, whose replica died, is back within 10 s on the other replica
  with the same page, prompt and temperature;
* student B, on the healthy replica, notices nothing (the websocket stays open, a server action
  is answered);
* the dead replica is restarted by the launcher and answers its health check again;
* the same with SIGKILL and with SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import ROOT, _free_port, serve
from tests.e2e.helpers import assert_no_error, wait_for_app

pytestmark = pytest.mark.e2e

PROMPT = "The capital of Japan is"
LAB = ".st-key-logits_sampling_knobs .sl"
RECOVERY_S = 10.0


def _free_pair() -> int:
    """A base port whose next port is free too (the two replicas' ports)."""
    for _ in range(50):
        base = _free_port()
        try:
            import socket

            with socket.socket() as s:
                s.bind(("127.0.0.1", base + 1))
            return base
        except OSError:
            continue
    raise RuntimeError("no two free consecutive ports")


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def _wait(predicate, timeout: float, what: str, page: Page | None = None) -> float:
    """Poll ``predicate``; with ``page``, through Playwright's own wait (its events, such as a
    websocket opening, are only delivered while Playwright is called)."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        if page is not None:
            page.wait_for_timeout(100)
        else:
            time.sleep(0.1)
    raise AssertionError(f"not within {timeout:.0f} s: {what}")


@pytest.fixture(scope="module")
def replicated() -> Iterator[tuple[str, list[int]]]:
    port, base = _free_port(), _free_pair()
    env = {"TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "PYTHON": os.environ.get("PYTHON", str(ROOT / ".venv" / "bin" / "python"))}
    command = ["bash", str(ROOT / "scripts" / "serve.sh"), "--replicas", "2", "--address", "127.0.0.1",
               "--port", str(port), "--base-port", str(base)]
    with serve(command, port, "server_failover.log", env) as url:
        ports = [base, base + 1]
        for replica in ports:
            _wait(lambda replica=replica: _healthy(replica), 120, f"replica on {replica} healthy")
        yield url, ports


def _replica_pid(port: int) -> int:
    out = subprocess.run(["pgrep", "-f", f"streamlit run app.py.* --server.port {port}( |$)"],
                         capture_output=True, text=True).stdout.split()
    assert len(out) == 1, out
    return int(out[0])


def _replica_of(context: BrowserContext, ports: list[int]) -> int:
    """The port of the replica HAProxy's cookie sends this browser to (r0, r1 ...)."""
    [cookie] = [c for c in context.cookies() if c["name"] == "TJ_REPLICA"]
    return ports[int(cookie["value"].removeprefix("r"))]


def _temperature(page: Page) -> str:
    return page.locator(f"{LAB} .knob[data-knob='temperature'] input").input_value()


def _watch_sockets(page: Page) -> dict[str, int]:
    seen = {"opened": 0, "closed": 0}

    def opened(ws) -> None:
        seen["opened"] += 1
        ws.on("close", lambda _ws: seen.__setitem__("closed", seen["closed"] + 1))

    page.on("websocket", opened)
    return seen


def _student(browser: Browser, url: str) -> tuple[BrowserContext, Page, dict[str, int]]:
    context = browser.new_context()
    page = context.new_page()
    sockets = _watch_sockets(page)
    page.goto(f"{url}/logits_sampling?prompt={PROMPT.replace(' ', '+')}")
    wait_for_app(page)
    expect(page.locator(LAB)).to_be_visible(timeout=60_000)
    return context, page, sockets


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_a_dying_replica_is_noticed_by_nobody(browser: Browser, replicated: tuple[str, list[int]],
                                              how: signal.Signals) -> None:
    url, ports = replicated
    for replica in ports:  # the previous case's victim is back before this one starts
        _wait(lambda replica=replica: _healthy(replica), 120, f"replica on {replica} healthy")
    a_context, a, a_sockets = _student(browser, url)
    a_port = _replica_of(a_context, ports)
    # A moves the temperature (in the browser; the address bar keeps it)
    a.locator(f"{LAB} .knob[data-knob='temperature'] input").focus()
    for _ in range(3):
        a.keyboard.press("ArrowLeft")
    chosen = _temperature(a)
    assert chosen not in ("", "1", "1.0", "1.00")
    # B joins until HAProxy puts B on the other replica (least connections: at once)
    for _ in range(4):
        b_context, b, b_sockets = _student(browser, url)
        if _replica_of(b_context, ports) != a_port:
            break
        b_context.close()
    else:
        pytest.fail("HAProxy put both students on one replica four times")
    b_before = b.locator('[data-testid="stMain"] h1').first.inner_text()

    victim = _replica_pid(a_port)
    killed = time.monotonic()
    os.kill(victim, how)

    # A: reconnected through HAProxy to the healthy replica, same view, within RECOVERY_S
    _wait(lambda: a_sockets["opened"] >= 2, RECOVERY_S, "A's page opened a new websocket", page=a)
    wait_for_app(a)
    expect(a.locator(LAB)).to_be_visible(timeout=max(1_000, int((RECOVERY_S - (time.monotonic() - killed)) * 1000)))
    recovered = time.monotonic() - killed
    assert recovered <= RECOVERY_S, f"A recovered after {recovered:.1f} s"
    assert urlparse(a.url).path.endswith("/logits_sampling")
    assert a.locator('[data-testid="stSidebar"] textarea').first.input_value() == PROMPT
    assert _temperature(a) == chosen
    assert parse_qs(urlparse(a.url).query).get("prompt") == [PROMPT]
    assert _replica_of(a_context, ports) != a_port
    assert_no_error(a)

    # B: the same websocket all along, and the server still answers B
    assert b_sockets == {"opened": 1, "closed": 0}, b_sockets
    assert b.locator('[data-testid="stMain"] h1').first.inner_text() == b_before
    b.locator('[data-testid="stSidebar"] a[href$="generation"], [data-testid="stSidebar"] a[href="generation"]').first.click()
    wait_for_app(b)
    expect(b.locator(".st-key-generation_knobs .sl")).to_be_visible(timeout=30_000)
    assert b_sockets == {"opened": 1, "closed": 0}, b_sockets
    assert_no_error(b)

    # the launcher brought the dead replica back
    _wait(lambda: _healthy(a_port) and _replica_pid(a_port) != victim, 120, "the dead replica restarted")
    print(f"\n{how.name}: A back on the other replica after {recovered:.1f} s; B saw nothing; replica restarted")
    a_context.close()
    b_context.close()
