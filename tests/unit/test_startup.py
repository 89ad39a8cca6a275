"""``serving.startup``: one explicit, idempotent start; the first page's hold; the thread pools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from serving import startup

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("threads", ["1", "2"])
def test_numpy_and_torch_pools_get_the_servers_thread_count(threads: str) -> None:
    code = ("import json, threadpoolctl, torch; from serving.startup import start, settings_or_exit; "
            "start(settings_or_exit()); "
            "print(json.dumps([torch.get_num_threads(), "
            "[p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas']]))")
    env = {**os.environ, "TOKEN_JOURNEY_BACKGROUND_LOAD": "0", "TOKEN_JOURNEY_THREADS": threads}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(name, None)  # the pool starts with one per core; the limit must bring it down
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    torch_threads, blas_pools = json.loads(out.stdout.strip().splitlines()[-1])
    assert torch_threads == int(threads)
    assert blas_pools and all(n == int(threads) for n in blas_pools)


_START = r"""
import gc, json, sys, threading
from serving import models, patches, startup
from serving.settings import Settings
from ui.resources import APP
from core.engine import device
from streamlit.runtime.runtime import Runtime
before = set(threading.enumerate())
first = startup.start(Settings(background_load=sys.argv[1] == "1", device="cpu", cache_mb=7.0), APP)
again = startup.start(Settings(threads=3), APP)
from serving.registry import MEMO_BUDGET
print(json.dumps({
    "same": first is again, "threads": again.threads, "device": device._FORCED,
    "memo_mb": MEMO_BUDGET.max_bytes / 2**20, "patched": Runtime._enqueued_some_message is patches._enqueued_some_message,
    "registered": models.available_model_names(), "hooks": sorted(models.registry()._precompute),
    "new_threads": sorted(t.name for t in set(threading.enumerate()) - before),
}))
"""


@pytest.mark.parametrize("background", ["0", "1"])
def test_start_does_it_all_once(background: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_JOURNEY_")}
    out = subprocess.run([sys.executable, "-c", _START, background], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["same"] and report["threads"] == 1  # the second call changes nothing
    assert report["device"] == "cpu" and report["memo_mb"] == 7.0 and report["patched"]
    assert report["registered"][:2] == ["classic", "modern"]
    assert {"embeddings.table", "prompts.presets"} <= set(report["hooks"])
    assert report["new_threads"] == (["token-journey-start"] if background == "1" else [])


def test_a_malformed_setting_exits_with_code_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        startup.settings_or_exit({"TOKEN_JOURNEY_START_HOLD_S": "soon"})
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip() == "[token-journey] TOKEN_JOURNEY_START_HOLD_S='soon' is not a number"


def test_a_malformed_setting_under_streamlit_run_ends_the_server_with_code_2() -> None:
    """``start_once`` runs on a page's script thread there: the whole process must stop, not the thread."""
    code = ("import threading; from serving import startup; "
            "t = threading.Thread(target=startup.start_once); t.start(); t.join(); print('still running')")
    env = {**os.environ, "TOKEN_JOURNEY_COALESCE": "maybe"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "still running" not in out.stdout
    assert "[token-journey] TOKEN_JOURNEY_COALESCE='maybe' is not a switch: use 1 or 0" in out.stderr.splitlines()


def test_start_up_work_waits_for_the_first_page_or_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "_FIRST_PAGE_DRAWN", threading.Event())
    monkeypatch.setattr(startup, "_GRACE_STARTED", threading.Event())
    started = time.monotonic()
    startup._hold_until_first_page(started + 0.3)  # nobody drew a page: the deadline ends it
    assert 0.25 <= time.monotonic() - started < 5
    threading.Timer(0.1, startup.first_page_drawn).start()
    started = time.monotonic()
    startup._hold_until_first_page(started + 30)  # the first page drawn ends it, after the grace
    assert startup.START_GRACE_S <= time.monotonic() - started < 5
    started = time.monotonic()
    startup._hold_until_first_page(started + 30)  # and every later hold
    assert time.monotonic() - started < 0.5


