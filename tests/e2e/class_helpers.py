"""Helpers shared by the class-mode browser tests (tests/e2e/test_class_mode*.py)."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import wait_for_app

FOLLOW_BOUND_MS = 10_000  # generous: the design's figure (1.5 s poll + one rerun) is measured in bench/


def open_page(browser: Browser, url: str) -> Page:
    """A new browser context (its own cookies: a new student) on ``url``, first run done."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(url)
    wait_for_app(page)
    return page


def ms_until_page(page: Page, path: str) -> float:
    """Milliseconds until the page's address shows ``path``."""
    started = time.monotonic()
    expect(page).to_have_url(re.compile(rf"/{path}(\?|$)"), timeout=FOLLOW_BOUND_MS)
    return (time.monotonic() - started) * 1000


# Records, in the page, the wall-clock time (Date.now(): one clock for every page of the browser)
# at which its address first shows a path; read back with arrival_ms.
_WATCH_PATH = """
(path) => {
  window.__tjArrived = null;
  const check = () => {
    if (window.__tjArrived === null && location.pathname.endsWith('/' + path)) window.__tjArrived = Date.now();
  };
  clearInterval(window.__tjWatch);
  window.__tjWatch = setInterval(check, 10);
  check();
}
"""


def watch_arrival(page: Page, path: str) -> None:
    page.evaluate(_WATCH_PATH, path)


def arrival_ms(page: Page, timeout_ms: int = FOLLOW_BOUND_MS) -> float:
    """The Date.now() at which the watched path showed (waits for it)."""
    page.wait_for_function("() => window.__tjArrived !== null", timeout=timeout_ms)
    return float(page.evaluate("() => window.__tjArrived"))
