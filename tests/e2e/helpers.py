"""Small Playwright helpers shared by the browser tests."""

from __future__ import annotations

from playwright.sync_api import Page, expect

APP_READY_TIMEOUT_MS = 60_000


def wait_for_app(page: Page) -> None:
    """Wait until Streamlit has finished running the script (no 'running' status widget)."""
    page.wait_for_selector('[data-testid="stSidebar"]', timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stMain"]', timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=APP_READY_TIMEOUT_MS,
    )
    page.wait_for_timeout(300)


def assert_no_error(page: Page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    assert "Traceback" not in page.inner_text("body")
    assert "⟦" not in page.inner_text("body"), "a translation key is missing"