def test_pool_variables_are_set_unless_the_environment_has_them() -> None:
    env = {"OMP_NUM_THREADS": "4"}
    startup.set_pool_variables(1, env)
    assert env == {"OMP_NUM_THREADS": "4", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


_LAUNCH = r"""
import asyncio, importlib, json, os, sys, threading
from pathlib import Path
import streamlit as st
from streamlit.web.server.app_discovery import discover_asgi_app
found = discover_asgi_app(Path("app.py"))  # what `streamlit run app.py` looks for, without running it
module = importlib.import_module("app")  # what uvicorn then does with "app:app"
report = {"import": found.import_string, "is_app": isinstance(module.app, st.App),
          "pools": os.environ.get("OPENBLAS_NUM_THREADS"), "numpy_before": "numpy" in sys.modules,
          "torch_before": "torch" in sys.modules}
async def serve():
    async with module.app._user_lifespan(module.app):  # the server's start: the lifespan must not wait
        launcher = [t for t in threading.enumerate() if t.name == "token-journey-launch"]
        report["launcher"] = len(launcher)
        launcher[0].join(240)
asyncio.run(serve())
from serving import models, startup
from ui.i18n import load_strings
report["started"] = startup.started() is not None
report["hooks"] = sorted(models.registry()._precompute)
report["warm"] = "ui.page" in sys.modules and load_strings.cache_info().currsize == 2
print(json.dumps(report))
"""


def test_streamlit_run_finds_app_py_and_its_lifespan_starts_the_server_on_a_thread() -> None:
    """``streamlit run app.py`` imports app.py as a module and serves its ``st.App``: the lifespan
    must return at once (the server answers while torch loads) and start everything on a thread."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TOKEN_JOURNEY_") and k not in startup.POOL_VARIABLES}
    env.update(TOKEN_JOURNEY_DEVICE="cpu", TOKEN_JOURNEY_BACKGROUND_LOAD="0")
    out = subprocess.run([sys.executable, "-c", _LAUNCH], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["import"] == "app:app" and report["is_app"]
    assert report["pools"] == "1" and not report["numpy_before"] and not report["torch_before"]
    assert report["launcher"] == 1 and report["started"] and report["warm"]
    assert {"embeddings.table", "prompts.presets"} <= set(report["hooks"])


def test_a_malformed_setting_stops_streamlit_run_before_it_serves() -> None:
    code = "import importlib; importlib.import_module('app')"
    env = {**os.environ, "TOKEN_JOURNEY_START_HOLD_S": "soon"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "[token-journey] TOKEN_JOURNEY_START_HOLD_S='soon' is not a number" in out.stderr.splitlines()


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_the_readme_run_command_loads_the_models_before_anyone_connects() -> None:
    """The README's ``streamlit run app.py``, and no browser: torch and the built-in models are
    loaded anyway (the resident size grows past what Streamlit alone holds, ~100 MB)."""
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_JOURNEY_")}
    env["TOKEN_JOURNEY_DEVICE"] = "cpu"
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
                             "--server.port", str(port), "--server.headless", "true"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        rss = 0.0
        while time.monotonic() < deadline and rss < 300:
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
            rss = _rss_mb(proc.pid)
            time.sleep(0.5)
        assert rss >= 300, f"resident size {rss:.0f} MB: the models did not load before a connection"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as r:
            assert r.status == 200
    finally:
        proc.terminate()
        proc.wait(30)


def test_start_up_work_waits_for_the_pages_being_run_but_not_for_ever() -> None:
    assert startup.yield_to_pages(1.0) < 0.2  # no page running: no wait
    page = threading.Thread(target=time.sleep, args=(0.4,), name=startup.SCRIPT_THREAD)
    page.start()
    waited = startup.yield_to_pages(5.0)
    assert 0.3 <= waited < 2.0 and not page.is_alive()  # waited for that run to end
    busy = threading.Thread(target=time.sleep, args=(2.0,), name=startup.SCRIPT_THREAD)
    busy.start()
    assert 0.2 <= startup.yield_to_pages(0.25) < 1.5  # a class that never pauses: the limit
    busy.join()
