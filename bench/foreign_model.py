"""Our core vs ``transformers`` on the same real-sized checkpoint (random weights, CPU).

    python bench/foreign_model.py [--models gpt2,qwen2] [--tokens 32] [--repeat 5] [--threads 1]

For a 124M-shaped GPT-2 and a 0.5B-shaped Qwen2 (Qwen2.5-0.5B's shape: 24 layers, d_model 896,
14 query heads sharing 2 K/V heads, vocabulary 151,936, bf16 on disk) the script saves a
random-weight checkpoint with ``save_pretrained`` into a temporary folder, then measures in
the same process, one after the other:

    load         ours: core.foreign.load_hf_model   theirs: AutoModelForCausalLM.from_pretrained(eager)
    first trace  ours: run_with_trace (every intermediate as numpy)
                 theirs: forward with output_attentions + output_hidden_states (eager attention)
    forward      plain logits, no trace / no extra outputs
    gen step     one cached decoding step (1 new token on a cache of the prompt)

Times are medians of ``--repeat`` runs (load: 3), ours and theirs alternating so that a busy
machine slows both alike. The acceptance bar is ours <= 1.2x
theirs. Nothing is downloaded; the folder is deleted at the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

BAR = 1.2


def shapes() -> dict[str, object]:
    from transformers import GPT2Config, Qwen2Config

    return {
        "gpt2": GPT2Config(n_layer=12, n_head=12, n_embd=768, n_positions=1024, vocab_size=50257),
        "qwen2": Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                             num_key_value_heads=2, max_position_embeddings=32768, vocab_size=151936,
                             rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True, dtype="bfloat16"),
    }


def save_random(folder: Path, family: str) -> Path:
    from transformers import AutoModelForCausalLM

    from tests.hf_fixtures import build_tokenizer

    config = shapes()[family]
    torch.manual_seed(0)
    with torch.device("cpu"):
        model = AutoModelForCausalLM.from_config(config)
    if family == "qwen2":
        model = model.to(torch.bfloat16)  # as the real checkpoint is stored
    model.save_pretrained(folder, safe_serialization=True)
    build_tokenizer(folder)  # a small tokenizer: ids stay below its size, the model's vocabulary is full size
    del model
    return folder


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def paired(ours, theirs, repeat: int) -> tuple[float, float]:
    """Medians of alternating runs (ours, theirs, ours, ...): a busy machine slows both alike."""
    mine, other = [], []
    for _ in range(repeat):
        mine.append(ours())
        other.append(theirs())
    return statistics.median(mine), statistics.median(other)


def clock(fn):
    def run() -> float:
        started = time.perf_counter()
        fn()
        return time.perf_counter() - started

    return run


def bench(family: str, tokens: int, repeat: int) -> list[tuple[str, float, float]]:
    from transformers import AutoModelForCausalLM, DynamicCache

    from core.foreign import load_hf_model

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = save_random(Path(tmp) / family, family)
        rows.append(("load", *paired(
            clock(lambda: load_hf_model(folder, device="cpu")),
            clock(lambda: AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)),
            3)))
        ours = load_hf_model(folder, device="cpu")
        theirs = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
        ids = [int(i) for i in torch.randint(0, 500, (tokens,), generator=torch.Generator().manual_seed(0))]
        batch = torch.tensor([ids])

        def their_trace() -> None:
            with torch.inference_mode():
                out = theirs(batch, output_attentions=True, output_hidden_states=True)
                out.logits.numpy()
                [a.numpy() for a in out.attentions]
                [h.numpy() for h in out.hidden_states]

        def their_forward() -> None:
            with torch.inference_mode():
                theirs(batch, use_cache=False).logits.numpy()

        def their_step() -> float:
            with torch.inference_mode():
                cache = DynamicCache(config=theirs.config)
                theirs(batch[:, :-1], past_key_values=cache, use_cache=True)
                started = time.perf_counter()
                theirs(batch[:, -1:], past_key_values=cache, use_cache=True).logits.numpy()
                return time.perf_counter() - started

        def our_step() -> float:
            with torch.inference_mode():
                _, past = ours.model(batch[:, :-1])
                started = time.perf_counter()
                ours.model(batch[:, -1:], past_kv=past)[0].numpy()
                return time.perf_counter() - started

        ours.model.run_with_trace(ids), their_trace()  # warm-up (allocator, kernels)
        rows.append(("first trace", *paired(clock(lambda: ours.model.run_with_trace(ids)), clock(their_trace), repeat)))
        rows.append(("forward", *paired(clock(lambda: ours.model.logits(ids)), clock(their_forward), repeat)))
        rows.append(("gen step", *paired(our_step, their_step, repeat)))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="gpt2,qwen2")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the server's default is 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    print(f"torch {torch.__version__}, {args.threads} thread(s), prompt {args.tokens} tokens, "
          f"median of {args.repeat}; load average {' '.join(load)}")
    ok = True
    for family in args.models.split(","):
        print(f"\n{family} ({'124M GPT-2 shape' if family == 'gpt2' else '0.5B Qwen2.5 shape, bf16 on disk'})")
        print(f"  {'':12s} {'ours':>10s} {'transformers':>13s} {'ratio':>7s}")
        for name, mine, theirs in bench(family, args.tokens, args.repeat):
            ratio = mine / theirs
            ok &= ratio <= BAR
            print(f"  {name:12s} {mine * 1e3:8.1f} ms {theirs * 1e3:10.1f} ms {ratio:6.2f}x {'ok' if ratio <= BAR else 'SLOWER'}")
    print(f"\nours <= {BAR}x transformers everywhere: {'yes' if ok else 'no'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
