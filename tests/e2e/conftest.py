"""Real-browser tests: a Streamlit server on a free loopback port, Debian's Chromium.

Playwright's own browser download cannot work here, so the pytest-playwright launch
arguments point at the system Chromium. In CI a missing browser is a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "tests" / "e2e" / "screenshots"
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def _chromium() -> str | None:
    for path in CHROMIUM_CANDIDATES:
        if Path(path).exists():
            return path
    return shutil.which("chromium")


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict:
    path = _chromium()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: install the Debian package 'chromium' (scripts/test.sh does)")
        pytest.skip("no system Chromium (install the Debian package 'chromium')")
    return {
        "executable_path": path,
        "headless": True,
        "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict) -> dict:
    return {**browser_context_args, "viewport": {"width": 1440, "height": 1000}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STREAMLIT_FLAGS = ["--server.headless", "true", "--server.fileWatcherType", "none",
                   "--browser.gatherUsageStats", "false"]


@contextlib.contextmanager
def serve(command: list[str], port: int, log_name: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a server command on ``port`` (loopback), wait for its health check, stop it after.

    Every e2e server (the plain app, one with foreign models, the classroom profile) starts
    this way; its output goes to ``tests/e2e/<log_name>`` (git-ignored).
    """
    env = {**os.environ, "TOKEN_JOURNEY_DEVICE": "cpu", **(env or {})}
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # pytest -n: each worker serves its own app
    if worker:
        log_name = log_name.replace(".log", f".{worker}.log")
    log = open(ROOT / "tests" / "e2e" / log_name, "w")
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited with {proc.returncode}; see tests/e2e/{log_name}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"the server did not become healthy within 90 s; see tests/e2e/{log_name}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def streamlit_command(port: int) -> list[str]:
    return [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), *STREAMLIT_FLAGS,
            "--server.address", "127.0.0.1", "--server.port", str(port)]


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Start ``streamlit run app.py`` on a free port and wait for its health check."""
    port = _free_port()
    with serve(streamlit_command(port), port, "server.log") as url:
        yield url


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
