"""Server time per interaction on the Embeddings page, and what a visit of the Embeddings and
Positional-encoding pages costs the server (target ≤ 200 ms per interaction).

The knobs these pages answer in the browser (the embedding map's "only categories" and PCA fit;
every positional-encoding slider, RoPE's m and n, layer and head) cost the server nothing:
``bench/browser_latency.py`` times them in Chromium (input event → redrawn, 0 frames). What is
left on the server is measured here. Three measurements, all with the built-in models:

1. ``server`` (the target): a real ``streamlit run`` of app.py whose script runner is wrapped
   to log how long every run takes — a whole-page run or a fragment rerun — while Chromium
   (Playwright) clicks, drags and types like a student on the Embeddings page's server
   controls. Each interaction's time is the sum of the runs it triggered. Every widget on
   these pages lives in an ``st.fragment``, so a change reruns only its own section. Also: a
   whole run of each page, warm (a visit).
2. ``apptest`` (an upper bound, ``--apptest``): a whole-page AppTest rerun after one change,
   as if there were no fragments.
3. ``core``: the computations behind the heavy pieces alone (PCA once per model, lookups).

Run:  .venv/bin/python bench/embeddings_pages.py [--model classic] [--repeat 3] [--apptest]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_MS = 200.0
CHROMIUM = "/usr/bin/chromium"

# Runs inside the server process: time every script run (full page or fragment).
SERVER_WRAPPER = r"""
import json, os, sys, time
import streamlit.runtime.scriptrunner.script_runner as runner
log = open(os.environ["TJ_BENCH_LOG"], "a", buffering=1)
original = runner.exec_func_with_error_handling
def timed(func, ctx):
    start = time.perf_counter()
    try:
        return original(func, ctx)
    finally:
        log.write(json.dumps({"ms": 1000 * (time.perf_counter() - start)}) + "\n")
runner.exec_func_with_error_handling = timed
from streamlit.web import cli
sys.argv = ["streamlit", "run", *sys.argv[1:]]
sys.exit(cli.main())
"""


def report(rows: list[tuple[str, list[float]]], title: str, *, judged: bool = True) -> bool:
    print(f"\n{title}")
    print(f"  {'interaction':<50} {'median ms':>10} {'max ms':>8}" + ("  ≤200" if judged else ""))
    ok_all = True
    for name, times in rows:
        median, worst = statistics.median(times), max(times)
        ok = median <= TARGET_MS
        ok_all &= ok
        mark = ("  ✓" if ok else "  ✗") if judged else ""
        print(f"  {name:<50} {median:>10.1f} {worst:>8.1f}{mark}")
    return ok_all


# --- 1. real server, real browser ----------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TimedServer:
    """``streamlit run app.py`` with every script run's duration appended to a log file."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.log_path = Path(tempfile.mkstemp(prefix="tj_bench_", suffix=".jsonl")[1])
        env = {**os.environ, "TJ_BENCH_LOG": str(self.log_path), "TOKEN_JOURNEY_DEVICE": "cpu"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER_WRAPPER, str(ROOT / "app.py"), "--server.headless", "true",
             "--server.fileWatcherType", "none", "--server.address", "127.0.0.1",
             "--server.port", str(self.port), "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.5)
        self.close()
        raise RuntimeError("the benchmark server did not start")

    def runs(self) -> list[float]:
        return [json.loads(line)["ms"] for line in self.log_path.read_text().splitlines() if line.strip()]

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log_path.unlink(missing_ok=True)


def _idle(page) -> None:
    page.wait_for_timeout(250)  # let the rerun request reach the server
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=120_000)
    page.wait_for_timeout(150)


def measure(server: TimedServer, page, action: Callable[[], object], repeat: int) -> list[float]:
    """Server milliseconds of the runs each repetition of ``action`` triggered."""
    times = []
    for _ in range(repeat):
        before = len(server.runs())
        action()
        deadline = time.time() + 20  # a busy machine may take a moment to start the run
        while len(server.runs()) == before and time.time() < deadline:
            page.wait_for_timeout(50)
        if len(server.runs()) == before:
            raise RuntimeError("the interaction triggered no run: the widget was not reached")
        _idle(page)
        settled = -1
        while settled != len(server.runs()):  # wait for any follow-up run (e.g. a callback's rerun)
            settled = len(server.runs())
            page.wait_for_timeout(300)
            _idle(page)
        times.append(sum(server.runs()[before:]))
    return times


