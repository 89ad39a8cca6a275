"""Bytes a student's browser downloads on a first visit to a page (empty cache), on the wire.

A counting TCP relay sits between headless Chromium (the e2e tests' browser) and the server, so
what is counted is what travels: HTTP bodies as sent (gzipped or not), headers, and the
websocket's frames (compressed or not). Each page is opened in a fresh browser context (no cache,
no session), and counted until the script has finished, every chart has drawn and nothing has
arrived for ``--quiet`` ms.

Start a server first, then point this at it, e.g.

    .venv/bin/python -m streamlit run app.py --server.port 8501 --server.headless true &
    .venv/bin/python bench/first_visit_bytes.py --url http://127.0.0.1:8501
    bash scripts/serve.sh --replicas 1 --port 8502 &          # behind HAProxy's gzip
    .venv/bin/python bench/first_visit_bytes.py --url http://127.0.0.1:8502

Run:  .venv/bin/python bench/first_visit_bytes.py --url URL [--pages overview,multi_head_attention]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_BYTES = 2_000_000  # [W3-E] item 7: a first visit transfers at most 2 MB


class CountingRelay:
    """A loopback TCP relay to ``host:port`` that counts the bytes each way (thread-safe reads)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.down = 0  # server -> browser
        self.up = 0  # browser -> server
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.listen_port = 0

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, downstream: bool) -> None:
        try:
            while data := await reader.read(65536):
                if downstream:
                    self.down += len(data)
                else:
                    self.up += len(data)
                writer.write(data)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer, False), self._pipe(up_reader, writer, True))

    def start(self) -> None:
        def run() -> None:
            asyncio.set_event_loop(self._loop)
            server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
            self.listen_port = server.sockets[0].getsockname()[1]
            self._ready.set()
            self._loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        self._ready.wait(10)

    def reset(self) -> None:
        self.down = self.up = 0


SETTLED = """
() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (!document.querySelector('[data-testid="stMain"] h1')) return false;
  return [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].every((c) => c.querySelector('svg.marks, canvas'));
}
"""


def measure(url: str, pages: list[str], quiet_ms: int) -> list[tuple[str, int, int]]:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import _chromium
    from ui import nav

    parsed = urlparse(url)
    relay = CountingRelay(parsed.hostname or "127.0.0.1", parsed.port or 80)
    relay.start()
    base = f"http://127.0.0.1:{relay.listen_port}"
    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=_chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-quic"])
        for page_id in pages:
            entry = nav.page_by_id(page_id)
            path = "" if entry.path == "app.py" else Path(entry.path).stem
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            relay.reset()
            page.goto(f"{base}/{path}")
            page.wait_for_function(SETTLED, timeout=120_000, polling=200)
            last, since = relay.down, time.monotonic()
            while time.monotonic() - since < quiet_ms / 1000:  # until nothing more arrives
                time.sleep(0.1)
                if relay.down != last:
                    last, since = relay.down, time.monotonic()
            out.append((page_id, relay.down, relay.up))
            context.close()
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="the server, e.g. http://127.0.0.1:8501")
    parser.add_argument("--pages", default="overview,multi_head_attention", help="page ids (ui.nav), comma-separated")
    parser.add_argument("--quiet", type=int, default=2000, help="ms with nothing arriving that ends a page")
    args = parser.parse_args()
    socket.setdefaulttimeout(30)
    print(f"{'page':24} {'down (bytes)':>13} {'MB':>6} {'up':>9}  ≤ 2 MB")
    for page_id, down, up in measure(args.url, args.pages.split(","), args.quiet):
        print(f"{page_id:24} {down:13,} {down / 1e6:6.2f} {up:9,}  {'yes' if down <= TARGET_BYTES else 'NO'}")


if __name__ == "__main__":
    main()
