"""A simulated classroom against a real server: what each student waits for, per click.

Every simulated student is a protocol-level client (``bench/proto_client.py``: Streamlit's
own websocket protocol, no browser): it opens a session, then once every ``--every``
seconds does one interaction — mostly a random control of the page it is on (sliders,
selects, toggles, number inputs, buttons, with valid new values, and the page's browser knobs),
sometimes the sidebar prompt, sometimes another page, so every page is used.

Browser knobs (temperature, the PE sliders, the merge step, the head picker, ...) are found in the
page's components-v2 data as the server sends it (``proto_client.BrowserKnob``). A student who
picks one moves it in the browser: no message to the server, so it is counted apart ("browser
knobs: n, 0 frames", with its share of all interactions) and the served rate and latency rows
stay about the server. ``--server-only`` keeps the old mix (server controls only). Latency is from sending the
``rerun_script`` message to receiving ``script_finished``: the page's script, Streamlit's
own work (widget state, serialisation, its garbage collection) and transport.

Printed per (server, N): served interactions/s (and wanted: N / every), p50 / p95 / max
latency, errors (exceptions on the page, failed runs), dropped sessions (websocket closed
or no answer within ``--timeout``), server CPU (all its processes, % of one core), RSS
(per process), KiB received per interaction, and the load average of the machine.

Servers, started by the bench on loopback ports and stopped afterwards:
  single      ``streamlit run app.py`` (the README's run command: one Streamlit process)
  classroom   ``scripts/classroom.sh`` (the README's classroom command: every core behind HAProxy
              where HAProxy is installed, else one process)
  replicated  ``scripts/serve.sh --replicas R`` (R processes behind HAProxy)
or ``--url`` for a server that is already running (any of these, a container, a proxy; ``--pid``
names its process, whose tree's CPU and replicas' RSS are then reported).

Every simulated student keeps Streamlit's message cache as a browser tab does
(``bench/proto_client.py``: it sends ``cached_message_hashes`` and resolves the server's
references); ``--no-message-cache`` makes clients that never send them (every element in full).

Also printed, for each started server: the cold start (process start -> the Overview's first
``script_finished`` for a fresh session, i.e. interactive; health OK alone is not enough: both
built-in models load in the background) and every page's first visit, Training included.
``--rss-every S`` samples each replica's RSS every S seconds during the class and prints the
samples, their max/min ratio and whether they stay within +-10 % of the first one (of those
after ``--rss-warmup`` seconds, while the shared caches fill).

Run (short default; the issue's protocol is --duration 60):
  .venv/bin/python bench/classroom.py --students 10,30,60 --duration 60 --servers single,replicated
  .venv/bin/python bench/classroom.py --students 30 --duration 1800 --rss-every 60 --rss-warmup 300  # 30-minute flat-RSS run
  .venv/bin/python bench/classroom.py --students 30 --duration 60 --with-training --rss-every 10  # + Training snapshots
  .venv/bin/python bench/classroom.py --url http://127.0.0.1:8501 --students 5   # an existing server
  .venv/bin/python bench/classroom.py --url http://127.0.0.1:8501 --pid "$(pgrep -f scripts/serve.sh)" --students 60
  .venv/bin/python bench/classroom.py --students 30 --roots before=/tmp/before,after=.   # before/after, one run
  .venv/bin/python bench/classroom.py --students 30,60 --duration 60 --rounds 2 \
      --variant on= --variant nocoalesce=TOKEN_JOURNEY_COALESCE=0   # a switch on/off, ABAB, one run
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.proto_client import BrowserKnob, Session, Widget, current_value, new_value  # noqa: E402

PAGES = ("", "tokenization", "embeddings", "positional_encoding", "self_attention", "multi_head_attention",
         "logits_sampling", "generation", "transformer_block", "whole_model")
PROMPTS = ["The capital of France is", "The capital of Japan is", "法国的首都是", "Alice put the apple in the box because it",
           "The cat sat on the", "一 二 三 四 五"]
# Interaction mix: (kind, weight). Page changes keep every page in use; the prompt is shared
# by all pages and recomputes the model once per new text.
MIX = (("widget", 80), ("page", 14), ("prompt", 6))
SKIP_KEYS = ("play", "upload", "lang", "language",  # autoplay loops, uploads, language flips
             "training_start", "training_stop", "training_use", "training_download")  # live training jobs


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, timeout: float = 90) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            with urllib.request.urlopen(url.rstrip("/") + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return time.perf_counter() - start
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not become healthy in {timeout:.0f} s")


# --- process accounting ----------------------------------------------------------------------

CLK = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """pid and every descendant (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / CLK
        except OSError:
            pass
    return total


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# --- servers --------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    url: str
    proc: subprocess.Popen | None = None
    started_s: float = 0.0
    t0: float = 0.0  # perf_counter() when the process was started
    pid: int = 0  # --url: the running server's process (its tree), if given

    def pids(self) -> list[int]:
        if self.proc:
            return tree(self.proc.pid)
        return tree(self.pid) if self.pid else []

    def replicas(self) -> list[int]:
        """The Streamlit processes (``streamlit run app.py``), not HAProxy or the shell."""
        return [p for p in self.pids() if is_streamlit_server(comm(p))]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                for pid in reversed(self.pids()):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass


def is_streamlit_server(cmdline: str) -> bool:
    """A ``streamlit run ... app.py`` process (also ``python -m streamlit run``).

    Example: is_streamlit_server("/x/.venv/bin/python -m streamlit run app.py --server.port 1") -> True
    """
    words = cmdline.split()
    return any(w.endswith("streamlit") for w in words) and "run" in words and any(
        w.endswith("app.py") for w in words)


def server_command(kind: str, port: int, replicas: int, python: str) -> list[str]:
    """The command line of a server of ``kind`` on loopback ``port`` (run from the app's root).

    ``single`` is the README's run command with only what loopback and a headless machine need
    (the rest comes from .streamlit/config.toml, as for a teacher); ``classroom`` the README's
    classroom command (every core where HAProxy is installed); ``replicated`` ``scripts/serve.sh``.
    """
    if kind == "single":
        return [python, "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1", "--server.port",
                str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    if kind == "classroom":
        return ["bash", "scripts/classroom.sh", "--replicas", str(replicas), "--address", "127.0.0.1",
                "--port", str(port)]
    if kind == "replicated":
        return ["bash", "scripts/serve.sh", "--replicas", str(replicas), "--address", "127.0.0.1",
                "--port", str(port), "--base-port", str(free_port() + 1000 if port < 50000 else 20000)]
    raise ValueError(kind)


def start_server(kind: str, replicas: int, env_extra: dict[str, str], root: Path = ROOT, label: str = "") -> Server:
    port = free_port()
    env = {**os.environ, "TOKEN_JOURNEY_THREADS": "1", **env_extra}
    if kind == "classroom":
        env.setdefault("TOKEN_JOURNEY_ALLOWED_HOSTS", "127.0.0.1")
    # the launchers run "${PYTHON:-.venv/bin/python}" from the root: another copy of the app (--roots)
    # has no .venv of its own
    env.setdefault("PYTHON", str(ROOT / ".venv" / "bin" / "python"))
    cmd = server_command(kind, port, replicas, str(ROOT / ".venv" / "bin" / "python"))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    name = kind if kind != "replicated" else f"replicated x{replicas}"
    server = Server(f"{label}:{name}" if label else name, f"http://127.0.0.1:{port}", proc, t0=start)
    wait_healthy(server.url)
    if kind != "single":  # HAProxy answers before every replica does
        time.sleep(1.0)
    server.started_s = time.perf_counter() - start
    return server


# --- students -------------------------------------------------------------------------------


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    bytes_in: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dropped: int = 0
    ignored: int = 0  # clicks on a section the server no longer had (proto_client.IGNORED_AFTER_S)
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    finished_at: list[float] = field(default_factory=list)  # perf_counter when each interaction ended
    kinds: list[str] = field(default_factory=list)  # each interaction's kind, in the order of ``latencies``
    cache_refs: int = 0  # elements the server sent as a reference to the client's message cache
    browser_knobs: dict[str, int] = field(default_factory=dict)  # moves of each knob answered in the browser

    @property
    def browser_moves(self) -> int:
        return sum(self.browser_knobs.values())

    def browser_share(self) -> float:
        """Browser-knob moves as a share of every interaction the students made."""
        total = self.browser_moves + len(self.latencies)
        return self.browser_moves / total if total else 0.0


def browser_cookie(url: str) -> str | None:
    """GET / like a browser tab does first; returns the load balancer's affinity cookie."""
    with urllib.request.urlopen(url + "/", timeout=10) as r:
        cookies = [c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or []]
    return "; ".join(cookies) or None


async def student(index: int, url: str, until: float, every: float, timeout: float, stats: Stats,
                  seed: int, pages: tuple[str, ...] = PAGES, use_cache: bool = True,
                  browser_knobs: bool = True) -> None:
    rng = random.Random(seed * 1000 + index)
    session = Session(url, use_cache=use_cache)
    doing = "open"  # what a dropped student was waiting for
    try:
        cookie = await asyncio.to_thread(browser_cookie, url)
        session.cookie = cookie
        first = await session.open(timeout=timeout)
        if not first.ok:
            stats.errors.extend(first.exceptions or [first.status])
        page_order = list(pages)
        rng.shuffle(page_order)
        next_page = 0
        await asyncio.sleep(rng.uniform(0, every))  # students do not click in lockstep
        while time.perf_counter() < until:
            tick = time.perf_counter()
            kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
            widgets = [w for w in session.widgets.values()
                       if not any(s in w.key for s in SKIP_KEYS) and not w.sidebar]
            controls: list[Widget | BrowserKnob] = [*widgets, *(session.knobs.values() if browser_knobs else ())]
            result = None
            if kind == "prompt":
                prompt = next((w for w in session.widgets.values() if w.kind == "text_area"
                               and w.key.endswith("prompt")), None)
                state = new_value(session, prompt, rng, PROMPTS) if prompt is not None else None
                if state is not None:
                    doing = f"{session.page or 'overview'}:prompt"
                    result = await session.set_widget(prompt, state, timeout)
            if result is None and kind == "widget" and controls:
                widget = rng.choice(controls)
                if isinstance(widget, BrowserKnob):  # moved in the browser: nothing goes to the server
                    name = f"{session.page or 'overview'}:{widget.name}"
                    stats.browser_knobs[name] = stats.browser_knobs.get(name, 0) + 1
                    await asyncio.sleep(max(0.0, every - (time.perf_counter() - tick)))
                    continue
                state = new_value(session, widget, rng, PROMPTS)
                if state is not None:
                    kind = f"{session.page or 'overview'}:{widget.kind}"
                    doing = f"{kind} {widget.key or widget.id[-12:]}"
                    result = await session.set_widget(widget, state, timeout)
            if result is None:
                page = page_order[next_page % len(page_order)]
                next_page += 1
                if page not in session.pages and page != "":
                    continue
                kind = "page"
                doing = f"page {session.page or 'overview'} -> {page or 'overview'}"
                result = await session.go_to(page, timeout)
            if result.ignored:  # a click on a section that is gone: nothing happened, as in a browser
                stats.ignored += 1
                continue
            stats.latencies.append(result.seconds)
            stats.finished_at.append(time.perf_counter())
            stats.bytes_in.append(result.bytes_in)
            stats.by_kind.setdefault(kind, []).append(result.seconds)
            stats.kinds.append(kind)
            if not result.ok:
                stats.errors.extend(result.exceptions or [f"{kind}: {result.status}"])
            await asyncio.sleep(max(0.0, every - (time.perf_counter() - tick)))
    except (TimeoutError, asyncio.TimeoutError, OSError, ConnectionError) as err:
        stats.dropped += 1
        stats.errors.append(f"dropped ({doing}): {type(err).__name__}: {err}"[:200])
    except Exception as err:  # websockets' ConnectionClosed and protocol errors
        stats.dropped += 1
        stats.errors.append(f"dropped ({doing}): {type(err).__name__}: {err}"[:200])
    finally:
        stats.cache_refs += session.cache.hits
        try:
            await session.close()
        except Exception:
            pass


async def sample_rss(sample: Callable[[], list[float]], every: float, until: float,
                     out: list[tuple[float, list[float]]]) -> None:
    """RSS (MB, one per replica) every ``every`` seconds until ``until`` (perf_counter)."""
    start = time.perf_counter()
    while True:
        await asyncio.sleep(max(0.0, min(every, until - time.perf_counter())))
        out.append((time.perf_counter() - start, sample()))
        if time.perf_counter() >= until - 0.5:
            return


def client_cpu_seconds() -> float:
    """CPU seconds this bench process (every simulated student) has used: user + system."""
    times = os.times()
    return times.user + times.system


async def sample_cpu(server_cpu: Callable[[], float] | None, every: float, until: float,
                     out: list[tuple[float, float | None, float]]) -> None:
    """(perf_counter, server CPU s or None, this client's CPU s) now and every ``every`` seconds
    until ``until``: per-slice CPU for ``window_lines``."""
    while True:
        out.append((time.perf_counter(), server_cpu() if server_cpu else None, client_cpu_seconds()))
        if time.perf_counter() >= until:
            return
        await asyncio.sleep(max(0.0, min(every, until - time.perf_counter())))


async def classroom(url: str, n: int, duration: float, every: float, timeout: float, seed: int,
                    rss_sample: Callable[[], list[float]] | None = None, rss_every: float = 0.0,
                    rss_out: list[tuple[float, list[float]]] | None = None,
                    pages: tuple[str, ...] = PAGES, server_cpu: Callable[[], float] | None = None,
                    cpu_every: float = 0.0, cpu_out: list[tuple[float, float | None, float]] | None = None,
                    use_cache: bool = True, browser_knobs: bool = True) -> Stats:
    stats = Stats()
    until = time.perf_counter() + duration
    tasks = [student(i, url, until, every, timeout, stats, seed, pages, use_cache, browser_knobs) for i in range(n)]
    if rss_sample is not None and rss_every > 0 and rss_out is not None:
        tasks.append(sample_rss(rss_sample, rss_every, until, rss_out))
    if cpu_every > 0 and cpu_out is not None:
        tasks.append(sample_cpu(server_cpu, cpu_every, until, cpu_out))
    await asyncio.gather(*tasks)
    return stats


FIRST_VISIT_PAGES = (*PAGES[1:], "training")  # Training joins the class mix with --with-training


async def first_visits(url: str, timeout: float, use_cache: bool = True) -> dict[str, float]:
    """One fresh session visits every page once (the server's first visit of each page)."""
    session = Session(url, use_cache=use_cache)
    session.cookie = await asyncio.to_thread(browser_cookie, url)
    out = {"overview": (await session.open(timeout=timeout)).seconds}
    for page in FIRST_VISIT_PAGES:
        if page in session.pages:
            out[page] = (await session.go_to(page, timeout)).seconds
    await session.close()
    return out


async def snapshot_sweep(url: str, timeout: float) -> int:
    """One session on the Training page moves the step slider over every snapshot of every
    built-in (each step loads that snapshot model on the server); returns how many it showed."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    session = Session(url)
    session.cookie = await asyncio.to_thread(browser_cookie, url)
    await session.open(timeout=timeout)
    await session.go_to("training", timeout)
    shown = 0
    box = next((w for w in session.widgets.values() if w.kind == "selectbox" and w.key.endswith("train_model")), None)
    presets = list(box.proto.options) if box is not None else [""]
    for preset in presets:
        if box is not None and current_value(session, session.latest(box) or box) != preset:
            box = session.latest(box) or box
            state = WidgetState(id=box.id)
            state.string_value = preset
            await session.set_widget(box, state, timeout)
        slider = next((w for w in session.widgets.values() if w.kind == "slider" and w.key.endswith("train_step")), None)
        for option in list(slider.proto.options) if slider is not None else []:
            slider = session.latest(slider) or slider
            if current_value(session, slider) == [option]:
                shown += 1  # already shown: a browser sends nothing
                continue
            state = WidgetState(id=slider.id)
            state.string_array_value.data.append(option)
            result = await session.set_widget(slider, state, timeout)
            shown += int(result.ok)
    await session.close()
    return shown


def rss_summary(samples: list[tuple[float, list[float]]], warmup: float = 0.0) -> list[str]:
    """Lines: every sample, then per replica min/max, max/min and flat: every sample from ``warmup``
    seconds on within +-10 % of the first of them (the caches fill during the first minutes)."""
    if not samples:
        return ["    rss: no samples"]
    lines = ["    rss samples (s: MB per replica): "
             + ", ".join(f"{t:.0f}: {'/'.join(f'{r:.0f}' for r in rss)}" for t, rss in samples)]
    for i in range(max(len(rss) for _, rss in samples)):
        values = [rss[i] for t, rss in samples if t >= warmup - 0.5 and i < len(rss) and rss[i] > 0]
        if not values:
            lines.append(f"    rss replica {i}: no sample after the {warmup:.0f} s warm-up")
            continue
        first, low, high = values[0], min(values), max(values)
        flat = 0.9 * first <= low and high <= 1.1 * first
        since = f" from {warmup:.0f} s on" if warmup > 0 else ""
        lines.append(f"    rss replica {i}{since}: first {first:.0f} MB  min {low:.0f}  max {high:.0f}  last {values[-1]:.0f}  "
                     f"max/min {high / low:.3f}  {'flat (within +-10 % of the first sample)' if flat else 'NOT flat'}")
    return lines


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def window_lines(stats: Stats, started: float, window: float,
                 cpu: list[tuple[float, float | None, float]] | None = None) -> list[str]:
    """p50 / p95 / max of the interactions that ended in each ``window``-second slice of the class,
    and with ``cpu`` (``sample_cpu``'s samples) the server's and this client's CPU in that slice
    (% of one core, between the samples that bound it).

    Shows whether a long run's tail comes from the whole run getting slower (caches filling,
    evicting) or from a few bad moments (a full collection, a noisy neighbour) - and whether a
    slower slice is the server's or the bench's: all students share this one Python process, so a
    client near 100 % of a core adds its own queueing to every latency it measures."""
    slices: dict[int, list[float]] = {}
    for end, seconds in zip(stats.finished_at, stats.latencies):
        slices.setdefault(int((end - started) // window), []).append(seconds)
    lines = []
    for i, v in sorted(slices.items()):
        line = (f"    {f'{i * window:.0f}-{(i + 1) * window:.0f} s':<14} n={len(v):<5} p50 {pct(v, .5) * 1000:6.0f} ms  "
                f"p95 {pct(v, .95) * 1000:6.0f} ms  max {max(v) * 1000:6.0f} ms")
        lines.append(line + _slice_cpu(cpu or [], started + i * window, started + (i + 1) * window))
    return lines


def cpu_sample_every(window: float) -> float:
    """How often to sample CPU for ``window``-second slices: ten times a slice (at most every 30 s),
    so every slice holds samples near both of its ends (sampling once a window would put one
    sample in each slice, a little after its start, and no slice could say its CPU)."""
    return min(window / 10, 30.0) if window > 0 else 0.0


def kind_drift(stats: Stats, started: float, window: float) -> dict[str, str]:
    """Per interaction kind, "  first slice p50 a ms -> last slice p50 b ms": which interactions
    get slower over a long run (the slices are ``window_lines``'s; the last, partial slice left out)."""
    by_slice: dict[str, dict[int, list[float]]] = {}
    for end, seconds, kind in zip(stats.finished_at, stats.latencies, stats.kinds):
        by_slice.setdefault(kind, {}).setdefault(int((end - started) // window), []).append(seconds)
    out = {}
    for kind, slices in by_slice.items():
        full = sorted(i for i in slices if (i + 1) * window <= max(stats.finished_at) - started + 1e-6)
        if len(full) >= 2:
            first, last = slices[full[0]], slices[full[-1]]
            out[kind] = (f"  slice {full[0] + 1} p50 {pct(first, .5) * 1000:5.0f} ms -> "
                         f"slice {full[-1] + 1} p50 {pct(last, .5) * 1000:5.0f} ms")
    return out


def _slice_cpu(samples: list[tuple[float, float | None, float]], begin: float, end: float) -> str:
    """"  server CPU x %  client CPU y %" between the first sample at or after ``begin`` and the last
    at or before ``end`` (perf_counter times); "" when fewer than two samples fall inside."""
    inside = [s for s in samples if begin - 1e-6 <= s[0] <= end + 1e-6]
    if len(inside) < 2 or inside[-1][0] - inside[0][0] <= 0:
        return ""
    (t0, server0, client0), (t1, server1, client1) = inside[0], inside[-1]
    span = t1 - t0
    server = (f"  server CPU {100 * (server1 - server0) / span:4.0f} %"
              if server0 is not None and server1 is not None else "")
    return f"{server}  client CPU {100 * (client1 - client0) / span:4.0f} %"


def report(server: Server, n: int, duration: float, every: float, stats: Stats, cpu_s: float,
           rss: list[float], load: str) -> str:
    lat = stats.latencies
    kib = statistics.mean(stats.bytes_in) / 1024 if stats.bytes_in else float("nan")
    return (f"{server.name:<15} N={n:<3} served {len(lat) / duration:5.1f}/s (wanted {n / every:4.1f}"
            + (f"; + {stats.browser_moves / duration:4.1f}/s in the browser" if stats.browser_moves else "") + ")  "
            f"p50 {pct(lat, .5) * 1000:6.0f} ms  p95 {pct(lat, .95) * 1000:6.0f} ms  max {max(lat, default=0) * 1000:6.0f} ms  "
            f"errors {len([e for e in stats.errors if not e.startswith('dropped')])}  dropped {stats.dropped}  "
            + (f"ignored {stats.ignored}  " if stats.ignored else "")
            + f"cache refs {stats.cache_refs}  "
            + f"CPU {100 * cpu_s / duration:4.0f}%  RSS {'/'.join(f'{r:.0f}' for r in rss)} MB  "
            f"{kib:5.0f} KiB/interaction  load {load}")


def browser_line(stats: Stats) -> str:
    """The browser knobs' line: moves, their share of all interactions, the frames they sent (none:
    the client sends nothing for them) and the most moved."""
    if not stats.browser_knobs:
        return "browser knobs: 0 moves (--server-only, or no page with one)"
    top = sorted(stats.browser_knobs.items(), key=lambda kv: -kv[1])[:4]
    return (f"browser knobs: {stats.browser_moves} moves, 0 frames, 0 server time; "
            f"{100 * stats.browser_share():.0f} % of all interactions (most: "
            + ", ".join(f"{k} {v}" for k, v in top) + ")")


def settle(pids: Callable[[], list[int]], longest: float, quiet: float = 0.05) -> float:
    """Wait until the processes used under ``quiet`` CPU seconds in one second, at most ``longest``
    seconds; returns the seconds waited."""
    start = time.perf_counter()
    last = cpu_seconds(pids())
    while time.perf_counter() - start < longest:
        time.sleep(1.0)
        now = cpu_seconds(pids())
        if now - last < quiet:
            break
        last = now
    return time.perf_counter() - start


def parse_variant(text: str) -> tuple[str, dict[str, str]]:
    """``NAME=KEY=VALUE,KEY=VALUE`` -> (NAME, {KEY: VALUE}); ``NAME=`` is the default server.

    Example:
        parse_variant("alloff=TOKEN_JOURNEY_COALESCE=0,TOKEN_JOURNEY_LIGHT_FRAME_CHECK=0")
        -> ("alloff", {"TOKEN_JOURNEY_COALESCE": "0", "TOKEN_JOURNEY_LIGHT_FRAME_CHECK": "0"})
    """
    name, _, rest = text.partition("=")
    if not name:
        raise ValueError(f"--variant {text!r}: give it a name, e.g. on= or nocoalesce=TOKEN_JOURNEY_COALESCE=0")
    env = {}
    for item in (x for x in rest.split(",") if x):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--variant {text!r}: {item!r} is not KEY=VALUE")
        env[key] = value
    return name, env


SUMMARY_HEAD = f"{'server':<28} {'N':>3} {'n':>5} {'CPU ms/interaction':>18} {'p50 ms':>7} {'p95 ms':>7}  load"


def summary_row(name: str, n: int, stats: Stats, cpu_s: float, load: str) -> str:
    """One line of the end-of-run table: server CPU per served interaction (all of the server's
    CPU during the class, divided by the interactions that finished), p50 / p95 and the load."""
    lat = stats.latencies
    per = 1000 * cpu_s / len(lat) if lat else float("nan")
    return (f"{name:<28} {n:>3} {len(lat):>5} {per:>18.1f} {pct(lat, .5) * 1000:>7.0f} {pct(lat, .95) * 1000:>7.0f}  "
            f"{load}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", default="10", help="comma-separated class sizes, e.g. 10,30,60")
    parser.add_argument("--duration", type=float, default=20, help="seconds per class size (issue: >= 60)")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between one student's interactions")
    parser.add_argument("--servers", default="single", help="comma-separated: single, classroom, replicated")
    parser.add_argument("--replicas", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--url", help="use an already running server instead of starting one")
    parser.add_argument("--pid", type=int, default=0,
                        help="with --url: the server's process id (its CPU, children included, is reported)")
    parser.add_argument("--timeout", type=float, default=30, help="an interaction slower than this drops the student")
    parser.add_argument("--no-message-cache", action="store_true",
                        help="clients never send cached_message_hashes (every element in full; a browser sends them)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-only", action="store_true",
                        help="students pick only server controls (the old mix): never a knob answered in the browser")
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the started servers")
    parser.add_argument("--per-kind", action="store_true", help="also print p50/p95 per interaction kind")
    parser.add_argument("--window", type=float, default=0.0,
                        help="also print p50/p95/max per S-second slice of each class (is a long run's tail "
                             "spread over the run or a few bad moments?)")
    parser.add_argument("--with-training", action="store_true",
                        help="the Training page joins the mix (replay: model, step slider, target word, 'view the "
                             "app at step s', which then runs every page on that snapshot; never a live training job)")
    parser.add_argument("--snapshot-sweep", action="store_true",
                        help="before the classes, one session shows every Training snapshot of every built-in "
                             "(loads each snapshot model) and the RSS before/after is printed")
    parser.add_argument("--rss-warmup", type=float, default=0.0,
                        help="seconds of each class before the flatness check starts (the caches fill first)")
    parser.add_argument("--rss-every", type=float, default=0.0,
                        help="sample every replica's RSS every S seconds during each class and print the samples "
                             "and max/min (the 30-minute flat-RSS run: --students 30 --duration 1800 --rss-every 60)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=KEY=VALUE[,KEY=VALUE...]",
                        help="a server configuration (its own environment on top of --env); repeat it to compare "
                        "several side by side in one run, e.g. --variant on= --variant nocoalesce=TOKEN_JOURNEY_COALESCE=0")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="after the first visits, wait (at most S seconds) until the server is idle (under 5 %% "
                        "of a core for a second): its background start-up work is then not counted in the classes")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the whole list of servers (kinds x roots x variants) this many times, in turn "
                        "(ABAB: a change in the machine's load hits every configuration alike)")
    parser.add_argument("--roots", default="", help="NAME=PATH,...: run every server kind from each copy of the app "
                        "(e.g. before=/tmp/before,after=.) to compare before/after in one run")
    args = parser.parse_args()
    sizes = [int(x) for x in args.students.split(",") if x]
    env_extra = dict(item.split("=", 1) for item in args.env)
    print(f"# classroom bench: {args.duration:.0f} s per size, one interaction every {args.every:g} s per student; "
          f"{os.cpu_count()} cores; load {load_average()}", flush=True)
    kinds = ["external"] if args.url else [k for k in args.servers.split(",") if k]
    roots = [(name, Path(path).resolve()) for name, path in (r.split("=", 1) for r in args.roots.split(",") if r)] \
        or [("", ROOT)]
    variants = [parse_variant(v) for v in args.variant] or [("", {})]
    runs = [(kind, "/".join(x for x in (label, name) if x), root, variant_env)
            for _ in range(max(1, args.rounds)) for kind in kinds for label, root in roots
            for name, variant_env in variants]
    summary: list[str] = []
    for kind, label, root, variant_env in runs:
        server = Server("external", args.url.rstrip("/"), pid=args.pid) if args.url else \
            start_server(kind, args.replicas, {**env_extra, **variant_env}, root, label)
        try:
            if server.proc:
                print(f"# {server.name}: healthy after {server.started_s:.1f} s", flush=True)
            else:  # a server started elsewhere may still be starting (HAProxy answers 503 until a replica does)
                print(f"# {server.url}: healthy after {wait_healthy(server.url):.1f} s", flush=True)
            visits = asyncio.run(first_visits(server.url, args.timeout, not args.no_message_cache))
            if server.proc:
                # process start -> the Overview's first script_finished (its first visit right after health OK)
                cold = server.started_s + visits["overview"]
                print(f"# {server.name}: cold start to the Overview interactive {cold:.2f} s "
                      f"(healthy {server.started_s:.2f} s + first Overview run {visits['overview']:.2f} s)", flush=True)
            print(f"# {server.name}: first visits (ms) "
                  + ", ".join(f"{k or 'overview'} {v * 1000:.0f}" for k, v in visits.items()), flush=True)
            print(f"# {server.name}: RSS after the first visits "
                  + "/".join(f"{rss_mb(p):.0f}" for p in (server.replicas() or server.pids()[:1])) + " MB", flush=True)
            if args.settle > 0 and server.proc:
                waited = settle(server.pids, args.settle)
                print(f"# {server.name}: idle after {waited:.1f} s more", flush=True)
            if args.snapshot_sweep:
                before = [rss_mb(p) for p in (server.replicas() or server.pids()[:1])]
                started = time.perf_counter()
                shown = asyncio.run(snapshot_sweep(server.url, args.timeout))
                after = [rss_mb(p) for p in (server.replicas() or server.pids()[:1])]
                print(f"# {server.name}: snapshot sweep: {shown} snapshot steps shown in {time.perf_counter() - started:.1f} s; "
                      f"RSS {'/'.join(f'{r:.0f}' for r in before)} -> {'/'.join(f'{r:.0f}' for r in after)} MB", flush=True)
            for n in sizes:
                def server_pids(s: Server = server) -> list[int]:  # started here, or --url with --pid
                    return s.pids() or (tree(args.pid) if args.pid else [])

                cpu0 = cpu_seconds(server_pids())
                samples: list[tuple[float, list[float]]] = []
                cpu_samples: list[tuple[float, float | None, float]] = []
                class_started = time.perf_counter()
                sample = (lambda s=server: [rss_mb(p) for p in (s.replicas() or s.pids()[:1])]) if server.proc else None
                stats = asyncio.run(classroom(server.url, n, args.duration, args.every, args.timeout, args.seed,
                                              sample, args.rss_every, samples,
                                              (*PAGES, "training") if args.with_training else PAGES,
                                              (lambda: cpu_seconds(server_pids()))
                                              if server.proc or args.pid else None,
                                              cpu_sample_every(args.window), cpu_samples,
                                              not args.no_message_cache, not args.server_only))
                cpu1 = cpu_seconds(server_pids())
                rss = [rss_mb(p) for p in (server.replicas() or server.pids()[:1])]
                load = load_average()
                print(report(server, n, args.duration, args.every, stats, cpu1 - cpu0, rss, load), flush=True)
                print("    " + browser_line(stats), flush=True)
                summary.append(summary_row(server.name, n, stats, cpu1 - cpu0, load))
                if args.rss_every > 0:
                    for line in rss_summary(samples, args.rss_warmup):
                        print(line, flush=True)
                if stats.errors:
                    shown = sorted(set(stats.errors))[:5]
                    print("    first errors: " + " | ".join(shown), flush=True)
                if args.window > 0:
                    print(f"    latency per {args.window:g}-s slice of the class:", flush=True)
                    for line in window_lines(stats, class_started, args.window, cpu_samples):
                        print(line, flush=True)
                if args.per_kind:
                    drift = kind_drift(stats, class_started, args.window) if args.window > 0 else {}
                    for k, v in sorted(stats.by_kind.items()):
                        print(f"    {k:<40} n={len(v):<4} p50 {pct(v, .5) * 1000:6.0f} ms  p95 {pct(v, .95) * 1000:6.0f} ms"
                              + drift.get(k, ""), flush=True)
        finally:
            server.stop()
    if len(summary) > 1:
        print(f"# summary, in run order\n{SUMMARY_HEAD}", flush=True)
        for row in summary:
            print(row, flush=True)


if __name__ == "__main__":
    main()
