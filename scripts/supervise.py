"""Keep a class's servers running: Streamlit replicas behind HAProxy, restarted when they die.

``scripts/serve.sh`` writes HAProxy's configuration and hands over to this supervisor, which:

- starts every replica (``streamlit run app.py`` with the classroom profile of
  ``scripts/classroom.sh``, one loopback port each) and starts HAProxy only once one replica
  answers ``/_stcore/health``, so no student is ever told "no server available" at start;
- restarts a replica that exits, whatever the signal or exit code, after a back-off (1 s, 2 s,
  4 s … at most 30 s); HAProxy meanwhile sends its students to the healthy ones (the cookie is
  re-dispatched, ``option redispatch``) and takes the restarted one back once it is healthy;
- restarts HAProxy the same way if it exits;
- gives up when a process keeps dying (``GIVE_UP_AFTER`` exits within ``GIVE_UP_WINDOW_S``):
  stops everything, keeps the logs and exits non-zero;
- on Ctrl-C or SIGTERM stops everything (SIGTERM, then SIGKILL after ``STOP_GRACE_S``).

Exit codes: 0 stopped when asked; 1 no replica became healthy; 3 a replica kept dying;
4 HAProxy kept dying. Children run in sessions of their own (a Ctrl-C in the terminal reaches
only the supervisor, which stops them in order) and die with it if it is killed.

Why a small Python program and not a process manager from the registries: it needs only
the standard library, it knows what "healthy" means here (HAProxy waits for it), and the
same rules are tested with real processes (``tests/unit/test_supervise.py``). In containers
the orchestrator restarts instead (compose ``restart:``, Kubernetes probes).

Run (serve.sh does): python scripts/supervise.py --haproxy-cfg RUN/haproxy.cfg --run-dir RUN --ports 8600,8601 \
                       -- --server.enableWebsocketCompression true
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
GIVE_UP_AFTER = 5  # exits of one process within the window
GIVE_UP_WINDOW_S = 120.0
HEALTH_TIMEOUT_S = 180.0  # the first replica must answer within this (both models load at start)
STOP_GRACE_S = 10.0
POLL_S = 0.2

EXIT_STOPPED, EXIT_NEVER_HEALTHY, EXIT_REPLICA_FAILING, EXIT_PROXY_FAILING = 0, 1, 3, 4


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the supervisor dies (Linux), so a killed
    supervisor leaves no replica holding a port."""
    os.setsid()
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


