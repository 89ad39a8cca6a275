"""scripts/serve.sh's supervisor with real processes on loopback: replicas that die come back,
HAProxy keeps answering meanwhile, Ctrl-C/SIGTERM stops everything, a failing replica ends it.

The replicas are stand-ins (a small HTTP server answering ``/_stcore/health``, started by a
fake ``python`` that serve.sh is given through ``PYTHON``): what is tested is the launcher, not
Streamlit. HAProxy is the real one (installed by the test command).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import supervise  # noqa: E402

needs_haproxy = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v haproxy"], capture_output=True).returncode != 0 and not os.environ.get("CI"),
    reason="haproxy is not installed (scripts/test.sh installs it)")

FAKE_PYTHON = textwrap.dedent(f"""\
    #!{sys.executable}
    # serve.sh runs the supervisor and each replica with $PYTHON: the supervisor with the real
    # Python, a replica ("-m streamlit run app.py ... --server.port P") as a health server.
    import http.server, os, sys
    if "--server.port" not in sys.argv:  # the supervisor, the class links, the static files' gzip
        os.execv({sys.executable!r}, [{sys.executable!r}, *sys.argv[1:]])
    port = int(sys.argv[sys.argv.index("--server.port") + 1])
    pid_file = os.path.join(os.environ["FAKE_PIDS"], f"replica-{{port}}.pid")
    with open(pid_file, "w") as out:
        out.write(str(os.getpid()))
    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"ok {{port}}".encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Health).serve_forever()
    """)


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as reply:
            return reply.read().decode()
    except OSError:
        return None


def wait_for(predicate, timeout: float, what: str):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s: {what}")


@needs_haproxy
def test_a_dead_replica_comes_back_and_the_class_is_served_meanwhile(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    pids = tmp_path / "pids"
    pids.mkdir()
    port, base = free_ports(2)
    base_ports = [base, base + 1]
    env = {**os.environ, "PYTHON": str(fake), "FAKE_PIDS": str(pids), "TMPDIR": str(tmp_path),
           "TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1"}
    launcher = subprocess.Popen(["bash", "scripts/serve.sh", "--replicas", "2", "--address", "127.0.0.1",
                                 "--port", str(port), "--base-port", str(base)],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/_stcore/health"
    try:
        wait_for(lambda: get(url), 30, "HAProxy answers once a replica is healthy")
        for how in (signal.SIGKILL, signal.SIGTERM):
            victim = base_ports[0] if how == signal.SIGKILL else base_ports[1]
            pid_file = pids / f"replica-{victim}.pid"
            old = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), 10, "pid file"))
            os.kill(old, how)
            # every request in the next seconds is answered (by the other replica meanwhile)
            answers = []
            for _ in range(20):
                answers.append(get(url))
                time.sleep(0.1)
            assert all(a and a.startswith("ok ") for a in answers), answers
            new = int(wait_for(lambda: pid_file.read_text() != str(old) and pid_file.read_text(), 15,
                               f"replica {victim} restarted after {how.name}"))
            assert new != old
            wait_for(lambda: get(f"http://127.0.0.1:{victim}/_stcore/health"), 10, "the restarted replica answers")
        assert launcher.poll() is None, "the launcher kept running"
        children = [int((pids / f"replica-{p}.pid").read_text()) for p in base_ports]
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=20) == supervise.EXIT_STOPPED
        for pid in children:
            wait_for(lambda pid=pid: not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2],
                     10, f"replica {pid} stopped")
        assert get(url) is None
        assert not list(tmp_path.glob("token-journey-serve.*")), "the run folder is removed after a clean stop"
        log = launcher.stderr.read()
        assert "exited (signal SIGKILL); restarting in 1 s" in log and "exited (signal SIGTERM)" in log, log
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()


def test_a_replica_that_keeps_dying_ends_the_launcher_with_its_code(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(supervise, "BACKOFF_S", (0.05,))
    monkeypatch.setattr(supervise, "HEALTH_TIMEOUT_S", 30.0)
    crash = [sys.executable, "-c", "import sys; sys.exit(3)"]
    replicas = [supervise.Child("replica r0", crash, tmp_path / "r0.log", health_url="http://127.0.0.1:9/")]
    proxy = supervise.Child("HAProxy", [sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "p.log")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    started = time.monotonic()
    assert supervise.Supervisor(replicas, proxy, run_dir).run() == supervise.EXIT_REPLICA_FAILING
    assert time.monotonic() - started < 20
    assert len(replicas[0].exits) == supervise.GIVE_UP_AFTER
    assert run_dir.exists(), "the logs are kept when it gives up"


def test_a_proxy_that_keeps_dying_ends_the_launcher_with_its_code(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(supervise, "BACKOFF_S", (0.05,))
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    (tmp_path / "pids").mkdir()
    monkeypatch.setenv("FAKE_PIDS", str(tmp_path / "pids"))
    [port] = free_ports(1)
    replica = supervise.Child("replica r0", [str(fake), "-m", "streamlit", "--server.port", str(port)],
                              tmp_path / "r0.log", health_url=f"http://127.0.0.1:{port}/_stcore/health")
    proxy = supervise.Child("HAProxy", [sys.executable, "-c", "import sys; sys.exit(1)"], tmp_path / "p.log")
    supervisor = supervise.Supervisor([replica], proxy, None)
    assert supervisor.run() == supervise.EXIT_PROXY_FAILING
    assert replica.proc is not None and replica.proc.poll() is not None, "the replica was stopped too"


def test_exit_descriptions() -> None:
    assert supervise.describe_exit(-9) == "signal SIGKILL"
    assert supervise.describe_exit(-15) == "signal SIGTERM"
    assert supervise.describe_exit(2) == "exit code 2"
