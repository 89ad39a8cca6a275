"""Server-time benchmarks for the output pages (Logits & sampling, Generation).

Targets from the issue: one generation step on the built-in model <= 50 ms server time; a
knob change on the Logits & sampling page re-renders in <= 200 ms.

What is timed (chart specs are memoised on their inputs, so every timed rerun uses knob
values not seen before: the charts that depend on them are really rebuilt):
  core   generation_step alone, as the page calls it on a "Next token" click (the cache is
         rebuilt from the ids first, then one cached forward and one full recompute are
         timed inside the step), and the knob path: sampling_steps + 1,000 seeded draws.
  page   a whole AppTest rerun (script + every chart) after a click or a slider move. This
         is an upper bound on server time: AppTest adds its own protobuf bookkeeping.

Run:  .venv/bin/python bench/output_pages.py [--model classic|modern] [--repeats 15] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import core  # noqa: E402
from core.engine.generation import GenerationSettings, generation_step, start_generation  # noqa: E402
from core.engine.sampling import sample, sampling_steps  # noqa: E402


def _summary(name: str, seconds: list[float], target_ms: float | None = None) -> None:
    ms = [s * 1000 for s in seconds]
    verdict = ""
    if target_ms is not None:
        verdict = "  OK" if statistics.median(ms) <= target_ms else "  OVER TARGET"
        verdict = f"  (target {target_ms:.0f} ms){verdict}"
    print(f"{name:<58} median {statistics.median(ms):8.2f} ms   max {max(ms):8.2f} ms   n={len(ms)}{verdict}")


def bench_core(model_name: str, repeats: int) -> None:
    loaded = core.load_builtin(model_name)
    ids = loaded.tokenizer.encode("法国的首都是")
    settings = GenerationSettings(temperature=1.0, top_p=0.9, seed=0, max_new_tokens=repeats)
    state = start_generation(loaded.model, ids, settings)
    generation_step(loaded.model, state, None)  # warm-up: PyTorch's first-call setup

    per_click, kept_cache, cached_fwd, full_fwd = [], [], [], []
    cache = None
    for _ in range(repeats):
        if state.finished:
            break
        started = time.perf_counter()
        state, report, _ = generation_step(loaded.model, state, None, None)  # a click: cache rebuilt
        per_click.append(time.perf_counter() - started)
        cached_fwd.append(report.seconds_cached)
        full_fwd.append(report.seconds_recompute)
    state = start_generation(loaded.model, ids, settings)
    for _ in range(repeats):
        if state.finished:
            break
        started = time.perf_counter()
        state, _, cache = generation_step(loaded.model, state, None, cache)  # "Generate": cache kept
        kept_cache.append(time.perf_counter() - started)

    _summary("core: generation_step per 'Next token' click", per_click, 50)
    _summary("core: generation_step inside 'Generate' (cache kept)", kept_cache, 50)
    _summary("core:   of which the cached forward (one new token)", cached_fwd)
    _summary("core:   of which the full recompute forward", full_fwd)

    logits = loaded.model.logits(ids)[-1]
    knob = []
    for i in range(repeats):
        started = time.perf_counter()
        steps = sampling_steps(logits, temperature=0.5 + 0.1 * i, top_k=None, top_p=0.9)
        sample(steps.final_probs, n=1000, seed=0)
        knob.append(time.perf_counter() - started)
    _summary(f"core: knob change (sampling_steps + 1,000 draws, vocab {logits.size})", knob)


def bench_pages(repeats: int) -> None:
    from tests.app.components import component_data, press
    from tests.app.conftest import open_page

    # The knobs move in the browser (no server run); "Draw" is the rerun that carries them.
    def draw(**knobs: float) -> None:
        press(at, "logits_sampling_knobs", {"kind": "draw", "knobs": knobs})

    def gen(kind: str) -> None:
        press(at, "generation_knobs", {"kind": kind, "knobs": {}})

    at = open_page("logits_sampling", lang="en", prompt="法国的首都是")
    at.run()  # caches warm
    # Every value is new, so charts that depend on the knob are rebuilt (never a cache hit).
    knob = []
    for i in range(repeats):
        value = round(0.3 + 0.1 * i, 2)
        started = time.perf_counter()
        draw(sampling_temperature=value)
        knob.append(time.perf_counter() - started)
        assert not at.exception, at.exception
    _summary("page: Logits & sampling rerun after 'Draw' with a new temperature", knob, 200)
    top_p = []
    for i in range(repeats):
        started = time.perf_counter()
        draw(sampling_top_p=round(0.95 - 0.05 * i, 2))
        top_p.append(time.perf_counter() - started)
    _summary("page: Logits & sampling rerun after 'Draw' with a new top-p", top_p, 200)

    at = open_page("generation", lang="en", prompt="法国的首都是")
    at.slider(key="generation_max_new").set_value(64).run()
    clicks = []
    for _ in range(repeats):
        if next(a["disabled"] for a in component_data(at, "generation_knobs")["actions"] if a["kind"] == "next"):
            gen("reset")
        started = time.perf_counter()
        gen("next")
        clicks.append(time.perf_counter() - started)
        assert not at.exception, at.exception
    _summary("page: Generation rerun after 'Next token' (whole page)", clicks)
    steps = at.session_state["gen_steps"]
    print(f"      page-measured forward times over {len(steps)} steps: cached median "
          f"{np.median([s['ms_cached'] for s in steps]):.2f} ms, recompute median "
          f"{np.median([s['ms_recompute'] for s in steps]):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="classic", choices=core.BUILTIN_PRESETS)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: as the app)")
    args = parser.parse_args()
    import os

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"torch threads: {torch.get_num_threads()}  model: {args.model}  load average (1 min): {load:.1f} "
          f"on {os.cpu_count()} CPUs")
    bench_core(args.model, args.repeats)
    bench_pages(args.repeats)


if __name__ == "__main__":
    main()
