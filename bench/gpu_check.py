"""One script for a CUDA machine: unit tests on the GPU, CPU/GPU agreement, training speed-up.

    python bench/gpu_check.py [--skip-tests] [--steps 100]

1. Runs the model-core unit tests with ``TOKEN_JOURNEY_DEVICE=cuda`` (models built by the
   tests land on the GPU through ``core.engine.device.pick()``).
2. Loads each shipped preset on CPU and on CUDA and compares logits and every trace entry
   on a few prompts: they must agree within TOLERANCE (float32; different kernels sum in a
   different order, so bit equality is not expected).
3. Trains the classic preset's shape for a few steps on CPU and on CUDA and prints tokens/s
   and the speed-up.
4. Builds tiny Hugging Face checkpoints saved in bf16 / fp16 (Qwen2, GPT-2, Llama with GQA),
   runs them on CUDA in their own precision and compares with float32 on the CPU; traces must
   come back as float32 numpy, and KV-cached generation must run.

On a machine without CUDA it prints "no CUDA, skipped" and exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TOLERANCE = 1e-4  # max |cpu - cuda| on logits and on every trace entry (attention scores: finite ones)
PROMPTS = ["法国的首都是", "The capital of France is", "小明把苹果放进书包，因为它太甜了。它指的是"]
CORE_TESTS = [
    "tests/unit/test_model.py",
    "tests/unit/test_trace_names.py",
    "tests/unit/test_sampling.py",
    "tests/unit/test_generation.py",
    "tests/unit/test_gpt2_compat.py",
    "tests/unit/test_builtin_models.py",
    "tests/unit/test_hf_models.py",
]
HALF_TOLERANCE = 5e-2  # fp16 / bf16 on the GPU vs float32 on the CPU, relative to the largest logit (bf16: 8-bit mantissa)


def run_tests() -> bool:
    env = {**os.environ, "TOKEN_JOURNEY_DEVICE": "cuda"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *CORE_TESTS]
    print("1. unit tests on cuda:", " ".join(command[2:]))
    return subprocess.run(command, cwd=ROOT, env=env, check=False).returncode == 0


def compare_devices() -> bool:
    from core.engine.checkpoint import load_builtin

    print(f"\n2. cpu vs cuda traces (tolerance {TOLERANCE:g})")
    ok = True
    for name in ("classic", "modern"):
        cpu = load_builtin(name, device="cpu")
        gpu = load_builtin(name, device="cuda")
        worst, worst_name = 0.0, ""
        for prompt in PROMPTS:
            ids = cpu.tokenizer.encode(prompt)
            _, cpu_trace = cpu.model.run_with_trace(ids)
            _, gpu_trace = gpu.model.run_with_trace(ids)
            assert list(cpu_trace) == list(gpu_trace)
            for key, expected in cpu_trace.items():
                actual = gpu_trace[key]
                finite = np.isfinite(expected)
                if not np.array_equal(finite, np.isfinite(actual)):
                    worst, worst_name = float("inf"), key  # the causal -inf mask must be identical
                    continue
                diff = float(np.abs(actual[finite] - expected[finite]).max()) if finite.any() else 0.0
                if diff > worst:
                    worst, worst_name = diff, key
        passed = worst <= TOLERANCE
        ok &= passed
        print(f"   {name:8s} max |cpu - cuda| = {worst:.2e} at {worst_name}: {'ok' if passed else 'FAIL'}")
    return ok


def compare_foreign() -> bool:
    """A Hugging Face checkpoint saved in half precision: fp32 on the CPU, its own dtype on CUDA."""
    import tempfile

    from core.engine.generation import GenerationSettings, generate
    from core.foreign import load_hf_model
    from tests.hf_fixtures import build_checkpoint

    print(f"\n4. foreign checkpoints (half precision on cuda, relative tolerance {HALF_TOLERANCE:g})")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for family, dtype in (("qwen2", torch.bfloat16), ("gpt2", torch.float16), ("llama_gqa", torch.float16)):
            folder = build_checkpoint(Path(tmp) / family, family, dtype=dtype)
            cpu = load_hf_model(folder, device="cpu")
            gpu = load_hf_model(folder, device="cuda")
            ids = cpu.tokenizer.encode(PROMPTS[1] + " " + PROMPTS[0])
            cpu_logits, _ = cpu.model.run_with_trace(ids)
            gpu_logits, gpu_trace = gpu.model.run_with_trace(ids)
            dtypes = {v.dtype for v in gpu_trace.values() if v.dtype.kind == "f"}
            rel = float(np.abs(cpu_logits - gpu_logits).max() / max(1.0, np.abs(cpu_logits).max()))
            state, _ = generate(gpu.model, ids, None, GenerationSettings(temperature=0.0, max_new_tokens=4))
            passed = rel <= HALF_TOLERANCE and dtypes == {np.dtype(np.float32)} and len(state.generated_ids) == 4
            ok &= passed
            print(f"   {family:9s} run as {gpu.metrics['run_dtype']:8s} rel |cpu - cuda| = {rel:.2e}, "
                  f"trace dtypes {sorted(map(str, dtypes))}: {'ok' if passed else 'FAIL'}")
    return ok


def training_speedup(steps: int) -> None:
    from core.text.tokenizer import BPETokenizer
    from core.training.train import CORPUS_DIR, TrainSettings, preset_config, train_model

    tokenizer = BPETokenizer.load(CORPUS_DIR / "tokenizer")
    ids = tokenizer.encode((CORPUS_DIR / "train.txt").read_text(encoding="utf-8"))[:200_000]
    config = preset_config("classic", tokenizer.vocab_size)
    settings = TrainSettings(steps=steps, eval_interval=steps)
    print(f"\n3. training speed, classic shape, {steps} steps of {settings.batch_size} x {config.n_ctx} tokens")
    rates = {}
    for device in ("cpu", "cuda"):
        result = train_model(config, ids, ids[:5000], settings, device=device, progress=False)
        rates[device] = result.tokens_seen / result.seconds
        print(f"   {device:5s} {rates[device]:12,.0f} tokens/s ({result.seconds:.1f} s, {torch.get_num_threads()} cpu threads)")
    print(f"   speed-up cuda / cpu: {rates['cuda'] / rates['cpu']:.1f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="CUDA checks for the model core.")
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA, skipped")
        return 0
    print(f"CUDA device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    ok = True
    if not args.skip_tests:
        ok &= run_tests()
    ok &= compare_devices()
    ok &= compare_foreign()
    training_speedup(args.steps)
    print("\nall checks passed" if ok else "\nSOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
