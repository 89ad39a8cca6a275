"""Cold start and first visits, as the first student of a fresh server waits for them.

For each run a new server process is started (``scripts/run_app.py``, one process, loopback;
``--roots NAME=PATH`` runs another copy of the app, e.g. one from before a change):

- protocol (always): process start -> ``/_stcore/health`` answers -> a fresh session's first
  Overview run is finished (``script_finished``: the page is interactive; both built-in models
  load in the background meanwhile, so health alone is not the measure), then that session
  visits every page once (each page's first visit on this server: script, Streamlit's work and
  transport, as ``bench/classroom.py`` measures it);
- ``--browser``: the same on a second fresh server in headless Chromium (Playwright, the e2e
  tests' browser): process start -> the Overview is drawn and settled (no run in progress, no
  change in the main area for ``--quiet`` ms; the time is that of the last change), then each
  page's first visit by its sidebar link, the same way.

The targets of [W2-F]: cold start to the Overview interactive <= 3 s, every first visit <= 1.5 s.

Run:  .venv/bin/python bench/cold_start.py [--repeats 2] [--browser] [--roots before=/tmp/before,after=.]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import FIRST_VISIT_PAGES, first_visits, load_average, rss_mb, start_server  # noqa: E402

COLD_TARGET_S = 3.0
FIRST_VISIT_TARGET_S = 1.5

# Recorded in the page: the time (ms since the epoch) of the last change inside the main area.
OBSERVER = """
(() => {
  const tj = window.__tjc = {last: Date.now()};
  const watch = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) { setTimeout(watch, 20); return; }
    new MutationObserver(() => { tj.last = Date.now(); })
      .observe(main, {subtree: true, childList: true, attributes: true, characterData: true});
  };
  watch();
})();
"""


def protocol_run(root: Path, label: str, timeout: float) -> tuple[float, float, dict[str, float], float]:
    """(healthy s, cold start s, first visits s by page, RSS MB after them) on a fresh server."""
    server = start_server("single", 1, {}, root, label)
    try:
        visits = asyncio.run(first_visits(server.url, timeout))
        return server.started_s, server.started_s + visits["overview"], visits, rss_mb(server.pids()[0])
    finally:
        server.stop()


def settle(page, quiet_ms: float, timeout_s: float = 60) -> float:
    """Wait until no run is in progress and the main area has not changed for ``quiet_ms``;
    returns the epoch time (s) of its last change."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        last = page.evaluate("window.__tjc ? window.__tjc.last : 0")
        has_main = page.locator('[data-testid="stMain"] h1, [data-testid="stMain"] h2').count() > 0
        if has_main and not running and last and time.time() * 1000 - last > quiet_ms:
            return last / 1000
        time.sleep(0.03)
    raise TimeoutError("the page did not settle")


def browser_run(root: Path, label: str, quiet_ms: float) -> tuple[float, dict[str, float]]:
    """(cold start s, first visits s by page, and a new tab's Overview once all is warm) in
    Chromium on a fresh server."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        from tests.e2e.conftest import _chromium  # the e2e tests' system Chromium

        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900}, locale="en-US")
            page.add_init_script(OBSERVER)
            wall0 = time.time()
            server = start_server("single", 1, {}, root, label)  # returns once /_stcore/health answers
            try:
                page.goto(server.url + "/", wait_until="commit")
                cold = settle(page, quiet_ms, timeout_s=90) - wall0
                visits: dict[str, float] = {}
                for name in FIRST_VISIT_PAGES:
                    link = page.locator(f'[data-testid="stSidebar"] a[href="{name}"], '
                                        f'[data-testid="stSidebar"] a[href$="/{name}"]').first
                    try:  # the sidebar is drawn again by every run: wait for the link
                        link.wait_for(state="visible", timeout=15_000)
                    except Exception:  # Playwright's TimeoutError: a page this app does not have
                        print(f"  (no sidebar link to {name})", flush=True)
                        continue
                    page.wait_for_timeout(int(quiet_ms))
                    clicked = time.time()
                    link.click()
                    page.wait_for_url(f"**/{name}*", timeout=30_000)
                    visits[name] = settle(page, quiet_ms) - clicked
                warm = browser.new_page(viewport={"width": 1400, "height": 900}, locale="en-US")
                warm.add_init_script(OBSERVER)
                opened = time.time()
                warm.goto(server.url + "/", wait_until="commit")
                visits["(warm server: a new tab's Overview)"] = settle(warm, quiet_ms, timeout_s=60) - opened
                return cold, visits
            finally:
                server.stop()
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1, help="fresh servers per root (and per mode)")
    parser.add_argument("--browser", action="store_true", help="also measure in headless Chromium")
    parser.add_argument("--quiet", type=float, default=400, help="ms without change that end a browser measurement")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--roots", default="", help="NAME=PATH,...: the same for each copy of the app")
    args = parser.parse_args()
    roots = [(name, Path(path).resolve()) for name, path in (r.split("=", 1) for r in args.roots.split(",") if r)] \
        or [("", ROOT)]
    print(f"# cold start bench: load {load_average()}; targets: Overview <= {COLD_TARGET_S:g} s, "
          f"first visits <= {FIRST_VISIT_TARGET_S:g} s", flush=True)
    for label, root in roots:
        name = label or "app"
        colds, pages = [], {}
        for _ in range(args.repeats):
            healthy, cold, visits, rss = protocol_run(root, label, args.timeout)
            colds.append(cold)
            for page, seconds in visits.items():
                pages.setdefault(page, []).append(seconds)
            print(f"{name} protocol: healthy {healthy:.2f} s, Overview interactive {cold:.2f} s; first visits (ms) "
                  + ", ".join(f"{k} {v * 1000:.0f}" for k, v in visits.items() if k != "overview")
                  + f"; RSS {rss:.0f} MB; load {load_average()}", flush=True)
        over = [k for k, v in pages.items() if k != "overview" and statistics.median(v) > FIRST_VISIT_TARGET_S]
        print(f"{name} protocol median: cold start {statistics.median(colds):.2f} s "
              f"({'ok' if statistics.median(colds) <= COLD_TARGET_S else 'OVER'}); slowest first visit "
              + (max(((statistics.median(v), k) for k, v in pages.items() if k != "overview"), default=(0, "-"))[1])
              + f"; over {FIRST_VISIT_TARGET_S:g} s: {', '.join(over) or 'none'}", flush=True)
        if args.browser:
            for _ in range(args.repeats):
                cold, visits = browser_run(root, label, args.quiet)
                over = [k for k, v in visits.items() if v > FIRST_VISIT_TARGET_S and not k.startswith("(")]
                print(f"{name} Chromium: Overview drawn {cold:.2f} s after the process started; first visits (ms) "
                      + ", ".join(f"{k} {v * 1000:.0f}" for k, v in visits.items())
                      + f"; over {FIRST_VISIT_TARGET_S:g} s: {', '.join(over) or 'none'}; load {load_average()}",
                      flush=True)


if __name__ == "__main__":
    main()