def _select_option(page, key: str, option_text: str) -> None:
    """Open a select box, type to filter (long lists are virtualised), take the first match."""
    page.locator(f".st-key-{key}").click()
    page.keyboard.type(option_text)
    page.keyboard.press("Enter")


def bench_server(model: str, repeat: int) -> tuple[list[tuple[str, list[float]]], float, float]:
    from playwright.sync_api import sync_playwright

    server = TimedServer()
    rows: list[tuple[str, list[float]]] = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1440, "height": 1000}, locale="en-US")
            page.goto(server.url)  # the overview: loads the model once
            _idle(page)
            if model != "classic":
                _select_option(page, "w_model", model)
                _idle(page)

            start = len(server.runs())
            page.goto(f"{server.url}/embeddings")
            page.get_by_role("heading", name="Try this").wait_for(timeout=120_000)
            _idle(page)
            first_visit = sum(server.runs()[start:])
            before = len(server.runs())
            page.reload()
            page.get_by_role("heading", name="Try this").wait_for(timeout=120_000)
            _idle(page)
            warm_embeddings = sum(server.runs()[before:])

            def toggle(key: str) -> Callable[[], None]:
                return lambda: page.locator(f".st-key-{key} label").click()

            def slider_step(key: str) -> Callable[[], None]:
                """One step left, then one right, and so on (no slider here starts at its minimum)."""
                turn = iter(range(10**6))

                def step() -> None:
                    page.locator(f".st-key-{key}").get_by_role("slider").focus()
                    page.keyboard.press("ArrowLeft" if next(turn) % 2 == 0 else "ArrowRight")
                return step

            def choose(key: str, options: list[str]) -> Callable[[], None]:
                """Cycle through ``options`` (the first must differ from the widget's default)."""
                turn = iter(range(10**6))

                def pick() -> None:
                    _select_option(page, key, options[next(turn) % len(options)])
                return pick

            def type_into(key: str, values: list[str]) -> Callable[[], None]:
                """Cycle through ``values`` (the first must differ from the widget's default)."""
                turn = iter(range(10**6))

                def fill() -> None:
                    box = page.locator(f".st-key-{key} input")
                    box.fill(values[next(turn) % len(values)])
                    box.press("Enter")
                return fill

            rows += [
                ("embeddings · normalise toggle", measure(server, page, toggle("embeddings_lab_normalise"), repeat)),
                ("embeddings · worked pair", measure(server, page, choose(
                    "embeddings_lab_work_pair", ["apple – plane", "banana – plane", "apple – banana"]), repeat)),
                ("embeddings · neighbours: k", measure(server, page, slider_step("embeddings_nn_k"), repeat)),
                ("embeddings · neighbours: token", measure(server, page, choose(
                    "embeddings_nn_token", ["Berlin", "Rome", "Tokyo"]), repeat)),
                ("embeddings · analogy: c", measure(server, page, choose(
                    "embeddings_analogy_c", ["Italy", "Spain", "Japan"]), repeat)),
                ("embeddings · contextual: example", measure(server, page, choose(
                    "embeddings_context_preset", ["What", "The same"]), repeat)),
                ("embeddings · contextual: word", measure(server, page, type_into(
                    "embeddings_context_word", ["the", "is"]), repeat)),
            ]

            before = len(server.runs())
            page.goto(f"{server.url}/positional_encoding")
            page.get_by_role("heading", name="Try this").wait_for(timeout=120_000)
            _idle(page)
            warm_positional = sum(server.runs()[before:])

            browser.close()
    finally:
        server.close()
    print(f"\nFirst visit of Embeddings (model already loaded; includes the one-time PCA): {first_visit:.0f} ms")
    print(f"Full Embeddings page run, warm: {warm_embeddings:.0f} ms;"
          f" a visit of Positional encoding (its first, model loaded): {warm_positional:.0f} ms")
    return rows, warm_embeddings, warm_positional


