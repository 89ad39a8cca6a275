"""A real ``redis-server`` on a free loopback port for the class-store tests (no mock).

In CI (``CI`` set) a missing ``redis-server`` or redis-py is a failure; elsewhere a skip that says
what to install. The server keeps nothing on disk (no RDB, no AOF) and is stopped after the tests.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI (scripts/test.sh installs it)")
    pytest.skip(f"{what} is not installed (apt-get install redis-server; pip install -r requirements.txt)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """Start ``redis-server`` on 127.0.0.1:<free port>; yields its URL; stops it after."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server")
    try:
        import redis
    except ImportError:
        _missing("the redis package (redis-py)")
    port = _free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(folder), "--protected-mode", "yes", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start: {process.stderr.read()!r}") from None
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
