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

Or let it start the classroom launcher's server (``scripts/serve.sh --replicas 1``: HAProxy, its
precompressed static files, one replica) from each of several checkouts in turn and print their
totals side by side:

    .venv/bin/python bench/first_visit_bytes.py --roots before=/path/to/main,after=.

Run:  .venv/bin/python bench/first_visit_bytes.py (--url URL | --roots NAME=DIR,...) [--pages ids]
(``--pages`` defaults to every page of the sidebar, ui.nav.)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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


def all_page_ids() -> list[str]:
    from ui import nav

    return [page.page_id for _, pages in nav.existing_sections() for page in pages]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def launcher(root: Path, log: Path) -> Iterator[str]:
    """``scripts/serve.sh --replicas 1`` of the checkout at ``root`` (this interpreter runs its
    replica), until the ``with`` ends; yields its address once HAProxy reports it healthy."""
    port, base_port = free_port(), free_port()
    env = {**os.environ, "PYTHON": sys.executable}
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "scripts/serve.sh", "--replicas", "1", "--address", "127.0.0.1",
                                 "--port", str(port), "--base-port", str(base_port)],
                                cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{root}: scripts/serve.sh exited ({proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{root}: no healthy replica after 300 s; see {log}")
            time.sleep(1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # serve.sh stops its replica and HAProxy on TERM
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def parse_roots(text: str) -> list[tuple[str, Path]]:
    roots = []
    for item in text.split(","):
        name, sep, folder = item.partition("=")
        path = Path(folder).resolve()
        if not sep or not name or not (path / "scripts" / "serve.sh").is_file():
            raise SystemExit(f"--roots: NAME=DIR with DIR/scripts/serve.sh, not {item!r}")
        roots.append((name, path))
    return roots


def print_table(names: list[str], results: list[dict[str, int]], pages: list[str]) -> None:
    """One row per page: the bytes each server sent, in MB, and whether the last is <= 2 MB."""
    print(f"{'page':24} " + " ".join(f"{name + ' (MB)':>14}" for name in names) + "  <= 2 MB")
    for page_id in pages:
        last = results[-1][page_id]
        print(f"{page_id:24} " + " ".join(f"{r[page_id] / 1e6:14.2f}" for r in results)
              + f"  {'yes' if last <= TARGET_BYTES else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running server, e.g. http://127.0.0.1:8501")
    where.add_argument("--roots", help="NAME=DIR,...: start scripts/serve.sh from each checkout in turn")
    parser.add_argument("--pages", default="", help="page ids (ui.nav), comma-separated; default: every page")
    parser.add_argument("--quiet", type=int, default=2000, help="ms with nothing arriving that ends a page")
    args = parser.parse_args()
    socket.setdefaulttimeout(30)
    pages = args.pages.split(",") if args.pages else all_page_ids()
    if args.url:
        print(f"{'page':24} {'down (bytes)':>13} {'MB':>6} {'up':>9}  ≤ 2 MB")
        for page_id, down, up in measure(args.url, pages, args.quiet):
            print(f"{page_id:24} {down:13,} {down / 1e6:6.2f} {up:9,}  {'yes' if down <= TARGET_BYTES else 'NO'}")
        return
    names, results = [], []
    for name, root in parse_roots(args.roots):
        log = Path(os.environ.get("TMPDIR", "/tmp")) / f"first_visit_bytes.{name}.log"
        with launcher(root, log) as url:
            results.append({page_id: down for page_id, down, _ in measure(url, pages, args.quiet)})
        names.append(name)
    print_table(names, results, pages)


if __name__ == "__main__":
    main()
