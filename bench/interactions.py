"""Server CPU per rerun for each interaction, one student alone, before/after a server flag.

One protocol-level client (``bench/proto_client.py``) talks to a server started by the
bench; every interaction is sent, the bench waits for ``script_finished``, then reads the
server's CPU time from /proc (user + system, every thread: script, Streamlit's
serialisation, its garbage collection, the websocket). With one client the difference is
that interaction's whole server cost. Each page's controls (every slider, select, toggle,
number input and button the page shows, found from the deltas) are moved ``--repeats``
times, each time to a valid value different from the one it shows; the sidebar prompt and page changes are measured too.

Configurations (``--configs``): ``now`` (default server), ``nocoalesce``
(``TOKEN_JOURNEY_COALESCE=0``), ``fullgc`` (``TOKEN_JOURNEY_POST_RUN_FULL_GC_S=0``),
``framecheck`` (``TOKEN_JOURNEY_LIGHT_FRAME_CHECK=0``), ``nogc`` (``--runner.postScriptGC false``, for reference),
or ``NAME=PATH``: the default server started from another copy of the app (e.g. a snapshot
of the tree before a change), so before and after are measured side by side in one run; and
``--variant NAME=KEY=VALUE,...``: the default server with that environment (any switch).

Run:  .venv/bin/python bench/interactions.py [--configs nocoalesce,now] [--repeats 6] [--pages logits_sampling,...]
      .venv/bin/python bench/interactions.py --configs before=/tmp/before,now   # before/after
      .venv/bin/python bench/interactions.py --configs now --variant nocoalesce=TOKEN_JOURNEY_COALESCE=0
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import (PAGES, PROMPTS, SKIP_KEYS, cpu_seconds, free_port, load_average, parse_variant,  # noqa: E402
                             rss_mb, tree, wait_healthy)
from bench.proto_client import Session, WidgetState, new_value  # noqa: E402

CONFIGS = {
    "now": ({}, []),
    "nogc": ({}, ["--runner.postScriptGC", "false"]),
    # Each switch of docs/configuration.md's patches, off alone (serving.patches):
    "nocoalesce": ({"TOKEN_JOURNEY_COALESCE": "0"}, []),
    "fullgc": ({"TOKEN_JOURNEY_POST_RUN_FULL_GC_S": "0"}, []),  # Streamlit's full collection after every run
    "framecheck": ({"TOKEN_JOURNEY_LIGHT_FRAME_CHECK": "0"}, []),
}
TARGET_MS = 60.0


def wait_idle(pids: list[int], timeout: float = 180, quiet_s: float = 0.03) -> None:
    """Until the server used under ``quiet_s`` CPU seconds in one second (its start-up work done)."""
    end = time.monotonic() + timeout
    last = cpu_seconds(pids)
    while time.monotonic() < end:
        time.sleep(1)
        now = cpu_seconds(pids)
        if now - last < quiet_s:
            return
        last = now


def start(config: str, variants: dict[str, dict[str, str]] | None = None) -> tuple[subprocess.Popen, str]:
    root = ROOT
    if config in (variants or {}):  # --variant NAME=KEY=VALUE,...: the default server with that environment
        env_extra, flags = variants[config], []
    else:
        if "=" in config:  # NAME=PATH: another copy of the app, default settings
            root = Path(config.split("=", 1)[1]).resolve()
            config = "now"
        env_extra, flags = CONFIGS[config]
    port = free_port()
    env = {**os.environ, "TOKEN_JOURNEY_THREADS": "1", **env_extra}
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/python"), "-m", "streamlit", "run", "app.py", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none", *flags],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    wait_healthy(url)
    return proc, url


async def measure(url: str, pid: int, pages: list[str], repeats: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    """interaction name -> [(cpu_ms, wall_ms)] per rerun."""
    rng = random.Random(seed)
    pids = tree(pid)
    out: dict[str, list[tuple[float, float]]] = {}
    session = Session(url)
    await session.open(timeout=120)
    # warm every page once (first visits are their own metric, bench/classroom.py prints them)
    for page in pages:
        if page in session.pages:
            await session.go_to(page, timeout=120)
    await asyncio.to_thread(wait_idle, pids)  # background model loading / precomputation is not an interaction

    async def timed(name: str, action) -> None:
        c0 = cpu_seconds(pids)
        result = await action()
        c1 = cpu_seconds(pids)
        if result.ignored:  # a control of a section that is gone (proto_client.IGNORED_AFTER_S): no rerun
            return
        if result.ok:
            out.setdefault(name, []).append(((c1 - c0) * 1000, result.seconds * 1000))
        else:
            out.setdefault(name + " [failed]", []).append(((c1 - c0) * 1000, result.seconds * 1000))

    for page in pages:
        if page not in session.pages:
            continue
        label = page or "overview"
        for _ in range(repeats):
            await timed(f"{label}: open page", lambda: session.go_to(page, timeout=60))
        widgets = [w for w in session.widgets.values() if not any(s in w.key for s in SKIP_KEYS) and not w.sidebar]
        for widget in sorted(widgets, key=lambda w: w.key or w.id):
            name = f"{label}: {widget.kind} {widget.key or '(no key)'}"
            for _ in range(repeats):
                current = session.latest(widget)
                state = new_value(session, current, rng, PROMPTS) if current is not None else None
                if state is None:
                    break
                await timed(name, lambda: session.set_widget(current, state, timeout=60))
        prompt = next((w for w in session.widgets.values() if w.kind == "text_area" and w.key.endswith("prompt")), None)
        if prompt is not None:
            for i in range(repeats):
                state = WidgetState(id=prompt.id)
                state.string_value = f"{rng.choice(PROMPTS)} {seed}{i}{label}"  # a prompt never seen: a real forward
                await timed(f"{label}: new sidebar prompt", lambda: session.set_widget(prompt, state, timeout=60))
    await session.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default="now")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=KEY=VALUE[,KEY=VALUE...]",
                        help="one more configuration: the default server with this environment (as classroom.py's)")
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--pages", default=",".join(p or "overview" for p in PAGES))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pages = ["" if p == "overview" else p for p in args.pages.split(",") if p]
    variants = dict(parse_variant(v) for v in args.variant)
    configs = [c for c in args.configs.split(",") if c] + list(variants)
    labels = {c: c.split("=", 1)[0] for c in configs}
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    rss: dict[str, float] = {}
    print(f"# interactions bench: {args.repeats} reruns each; {os.cpu_count()} cores; load {load_average()}", flush=True)
    for config in configs:
        proc, url = start(config, variants)
        try:
            results[config] = asyncio.run(measure(url, proc.pid, pages, args.repeats, args.seed))
            rss[config] = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(20)
        print(f"# {labels[config]}: done, RSS {rss[config]:.0f} MB, load {load_average()}", flush=True)
    names = sorted({n for r in results.values() for n in r})
    head = "".join(f" | {labels[c] + ' CPU med/p95':>22} | {'wall med':>8}" for c in configs)
    print(f"{'interaction':<58}{head}")
    over = {c: 0 for c in configs}
    for name in names:
        row = f"{name[:58]:<58}"
        for c in configs:
            samples = results[c].get(name, [])
            if not samples:
                row += f" | {'-':>22} | {'-':>8}"
                continue
            cpu = sorted(s[0] for s in samples)
            wall = sorted(s[1] for s in samples)
            p95 = cpu[min(len(cpu) - 1, int(round(0.95 * (len(cpu) - 1))))]
            med = statistics.median(cpu)
            over[c] += med > TARGET_MS
            row += f" | {med:9.0f} / {p95:6.0f} ms | {statistics.median(wall):6.0f}ms"
        print(row)
    for c in configs:
        all_cpu = [s[0] for r in results[c].values() for s in r]
        print(f"# {labels[c]}: median CPU per rerun over all interactions {statistics.median(all_cpu):.0f} ms; "
              f"{over[c]} of {len(results[c])} interactions over {TARGET_MS:.0f} ms median; RSS {rss[c]:.0f} MB")
    print(f"# load {load_average()}")


if __name__ == "__main__":
    main()
