"""Forward-pass benchmarks, measured side by side in one run.

    python bench/forward.py [--repeats 200] [--threads 1]

1. Full trace of 64 tokens: our ``run_with_trace`` (every intermediate, as numpy) against
   transformers' GPT-2 in eager mode with ``output_attentions`` and ``output_hidden_states``,
   at an identical config and with identical weights (saved by transformers, loaded by us).
   The ratio core / transformers is the number to watch (goal <= 1.0).
2. Plain forward latency (no trace) of each shipped preset for 64 tokens.
3. Resident memory (RSS) of the process before and after loading the presets.

Timings are medians over interleaved repeats (core, reference, core, ...), so background
load on the shared CPU hits both sides alike.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.engine.checkpoint import load_builtin  # noqa: E402
from core.foreign import load_hf_weights  # noqa: E402
from core.engine.model import GPTConfig  # noqa: E402

N_TOKENS = 64


def rss_mib() -> float:
    """Current resident set size of this process in MiB (Linux /proc; falls back to the peak)."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def interleaved_ms(a: Callable[[], object], b: Callable[[], object], repeats: int) -> tuple[float, float]:
    times_a, times_b = [], []
    for _ in range(repeats):
        for fn, bucket in ((a, times_a), (b, times_b)):
            started = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - started)
    return statistics.median(times_a) * 1000, statistics.median(times_b) * 1000


def trace_vs_transformers(config: GPTConfig, repeats: int) -> tuple[float, float]:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    hf_config = GPT2Config(
        n_layer=config.n_layer, n_head=config.n_head, n_embd=config.d_model, n_positions=config.n_ctx,
        vocab_size=config.vocab_size, n_inner=config.d_mlp, activation_function="gelu_new",
        bos_token_id=0, eos_token_id=0,
    )
    with tempfile.TemporaryDirectory() as folder:
        GPT2LMHeadModel(hf_config).save_pretrained(folder, safe_serialization=True)
        reference = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager").eval()
        ours = load_hf_weights(folder, device="cpu")
    ids = torch.randint(0, config.vocab_size, (N_TOKENS,), generator=torch.Generator().manual_seed(1))
    id_list = ids.tolist()
    batch = ids[None, :]

    def run_ours() -> object:
        return ours.run_with_trace(id_list)

    def run_reference() -> object:
        with torch.inference_mode():
            return reference(batch, output_attentions=True, output_hidden_states=True, use_cache=False)

    for _ in range(10):  # warm-up: first calls allocate
        run_ours()
        run_reference()
    return interleaved_ms(run_ours, run_reference, repeats)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (the app serves with few)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)

    rss_start = rss_mib()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {args.repeats} repeats, {N_TOKENS} tokens")

    vocab = load_builtin("classic", device="cpu").config.vocab_size  # the shipped tokenizer's size
    shape = GPTConfig.gpt2_like(n_layer=4, n_head=4, d_model=128, n_ctx=128, vocab_size=vocab)
    ours_ms, hf_ms = trace_vs_transformers(shape, args.repeats)
    print(f"\n1. full-trace forward, GPT-2 design at the presets' size (4 layers, d_model 128, vocab {vocab})")
    print(f"   core run_with_trace (numpy out)            {ours_ms:8.3f} ms")
    print(f"   transformers GPT-2 eager, attn + hidden    {hf_ms:8.3f} ms")
    print(f"   ratio core / transformers                  {ours_ms / hf_ms:8.3f}   (goal <= 1.0)")

    rss_before = rss_mib()
    print("\n2. shipped presets, 64 tokens")
    for name in ("classic", "modern"):
        loaded = load_builtin(name, device="cpu")
        ids = list(range(1, N_TOKENS + 1))
        for _ in range(10):
            loaded.model.logits(ids)
            loaded.model.run_with_trace(ids)
        plain = median_ms(lambda: loaded.model.logits(ids), args.repeats)
        traced = median_ms(lambda: loaded.model.run_with_trace(ids), args.repeats)
        print(f"   {name:8s} plain forward {plain:7.3f} ms   full trace {traced:7.3f} ms   params {loaded.model.num_params():,}")
    rss_after = rss_mib()
    print("\n3. resident memory")
    print(f"   this process: at start {rss_start:.1f} MiB, after the GPT-2 comparison {rss_before:.1f} MiB, "
          f"after loading both presets {rss_after:.1f} MiB (+{rss_after - rss_before:.1f} MiB)")
    for name in ("classic", "modern"):
        print(f"   fresh process, import core + load_builtin({name!r}) + one trace: {fresh_process_rss(name)}")


def fresh_process_rss(name: str) -> str:
    """RSS of a new Python process that does what the app does: import, load one preset, trace."""
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "def rss_mib():\n"
        "    return int(next(l for l in open('/proc/self/status') if l.startswith('VmRSS:')).split()[1]) / 1024\n"
        "a = rss_mib(); "
        "import core, torch; torch.set_num_threads(1); b = rss_mib(); m = core.load_builtin(%r); "
        "m.model.run_with_trace(m.tokenizer.encode('法国的首都是')); c = rss_mib(); "
        "print(f'{c:.1f} MiB (python {a:.1f}, +torch {b - a:.1f}, +model and trace {c - b:.1f})')"
    ) % (str(ROOT), name)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ, "TOKEN_JOURNEY_DEVICE": "cpu"})
    return done.stdout.strip()


if __name__ == "__main__":
    main()
