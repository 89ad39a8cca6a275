"""Small Playwright helpers shared by the browser tests."""

from __future__ import annotations

from playwright.sync_api import Page, expect

APP_READY_TIMEOUT_MS = 60_000
# How long an action may take to start a run on the server before the page is taken as settled
# (a tab click or a hover starts none). The Streamlit frontend learns of a run only when the
# server's "running" status arrives: ~200 ms after a click on an idle machine, more under load.
RUN_START_GRACE_MS = 1_500

# Counts the runs the page has seen start, from Streamlit's own data-test-script-state attribute
# (initial → running → notRunning; fragment runs included). Installed on the first wait in a page.
_WATCH_RUNS = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  if (!window.__tjRuns) {
    const state = () => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state');
    const first = state();
    // A page still on its first run counts that run; one already idle counts none.
    const runs = {started: first === 'notRunning' ? 0 : 1, seen: 0, waitFrom: 0};
    let last = first;
    new MutationObserver(() => {
      const now = state();
      if (now === 'running' && last !== 'running') runs.started += 1;
      last = now;
    }).observe(document, {subtree: true, childList: true, attributes: true,
                          attributeFilter: ['data-test-script-state']});
    window.__tjRuns = runs;
  }
  window.__tjRuns.waitFrom = performance.now();
  return true;
}
"""

_SETTLED = """
(grace) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const runs = window.__tjRuns;
  if (!app || !runs) return false;
  if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  const waited = performance.now() - runs.waitFrom;
  if (runs.started <= runs.seen && waited < grace) return false;  // the action's run may not have begun
  runs.seen = runs.started;
  return true;
}
"""


def wait_for_app(page: Page) -> None:
    """Wait until Streamlit has finished the run the last action started (or the first run).

    A fixed pause is not enough: under load the server's "running" status can arrive after it,
    and a test would then read the page as it was before the click.
    """
    page.wait_for_selector('[data-testid="stSidebar"]', timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_selector('[data-testid="stMain"]', timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_function(_WATCH_RUNS, timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_function(_SETTLED, arg=RUN_START_GRACE_MS, timeout=APP_READY_TIMEOUT_MS)
    page.wait_for_timeout(300)  # a run may chain into another (st.rerun); let its status arrive
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-script-state')"
        " === 'notRunning' && !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=APP_READY_TIMEOUT_MS,
    )


def assert_no_error(page: Page) -> None:
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    assert "Traceback" not in page.inner_text("body")
    assert "⟦" not in page.inner_text("body"), "a translation key is missing"
