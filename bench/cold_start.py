"""Cold start and first visits, as the first student of a fresh server waits for them.

For each run a new server process is started with the README's run command (``streamlit run
app.py``, one process, loopback; ``--roots NAME=PATH`` runs another copy of the app, e.g. one from
before a change):

- protocol (always): process start -> ``/_stcore/health`` answers -> a fresh session's first
  Overview run is finished (``script_finished``: the page is interactive; both built-in models
  load in the background meanwhile, so health alone is not the measure), then that session
  visits every page once (each page's first visit on this server: script, Streamlit's work and
  transport, as ``bench/classroom.py`` measures it);
- ``--browser``: the same on a second fresh server in headless Chromium (Playwright, the e2e
  tests' browser): process start -> the Overview is drawn and settled (no run in progress, no
  change in the main area for ``--quiet`` ms; the time is that of the last change), then each
  page's first visit by its sidebar link, the same way;
- ``--bytes``: in headless Chromium, what a student downloads: the Overview's first load (an empty
  browser cache), then for every page its visit by the sidebar link and a new prompt on it (typed
  in the sidebar, Ctrl+Enter). Bytes are counted with the DevTools protocol: every HTTP response's
  ``encodedDataLength`` (headers and body as they came over the wire, compressed where the server
  compressed) plus every websocket frame the server sent (its payload), from the click until the
  page has settled.

The targets of [W3-C]: README run command -> Overview drawn in Chromium <= 2.5 s, every page's
first visit <= 1 s.

Rounds alternate the roots. ``--read S``: the student reads each page S seconds (once it has
settled) before clicking the next link; 0 clicks as soon as the page has settled.

Run:  .venv/bin/python bench/cold_start.py [--repeats 2] [--browser] [--read 5] [--bytes] [--roots before=/tmp/before,after=.]
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

COLD_TARGET_S = 2.5
FIRST_VISIT_TARGET_S = 1.0
PROMPTS = ("The capital of Japan is", "法国的首都是")  # a new prompt per page: two, taken in turn

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


def track_requests(page) -> dict[str, float]:
    """Count ``page``'s requests in flight and remember when the last one ended (epoch s): a page's
    lazily loaded JavaScript (Plotly's 4.7 MB module, KaTeX) arrives, is parsed for a second
    without touching the page, and only then draws; ``settle`` waits for it."""
    state = {"in_flight": 0, "last_end": 0.0}

    def started(_request) -> None:
        state["in_flight"] += 1

    def ended(_request) -> None:
        state["in_flight"] = max(0, state["in_flight"] - 1)
        state["last_end"] = time.time()

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)
    page._tj_requests = state  # noqa: SLF001 - read by settle
    return state


def settle(page, quiet_ms: float, timeout_s: float = 60) -> float:
    """Wait until no run is in progress, no request is in flight, and neither the main area nor a
    request has changed or ended for ``quiet_ms``; returns the epoch time (s) of the main area's
    last change. A page whose modules are still arriving or being parsed has not settled: with
    only the main area watched, a Positional encoding visit was once reported at 0.79 s while
    Plotly drew its seven figures at 2.0-2.5 s."""
    requests = getattr(page, "_tj_requests", None)
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        last = page.evaluate("window.__tjc ? window.__tjc.last : 0")
        has_main = page.locator('[data-testid="stMain"] h1, [data-testid="stMain"] h2').count() > 0
        now_ms = time.time() * 1000
        quiet_requests = requests is None or (requests["in_flight"] == 0
                                              and now_ms - requests["last_end"] * 1000 > quiet_ms)
        if has_main and not running and last and now_ms - last > quiet_ms and quiet_requests:
            return last / 1000
        time.sleep(0.03)
    raise TimeoutError("the page did not settle")


def browser_run(root: Path, label: str, quiet_ms: float, read_s: float = 0.0) -> tuple[float, dict[str, float]]:
    """(cold start s, first visits s by page, and a new tab's Overview once all is warm) in
    Chromium on a fresh server; ``read_s``: seconds the student spends on each page once it has
    settled, before clicking the next link."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        from tests.e2e.conftest import _chromium  # the e2e tests' system Chromium

        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900}, locale="en-US")
            page.add_init_script(OBSERVER)
            track_requests(page)
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
                    page.wait_for_timeout(int(quiet_ms + read_s * 1000))
                    clicked = time.time()
                    link.click()
                    page.wait_for_url(f"**/{name}*", timeout=30_000)
                    visits[name] = settle(page, quiet_ms) - clicked
                warm = browser.new_page(viewport={"width": 1400, "height": 900}, locale="en-US")
                warm.add_init_script(OBSERVER)
                track_requests(warm)
                opened = time.time()
                warm.goto(server.url + "/", wait_until="commit")
                visits["(warm server: a new tab's Overview)"] = settle(warm, quiet_ms, timeout_s=60) - opened
                return cold, visits
            finally:
                server.stop()
        finally:
            browser.close()