@dataclass
class Child:
    """One supervised process and its recent exits."""

    name: str
    argv: list[str]
    log: Path
    health_url: str | None = None
    proc: subprocess.Popen[bytes] | None = None
    exits: collections.deque[float] = field(default_factory=collections.deque)
    restart_at: float | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(self.argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        self.restart_at = None

    def exited(self) -> int | None:
        """The exit status if it has exited since the last start, else None."""
        if self.proc is None or self.restart_at is not None:
            return None
        return self.proc.poll()

    def schedule_restart(self, now: float) -> float:
        """Record an exit; returns the back-off before the restart."""
        self.exits.append(now)
        while self.exits and now - self.exits[0] > GIVE_UP_WINDOW_S:
            self.exits.popleft()
        delay = BACKOFF_S[min(len(self.exits), len(BACKOFF_S)) - 1]
        self.restart_at = now + delay
        return delay

    def failing(self) -> bool:
        return len(self.exits) >= GIVE_UP_AFTER

    def healthy(self) -> bool:
        if self.health_url is None or self.proc is None or self.proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(self.health_url, timeout=1) as reply:
                return reply.status == 200
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()

    def wait_or_kill(self, deadline: float) -> None:
        if self.proc is None:
            return
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Supervisor:
    def __init__(self, replicas: list[Child], proxy: Child, run_dir: Path | None) -> None:
        self.replicas, self.proxy, self.run_dir = replicas, proxy, run_dir
        self.stopping = False

    def say(self, line: str) -> None:
        print(f"[serve] {line}", file=sys.stderr, flush=True)

    def ask_to_stop(self, signum: int, _frame: object) -> None:
        self.stopping = True

    def run(self) -> int:
        for replica in self.replicas:
            replica.start()
        code = self._wait_for_first_healthy()
        if code is None:
            self.proxy.start()
            code = self._watch()
        self._stop_all()
        if code == EXIT_STOPPED and self.run_dir is not None:
            shutil.rmtree(self.run_dir, ignore_errors=True)
        elif code != EXIT_STOPPED and self.run_dir is not None:
            self.say(f"logs kept in {self.run_dir}")
        return code

    def _wait_for_first_healthy(self) -> int | None:
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while not self.stopping:
            if any(replica.healthy() for replica in self.replicas):
                return None
            code = self._restart_exited(time.monotonic())
            if code is not None:
                return code
            if time.monotonic() > deadline:
                self.say(f"no replica answered {HEALTH_TIMEOUT_S:.0f} s after the start: giving up")
                return EXIT_NEVER_HEALTHY
            time.sleep(POLL_S)
        return EXIT_STOPPED

    def _watch(self) -> int:
        while not self.stopping:
            code = self._restart_exited(time.monotonic())
            if code is not None:
                return code
            time.sleep(POLL_S)
        return EXIT_STOPPED

    def _restart_exited(self, now: float) -> int | None:
        for child in (*self.replicas, self.proxy):
            if self.stopping:
                return EXIT_STOPPED
            status = child.exited()
            if status is not None:
                delay = child.schedule_restart(now)
                if child.failing():
                    self.say(f"{child.name} exited ({describe_exit(status)}) {len(child.exits)} times in "
                             f"{GIVE_UP_WINDOW_S:.0f} s: giving up")
                    return EXIT_PROXY_FAILING if child is self.proxy else EXIT_REPLICA_FAILING
                self.say(f"{child.name} exited ({describe_exit(status)}); restarting in {delay:g} s")
            elif child.restart_at is not None and now >= child.restart_at:
                child.start()
                self.say(f"{child.name} restarted")
        return None

    def _stop_all(self) -> None:
        children = (self.proxy, *self.replicas)  # the proxy first: no new connection to a stopping replica
        for child in children:
            child.stop()
        deadline = time.monotonic() + STOP_GRACE_S
        for child in children:
            child.wait_or_kill(deadline)


def replica_argv(python: str, port: int, extra: list[str] | None = None) -> list[str]:
    """``streamlit run app.py`` with the classroom profile, on one loopback port, then ``extra``."""
    flags = subprocess.run(["bash", str(ROOT / "scripts" / "classroom.sh"), "--print-flags", "--address", "127.0.0.1",
                            "--port", str(port)], check=True, capture_output=True, text=True).stdout.split("\n")
    return [python, "-m", "streamlit", "run", "app.py", *[f for f in flags if f], *(extra or [])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--haproxy-cfg", type=Path, required=True)
    parser.add_argument("--ports", required=True, help="the replicas' loopback ports, comma-separated")
    parser.add_argument("--run-dir", type=Path, help="logs go here; removed after a clean stop")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs each replica")
    parser.add_argument("--haproxy", default="haproxy")
    parser.add_argument("streamlit_flags", nargs="*", help="after --: more flags for every replica's streamlit run")
    args = parser.parse_args(argv)
    ports = [int(p) for p in args.ports.split(",") if p.strip()]
    logs = args.run_dir or Path(os.environ.get("TMPDIR", "/tmp"))
    replicas = [Child(f"replica r{i} (port {port})", replica_argv(args.python, port, args.streamlit_flags), logs / f"replica-{i}.log",
                      health_url=f"http://127.0.0.1:{port}/_stcore/health") for i, port in enumerate(ports)]
    proxy = Child("HAProxy", [args.haproxy, "-db", "-f", str(args.haproxy_cfg)], logs / "haproxy.log")
    supervisor = Supervisor(replicas, proxy, args.run_dir)
    signal.signal(signal.SIGINT, supervisor.ask_to_stop)
    signal.signal(signal.SIGTERM, supervisor.ask_to_stop)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
