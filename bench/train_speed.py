"""Training speed of a preset on the CPU and (if present) on the GPU, in one run: tokens per second.

    .venv/bin/python bench/train_speed.py [--shape tiny] [--design classic] [--steps 40] [--batch 16] [--threads 1]

Each device trains the same preset (``core.training.train.shape_config``) on the bundled capitals text
for ``--steps`` steps after ``--warmup`` untimed steps (first-call costs: kernels, allocator);
tokens/s = steps x batch x n_ctx / seconds. On CUDA the training loop uses bfloat16 mixed
precision (``core.training.train.train_model``'s default there) and the bench also runs a bigger batch,
because a tiny model cannot fill a GPU at batch 16. Without CUDA it prints the CPU figure and
says that no GPU was found. The live-training goal: GPU >= 10x CPU for the same preset.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from serving.live_train import JobSpec, prepare_data  # noqa: E402
from core.engine.model import build_model  # noqa: E402
from core.training.train import TrainSettings, shape_config, train_model  # noqa: E402


def tokens_per_second(config, train_ids, held_ids, device: str, steps: int, batch: int, warmup: int) -> float:
    settings = TrainSettings(steps=warmup + steps, batch_size=batch, lr=1e-2, warmup_steps=1, eval_interval=10**6)
    marks: list[float] = []

    def on_progress(p) -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if p.step in (warmup, warmup + steps):
            marks.append(time.perf_counter())

    train_model(config, train_ids, held_ids[:2], settings, device=device, progress=False, on_progress=on_progress)
    return steps * batch * config.n_ctx / (marks[1] - marks[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="tiny")
    parser.add_argument("--design", default="classic")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer, train_ids, held_ids = prepare_data(JobSpec(shape=args.shape, design=args.design, steps=1))
    config = shape_config(args.shape, args.design, tokenizer.vocab_size)
    params = sum(p.numel() for p in build_model(config, device="cpu").parameters())
    print(f"# train speed: {args.shape} {args.design} ({params:,} params, "
          f"vocab {config.vocab_size:,}, ctx {config.n_ctx}), batch {args.batch}, {args.steps} timed steps, "
          f"{args.threads} CPU thread(s), torch {torch.__version__}")
    cpu = tokens_per_second(config, train_ids, held_ids, "cpu", args.steps, args.batch, args.warmup)
    print(f"cpu                       : {cpu:12,.0f} tokens/s")
    if not torch.cuda.is_available():
        print("no CUDA GPU found: CPU only (the GPU comparison needs a machine with CUDA)")
        return
    name = torch.cuda.get_device_name(0)
    gpu = tokens_per_second(config, train_ids, held_ids, "cuda", args.steps, args.batch, args.warmup)
    print(f"cuda (bf16 autocast)      : {gpu:12,.0f} tokens/s   {gpu / cpu:6.1f}x CPU   [{name}]")
    big = args.batch * 16
    gpu_big = tokens_per_second(config, train_ids, held_ids, "cuda", args.steps, big, args.warmup)
    print(f"cuda, batch {big:<4}         : {gpu_big:12,.0f} tokens/s   {gpu_big / cpu:6.1f}x CPU")
    verdict = "meets" if max(gpu, gpu_big) >= 10 * cpu else "misses"
    print(f"# GPU {verdict} the 10x goal (best {max(gpu, gpu_big) / cpu:.1f}x)")


if __name__ == "__main__":
    main()