# --- 2. AppTest whole-page reruns (upper bound) ----------------------------------------------


def bench_apptest(model: str, repeat: int) -> list[tuple[str, list[float]]]:
    import logging

    from streamlit.testing.v1 import AppTest

    # AppTest runs pages outside a server; Streamlit says so on every access. Not news here.
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("streamlit"):
            logging.getLogger(name).setLevel(logging.ERROR)

    def open_page(name: str):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.session_state["lang"] = "en"
        at.session_state["model"] = model
        at.run()
        at.switch_page(f"pages/{name}.py")
        at.run()
        return at

    def rerun_after(at, change: Callable[[object, int], object]) -> list[float]:
        times = []
        for i in range(repeat):
            change(at, i)
            start = time.perf_counter()
            at.run()
            times.append(1000 * (time.perf_counter() - start))
            if at.exception:
                raise RuntimeError([e.value for e in at.exception])
        return times

    emb = open_page("embeddings")
    pe = open_page("positional_encoding")
    return [
        ("embeddings · normalise toggle", rerun_after(
            emb, lambda a, i: a.toggle(key="embeddings_lab_normalise").set_value(i % 2 == 0))),
        ("embeddings · neighbours: token", rerun_after(
            emb, lambda a, i: a.selectbox(key="embeddings_nn_token").set_value(500 + i))),
        # (the map's toggles and every positional knob answer in the browser: no rerun to time)
        ("positional · whole page, nothing changed", rerun_after(pe, lambda a, i: None)),
    ]


# --- 3. core -------------------------------------------------------------------------------------


def bench_core(model: str, repeat: int) -> list[tuple[str, list[float]]]:
    import sklearn.decomposition  # noqa: F401  (import time is not PCA time)

    import core
    from core.lessons import positional, vectors

    def timed(action: Callable[[], object]) -> list[float]:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            action()
            times.append(1000 * (time.perf_counter() - start))
        return times

    loaded = core.load_builtin(model)
    matrix = loaded.model.embedding_matrix()
    ids = loaded.tokenizer.encode("The capital of France is")
    _, trace = loaded.model.run_with_trace(ids)
    q, k = positional.demo_query_key(32, seed=0)
    theta = positional.rope_frequencies(32)
    return [
        (f"PCA of the full table {matrix.shape} (once per model)", timed(lambda: vectors.pca_3d(matrix))),
        ("nearest neighbours (k = 10)", timed(lambda: vectors.neighbours_of_token(matrix, 100, k=10))),
        ("analogy a − b + c", timed(lambda: vectors.analogy(matrix, 1, 2, 3, k=8))),
        ("contextual similarity, all stages", timed(
            lambda: vectors.contextual_similarity(trace, trace, 2, 2, loaded.config.n_layer))),
        ("sinusoidal table 256 × 512", timed(lambda: positional.sinusoidal_table(256, 512))),
        ("relative check at d = 512", timed(lambda: positional.check_relative_position(3, 2, 512))),
        ("RoPE scores, 3 × 41 offsets", timed(lambda: positional.rope_scores_by_offset(q, k, theta, [20, 50, 100], 40))),
        ("forward pass with trace, 5 tokens", timed(lambda: loaded.model.run_with_trace(ids))),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("classic", "modern"), default="classic")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--apptest", action="store_true", help="also time whole-page AppTest reruns")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    report(bench_core(args.model, args.repeat), f"Core computations ({args.model})", judged=False)
    rows, _, _ = bench_server(args.model, args.repeat)
    ok = report(rows, f"Server time per interaction, real server + Chromium ({args.model})")
    if args.apptest:
        report(bench_apptest(args.model, args.repeat),
               f"Whole-page AppTest rerun after one change, no fragments ({args.model}; upper bound)", judged=False)
    print(f"\nevery interaction's median ≤ {TARGET_MS:.0f} ms: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
