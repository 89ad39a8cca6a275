"""Where one interaction's server CPU goes: py-spy samples a real server while one
protocol-level client (``bench/proto_client.py``) repeats that interaction.

A server is started as in ``bench/interactions.py`` (one Streamlit process, loopback), the
page is opened and warmed, then ``py-spy record`` (``requirements-dev.txt``) samples every
thread of the server while the widget is moved ``--repeats`` times (``--widget new_prompt``
sends a prompt never seen; ``--widget open`` reopens the page). Printed: the functions with
the most samples, inclusive (the time spent in them and what they call) and self, so the
cost of building a chart, styling it, serialising it and collecting garbage can be told
apart. Only server controls have a server cost to profile: a knob answered in the browser
(``proto_client.BrowserKnob``: temperature, the PE sliders, the head picker, ...) sends nothing,
and the bench says so (``bench/browser_latency.py`` times those in Chromium).

Run:  .venv/bin/python bench/profile_interaction.py --page multi_head_attention --widget mha_grid
      .venv/bin/python bench/profile_interaction.py --page positional_encoding --widget open --top 40
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classroom import PROMPTS, tree  # noqa: E402
from bench.interactions import start, wait_idle  # noqa: E402
from bench.proto_client import Session, new_value  # noqa: E402


async def drive(url: str, page: str, widget_key: str, repeats: int, seed: int, ready: asyncio.Event | None,
                go: callable) -> list[float]:
    rng = random.Random(seed)
    session = Session(url)
    await session.open(timeout=120)
    await session.go_to(page, timeout=120)
    await session.go_to(page, timeout=120)
    go()  # the profiler starts now: page opened and warm
    time.sleep(0.5)
    walls = []
    for i in range(repeats):
        if widget_key == "open":
            result = await session.go_to(page, timeout=60)
        elif widget_key == "new_prompt":
            prompt = next(w for w in session.widgets.values() if w.kind == "text_area" and w.key.endswith("prompt"))
            state = new_value(session, prompt, rng, PROMPTS)
            state.string_value = f"{rng.choice(PROMPTS)} {seed}{i}"
            result = await session.set_widget(prompt, state, timeout=60)
        else:
            widget = next((w for w in session.widgets.values() if w.key == widget_key), None)
            if widget is None and widget_key in session.knobs:
                raise SystemExit(f"{widget_key!r} on {page!r} is a knob answered in the browser: it costs the server "
                                 "nothing (bench/browser_latency.py times it)")
            if widget is None:
                raise SystemExit(f"no widget {widget_key!r} on {page!r}: {sorted(w.key for w in session.widgets.values())}")
            state = new_value(session, widget, rng, PROMPTS)
            result = await session.set_widget(widget, state, timeout=60)
        walls.append(result.seconds * 1000)
        if not result.ok:
            print("failed run:", result.status, result.exceptions[:2])
    await session.close()
    return walls


# Library entry points worth seeing next to our own functions (where a rerun's time goes).
LANDMARKS = ("_on_script_finished", "plotly_chart (", "vega_lite_chart (", "_enqueue (", "to_json", "BaseFigure.to_dict",
             "return_figure_from_figure_or_data", "convert_anything_to_arrow_bytes", "validate_jsonschema",
             "SchemaBase.to_dict", "BaseFigure.__init__", "style_plotly", "marshall", "dataframe (", "_write_to_self",
             "PollingPathWatcher", "compute_and_register_element_id")


def _function(frame: str) -> str:
    """'f (path/file.py:12)' -> 'f (path/file.py)': one row per function, not per line."""
    head, sep, where = frame.rpartition(" (")
    return f"{head} ({where.rsplit(':', 1)[0]})" if sep else frame


def report(raw: Path, top: int, ours: bool = False, per_rerun_ms: float = 0.0) -> None:
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_function(f) for f in stack.split(";")]
        if frames and frames[0].startswith("process") or frames and frames[0].startswith("thread"):
            frames = frames[1:]
        if any("select" in f and "selectors" in f or "epoll" in f for f in frames[-2:]):
            continue  # an idle event loop waiting for messages
        total += n
        for frame in set(frames):
            inclusive[frame] += n
        if frames:
            own[frames[-1]] += n
    print(f"# {total} busy samples" + (f"; one sample = {per_rerun_ms:.2f} ms per rerun" if per_rerun_ms else ""))
    unit = (lambda n: f"{n * per_rerun_ms:6.1f} ms") if per_rerun_ms else (lambda n: f"{100 * n / max(1, total):5.1f} %")
    print("## inclusive" + (" (our code and library landmarks)" if ours else ""))
    shown = [(f, n) for f, n in inclusive.most_common() if not ours or "(pages/" in f or "(ui/" in f or "(core/" in f
             or "pages/" in f.split("(")[-1][:7] or any(m in f for m in LANDMARKS)]
    for frame, n in shown[:top]:
        print(f"{unit(n)}  {frame[:150]}")
    print("## self")
    for frame, n in own.most_common(top // 2):
        print(f"{unit(n)}  {frame[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--page", required=True, help="url path of the page ('' or overview for the Overview)")
    parser.add_argument("--widget", required=True, help="widget key, or 'open' / 'new_prompt'")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--top", type=int, default=50)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--config", default="now", help="as in bench/interactions.py (NAME=PATH for another tree)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="every frame, not only ours and library landmarks")
    parser.add_argument("--gil", action="store_true", help="only samples of the thread holding the GIL (CPU, not waiting)")
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(ROOT / ".venv/bin/py-spy")
    page = "" if args.page == "overview" else args.page
    proc, url = start(args.config)
    raw = Path(tempfile.mkdtemp()) / "stacks.txt"
    recorder: list[subprocess.Popen] = []

    def go() -> None:
        wait_idle(tree(proc.pid))
        recorder.append(subprocess.Popen([spy, "record", "--pid", str(proc.pid), "--rate", str(args.rate), "--format", "raw",
                                          "--output", str(raw), "--threads", "--nonblocking", *(["--gil"] if args.gil else [])],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    try:
        walls = asyncio.run(drive(url, page, args.widget, args.repeats, args.seed, None, go))
    finally:
        for rec in recorder:
            rec.send_signal(2)  # SIGINT: py-spy writes what it has
            rec.wait(30)
        proc.terminate()
        proc.wait(20)
    walls.sort()
    print(f"# {args.page} {args.widget}: {len(walls)} reruns, wall median {walls[len(walls) // 2]:.0f} ms")
    report(raw, args.top, ours=not args.all, per_rerun_ms=1000 / args.rate / max(1, len(walls)))


if __name__ == "__main__":
    main()