class ByteCounter:
    """Bytes the browser received: HTTP responses (``encodedDataLength``: headers and body as sent)
    and the server's websocket frames (payload), from the DevTools protocol's Network events."""

    def __init__(self, page) -> None:
        self.http = 0
        self.websocket = 0
        self.requests = 0
        self.runs_finished = 0  # script_finished messages (the server's run for an action is over)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.on("Network.loadingFinished", self._finished)
        cdp.on("Network.webSocketFrameReceived", self._frame)

    def _finished(self, event: dict) -> None:
        self.http += int(event.get("encodedDataLength", 0))
        self.requests += 1

    def _frame(self, event: dict) -> None:
        import base64

        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        response = event.get("response", {})
        data = response.get("payloadData", "")
        if response.get("opcode") != 2:  # text frames: none expected, counted all the same
            self.websocket += len(data.encode())
            return
        raw = base64.b64decode(data)  # a binary frame's payload comes in base64
        self.websocket += len(raw)
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self.runs_finished += 1

    def total(self) -> tuple[int, int]:
        return self.http, self.websocket


def bytes_run(root: Path, label: str, quiet_ms: float) -> list[tuple[str, str, int, int]]:
    """[(page, "visit" | "prompt", HTTP bytes, websocket bytes)] in Chromium on a fresh server: the
    Overview's first load, then each page's visit by its sidebar link and a new prompt there."""
    from playwright.sync_api import sync_playwright

    rows: list[tuple[str, str, int, int]] = []
    with sync_playwright() as p:
        from tests.e2e.conftest import _chromium

        browser = p.chromium.launch(executable_path=_chromium(), headless=True, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        server = start_server("single", 1, {}, root, label)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900}, locale="en-US")
            page.add_init_script(OBSERVER)
            track_requests(page)
            counter = ByteCounter(page)

            def measure(name: str, what: str, act) -> None:
                http0, ws0 = counter.total()
                runs = counter.runs_finished
                act()
                for _ in range(3000):  # the server's run for this action (up to 60 s), then the page
                    if counter.runs_finished > runs:
                        break
                    page.wait_for_timeout(20)
                else:
                    print(f"  ({name} {what}: no run finished)", flush=True)
                settle(page, quiet_ms)
                http1, ws1 = counter.total()
                rows.append((name, what, http1 - http0, ws1 - ws0))
                print(f"  {name:<22} {what:<6} HTTP {(http1 - http0) / 1024:8.1f} KiB  websocket "
                      f"{(ws1 - ws0) / 1024:8.1f} KiB", flush=True)

            def new_prompt(index: int) -> None:
                box = page.locator('[data-testid="stSidebar"] .st-key-w_prompt textarea')
                box.fill(PROMPTS[index % len(PROMPTS)])
                box.press("Control+Enter")

            measure("overview", "visit", lambda: page.goto(server.url + "/", wait_until="commit"))
            measure("overview", "prompt", lambda: new_prompt(0))
            for i, name in enumerate(FIRST_VISIT_PAGES, start=1):
                link = page.locator(f'[data-testid="stSidebar"] a[href="{name}"], '
                                    f'[data-testid="stSidebar"] a[href$="/{name}"]').first
                try:
                    link.wait_for(state="visible", timeout=15_000)
                except Exception:  # Playwright's TimeoutError: a page this app does not have
                    continue

                def visit(link=link, name=name) -> None:
                    link.click()
                    page.wait_for_url(f"**/{name}*", timeout=30_000)

                measure(name, "visit", visit)
                measure(name, "prompt", lambda i=i: new_prompt(i))
        finally:
            server.stop()
            browser.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1, help="fresh servers per root (and per mode)")
    parser.add_argument("--browser", action="store_true", help="also measure in headless Chromium")
    parser.add_argument("--bytes", action="store_true",
                        help="only the bytes a student downloads per page visit and per new prompt (Chromium)")
    parser.add_argument("--quiet", type=float, default=1000,
                        help="ms without a change or a request ending that end a browser measurement")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--read", type=float, default=0.0,
                        help="Chromium: seconds a student reads each page (once settled) before the next click")
    parser.add_argument("--roots", default="", help="NAME=PATH,...: the same for each copy of the app")
    args = parser.parse_args()
    roots = [(name, Path(path).resolve()) for name, path in (r.split("=", 1) for r in args.roots.split(",") if r)] \
        or [("", ROOT)]
    if args.bytes:
        for label, root in roots:
            print(f"# bytes a student downloads ({label or 'app'}): load {load_average()}", flush=True)
            bytes_run(root, label, args.quiet)
        return
    print(f"# cold start bench: load {load_average()}; targets: Overview <= {COLD_TARGET_S:g} s, "
          f"first visits <= {FIRST_VISIT_TARGET_S:g} s", flush=True)
    # Rounds alternate the roots (A B A B ...): a machine's load drifts, and each root gets its share.
    colds: dict[str, list[float]] = {}
    pages: dict[str, dict[str, list[float]]] = {}
    for _ in range(args.repeats):
        for label, root in roots:
            name = label or "app"
            healthy, cold, visits, rss = protocol_run(root, label, args.timeout)
            colds.setdefault(name, []).append(cold)
            for page, seconds in visits.items():
                pages.setdefault(name, {}).setdefault(page, []).append(seconds)
            print(f"{name} protocol: healthy {healthy:.2f} s, Overview interactive {cold:.2f} s; first visits (ms) "
                  + ", ".join(f"{k} {v * 1000:.0f}" for k, v in visits.items() if k != "overview")
                  + f"; RSS {rss:.0f} MB; load {load_average()}", flush=True)
    for name, by_page in pages.items():
        cold_median = statistics.median(colds[name])
        over = [k for k, v in by_page.items() if k != "overview" and statistics.median(v) > FIRST_VISIT_TARGET_S]
        print(f"{name} protocol median: cold start {cold_median:.2f} s "
              f"({'ok' if cold_median <= COLD_TARGET_S else 'OVER'}); slowest first visit "
              + (max(((statistics.median(v), k) for k, v in by_page.items() if k != "overview"), default=(0, "-"))[1])
              + f"; over {FIRST_VISIT_TARGET_S:g} s: {', '.join(over) or 'none'}", flush=True)
    if args.browser:
        for _ in range(args.repeats):
            for label, root in roots:
                name = label or "app"
                cold, visits = browser_run(root, label, args.quiet, args.read)
                over = [k for k, v in visits.items() if v > FIRST_VISIT_TARGET_S and not k.startswith("(")]
                print(f"{name} Chromium: Overview drawn {cold:.2f} s after the process started; first visits (ms) "
                      + ", ".join(f"{k} {v * 1000:.0f}" for k, v in visits.items())
                      + f"; over {FIRST_VISIT_TARGET_S:g} s: {', '.join(over) or 'none'}; load {load_average()}",
                      flush=True)


if __name__ == "__main__":
    main()
