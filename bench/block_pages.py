"""Every control on the two block pages: server time per rerun (median), against a 200 ms target.

What it measures: a real ``streamlit run`` server (started here, one torch thread) driven by
the protocol-level client of ``bench/proto_client.py`` (no browser). For each control the page
shows (found from the deltas the server sends: selects, multiselects, sliders, number inputs,
text inputs, radios, checkboxes, including the calculator's expander), the bench sets a fresh
valid value ``--repeats`` times and records (a) the server process's CPU time for that rerun
(user + system over every thread: the script or fragment, Streamlit's serialisation of the
deltas, its garbage collection, the websocket) and (b) the wall time until ``script_finished``.
Fragment controls rerun only their fragment, as in the browser. Both built-in models are
measured (picked in the sidebar first); opening each page is listed too, for reference (the
very first visit per model, which builds the neuron index once, is not timed).

Run:  .venv/bin/python bench/block_pages.py [--repeats 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import random  # noqa: E402

from bench.classroom import PROMPTS, SKIP_KEYS, cpu_seconds, load_average, rss_mb, tree  # noqa: E402
from bench.interactions import start  # noqa: E402
from bench.proto_client import Session, WidgetState, new_value  # noqa: E402

MODELS = ("classic", "modern")

PAGES = ["transformer_block", "whole_model"]
TARGET_MS = 200.0
# Free-text controls the generic client leaves alone: (page, key, values typed in turn).
TEXT_INPUTS = (("transformer_block", "tb_norm_x", ("1, 2, 3, 10", "0.2, 8.5, -3.1, 1.4", "-1 5 7", "x, y")),)


async def measure_model(url: str, pid: int, model: str, repeats: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    """One student on ``model`` (picked in the sidebar): every control of both pages, ``repeats`` times."""
    rng = random.Random(seed)
    pids = tree(pid)
    out: dict[str, list[tuple[float, float]]] = {}
    session = Session(url)
    await session.open(timeout=120)

    async def timed(name: str, action) -> None:
        c0 = cpu_seconds(pids)
        result = await action()
        c1 = cpu_seconds(pids)
        out.setdefault(name + ("" if result.ok else " [failed]"), []).append(((c1 - c0) * 1000, result.seconds * 1000))

    picker = next(w for w in session.widgets.values() if w.sidebar and w.kind == "selectbox"
                  and any(str(o).startswith(model) for o in w.proto.options))
    state = WidgetState(id=picker.id)
    state.string_value = next(str(o) for o in picker.proto.options if str(o).startswith(model))
    await session.set_widget(picker, state, timeout=120)
    for page in PAGES:
        await session.go_to(page, timeout=120)  # first visit (builds the neuron index once per model)
        for _ in range(repeats):
            await timed(f"{model} {page}: open page", lambda: session.go_to(page, timeout=60))
        widgets = [w for w in session.widgets.values() if not any(k in w.key for k in SKIP_KEYS) and not w.sidebar]
        for widget in sorted(widgets, key=lambda w: w.key or w.id):
            texts = next((v for p, k, v in TEXT_INPUTS if p == page and k == widget.key), None)
            for i in range(repeats):
                current = session.latest(widget)
                if current is None:
                    break
                if texts is not None:
                    state = WidgetState(id=current.id)
                    state.string_value = texts[i % len(texts)]
                else:
                    state = new_value(session, current, rng, PROMPTS)
                if state is None:
                    break
                await timed(f"{model} {page}: {widget.kind} {widget.key}", lambda: session.set_widget(current, state, timeout=60))
    await session.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"# block pages bench: {args.repeats} reruns per control; {os.cpu_count()} cores; load {load_average()}",
          flush=True)
    proc, url = start("now")
    try:
        results: dict[str, list[tuple[float, float]]] = {}
        for model in MODELS:
            results.update(asyncio.run(measure_model(url, proc.pid, model, args.repeats, args.seed)))
        rss = rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(20)
    print(f"{'control':<62} | {'CPU median':>10} | {'CPU max':>8} | {'wall median':>11} | {'≤ 200 ms':>8}")
    print("-" * 112)
    over = []
    for name in sorted(results):
        cpu = sorted(s[0] for s in results[name])
        wall = sorted(s[1] for s in results[name])
        med = statistics.median(cpu)
        control = not name.endswith("open page")
        verdict = ("yes" if med <= TARGET_MS else "NO") if control else "(ref)"
        if control and med > TARGET_MS:
            over.append(name)
        print(f"{name[:62]:<62} | {med:8.0f}ms | {cpu[-1]:6.0f}ms | {statistics.median(wall):9.0f}ms | {verdict:>8}")
    n_controls = sum(1 for n in results if not n.endswith("open page"))
    print(f"# {n_controls} controls; {len(over)} over {TARGET_MS:.0f} ms median server CPU"
          + (f": {', '.join(over)}" if over else "") + f"; RSS {rss:.0f} MB; load {load_average()}")


if __name__ == "__main__":
    main()
