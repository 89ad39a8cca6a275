"""Speed of the tokenization page: BPE training on a 200 KB corpus, and what a retraining costs
the server.

Target (issue W1-D): a 200 KB uploaded corpus with 500 merges trains in <= 3 s. Stepping
through the merges (the slider, the step buttons, Play) answers in the browser from the trace
sent once (``ui/components/bpe_steps``): no server time at all; its input → redrawn latency is
``bench/browser_latency.py``'s "tokenization: BPE merge step" row. This bench prints the size of
that trace instead (what one training costs the student's download).

Run:  .venv/bin/python bench/tokenization_page.py [--repeats 3]     (about a minute on 2 cores)

What is measured:
1. ``train_bpe(corpus, 500, mode)`` on two deterministic 200 KB corpora: Zipf-distributed
   invented words (many distinct words, the hard case) and the model's own generated corpus.
2. The page itself in AppTest: the Zipf corpus is uploaded and 500 merges are trained; then the
   number of merges is changed (each change retrains: the server control a student uses here),
   each a full server-side rerun of the page script, timed around the script run itself (wall
   clock and the script thread's CPU time); and the size of the merge trace the steps component
   receives. The model checkpoint must exist for Part 2 (the model's tokenizer) to be part of
   the rerun.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

torch.set_num_threads(1)

from core.text.tokenizer import train_bpe  # noqa: E402

TARGET_BYTES = 200 * 1024
MERGES = 500


def zipf_corpus(n_bytes: int = TARGET_BYTES, seed: int = 0) -> str:
    """Invented words from common English syllables, drawn with Zipf frequencies."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ta", "ri", "so", "ve", "du", "pa", "te", "on", "er",
                 "in", "st", "qu", "ch", "ph", "ou", "ea", "ing", "ed", "ly", "re", "un"]
    lexicon = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(8000)]
    weights = [1 / (rank + 1) for rank in range(len(lexicon))]
    words: list[str] = []
    size = 0
    while size < n_bytes:
        batch = rng.choices(lexicon, weights, k=1000)
        words.extend(batch)
        size += sum(len(w) + 1 for w in batch)
    return " ".join(words).encode()[:n_bytes].decode(errors="ignore")


def model_corpus(n_bytes: int = TARGET_BYTES) -> str:
    from core.text.corpus import build_corpus

    return build_corpus(0, train_bytes=n_bytes + 4096, heldout_bytes=1024).train_text.encode()[:n_bytes].decode(
        errors="ignore")


def time_training(name: str, corpus: str, repeats: int = 3) -> None:
    for mode in ("classic", "gpt"):
        times, cpus = [], []
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            result = train_bpe(corpus, MERGES, mode)
            times.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
        print(f"train_bpe {name:>6} {len(corpus.encode()) / 1024:.0f} KB {mode:>7}: "
              f"wall best {min(times):.2f} s, median {statistics.median(times):.2f} s; "
              f"CPU median {statistics.median(cpus):.2f} s "
              f"({len(result.merges)} merges, {len(result.words)} distinct words)")


class ScriptTimer:
    """Times each run of the page script itself (server time, without AppTest's polling):
    wall-clock and the script thread's CPU time (the CPU figure is what a quiet machine's
    wall time would be; on our shared 2-core box other jobs stretch the wall time)."""

    def __init__(self) -> None:
        from streamlit.runtime.scriptrunner import script_runner

        self.runs: list[tuple[float, float]] = []
        original = script_runner.ScriptRunner._run_script

        def timed(runner, rerun_data):  # type: ignore[no-untyped-def]
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(runner, rerun_data)
            finally:
                self.runs.append((time.perf_counter() - wall, time.thread_time() - cpu))

        script_runner.ScriptRunner._run_script = timed

    def last(self) -> tuple[float, float]:
        return self.runs[-1]


def time_page(corpus: str) -> None:
    from tests.app.conftest import open_page

    timer = ScriptTimer()
    at = open_page("tokenization")
    at.number_input(key="tok_num_merges").set_value(MERGES).run()
    start = time.perf_counter()
    at.file_uploader(key="tok_upload").set_value(("bench.txt", corpus.encode(), "text/plain")).run()
    print(f"page: upload + train {MERGES} merges + first render: {time.perf_counter() - start:.2f} s")
    assert not at.exception, [e.value for e in at.exception]
    from tests.app.components import component

    trace = component(at, "tok_bpe_steps")
    size = len(trace.json.encode()) if trace.WhichOneof("data") == "json" else trace.ByteSize()
    print(f"page: the merge trace sent once for {MERGES} merges: {size / 1024:.0f} KiB (steps then cost no server time)")
    walls, cpus = [], []
    for merges in (450, 500, 300, 500, 250, 500):  # each a change: a new training of the uploaded corpus
        at.number_input(key="tok_num_merges").set_value(merges).run()
        assert not at.exception, [e.value for e in at.exception]
        wall, cpu = timer.last()
        walls.append(wall)
        cpus.append(cpu)
    print(f"page: merges changed (retrain), server time per rerun over {len(walls)} changes: "
          f"wall median {statistics.median(walls) * 1000:.0f} ms (max {max(walls) * 1000:.0f}), "
          f"script CPU median {statistics.median(cpus) * 1000:.0f} ms (max {max(cpus) * 1000:.0f})")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="trainings per corpus and mode (1: a smoke run)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    zipf = zipf_corpus()
    time_training("zipf", zipf, args.repeats)
    time_training("model", model_corpus(), args.repeats)
    time_page(zipf)


if __name__ == "__main__":
    main()
