"""Benchmark: our incremental BPE trainer vs a naive full-recount trainer vs HF tokenizers.

Run: .venv/bin/python bench/bpe.py [--merges 2000] [--naive-merges 40]

Text: 1 MB (UTF-8) made of half our generated bilingual corpus and half Python standard
library source (sorted by file name) - the corpus alone is too repetitive to allow 2,000
merges. All three trainers see the same pre-tokenized words (our gpt regex).

The naive trainer (Sennrich et al.'s reference loop: recount every pair of every distinct word
before each merge) is timed on the first ``--naive-merges`` merges and extrapolated linearly to
the full count (its per-merge cost barely changes as merges proceed); the output says so.
It is also used to check that both trainers pick the same merges.
Also times the Tokenization page's case: classic mode, 200 KB of corpus, 500 merges.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from anywhere

from core.text.bpe import merge_symbols  # noqa: E402
from core.text.corpus import build_corpus, cjk_lexicon  # noqa: E402
from core.text.pretokenize import build_gpt_pattern, split_gpt  # noqa: E402
from core.text.tokenizer import ENDOFTEXT, train_bpe  # noqa: E402

MB = 1_000_000


def bench_text(size: int = MB) -> str:
    corpus = build_corpus(0).train_text.replace(ENDOFTEXT, "")
    half = corpus.encode()[: size // 2].decode(errors="ignore")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code: list[str] = []
    total = 0
    for path in sorted(stdlib.glob("*.py")):
        src = path.read_text(encoding="utf-8", errors="replace")
        code.append(src)
        total += len(src.encode())
        if total >= size - len(half.encode()):
            break
    rest = "".join(code).encode()[: size - len(half.encode())].decode(errors="ignore")
    return half + rest


def naive_train(words: list[tuple[list[str], int]], num_merges: int) -> list[tuple[str, str]]:
    """Full recount of every pair before every merge; same tie rule as ours (first occurrence
    in the current corpus)."""
    segs = [list(s) for s, _ in words]
    merges = []
    for _ in range(num_merges):
        counts: Counter = Counter()
        first: dict = {}
        for wi, (s, (_, f)) in enumerate(zip(segs, words)):
            off = 0
            for p in zip(s, s[1:]):
                counts[p] += f
                if p not in first:
                    first[p] = (wi, off)
                off += len(p[0])
        if not counts:
            break
        best_count = max(counts.values())
        best = min((p for p, c in counts.items() if c == best_count), key=first.__getitem__)
        merges.append(best)
        segs = [merge_symbols(s, best, best[0] + best[1]) if len(s) > 1 else s for s in segs]
    return merges


def hf_train(text: str, num_merges: int, pattern: str, alphabet_size: int) -> float:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=alphabet_size + num_merges, min_frequency=0,
                                  show_progress=False, limit_alphabet=alphabet_size + 10)
    t0 = time.perf_counter()
    tok.train_from_iterator([text], trainer=trainer)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=2000)
    parser.add_argument("--naive-merges", type=int, default=40)
    args = parser.parse_args()

    text = bench_text()
    print(f"text: {len(text.encode()):,} bytes, {len(text):,} characters")

    t0 = time.perf_counter()
    ours = train_bpe(text, args.merges, mode="gpt", cjk_lexicon=cjk_lexicon())
    t_ours = time.perf_counter() - t0
    print(f"ours  (gpt mode, incremental): {len(ours.merges)} merges in {t_ours:.2f} s "
          f"({len(ours.words):,} distinct words)")

    pattern = build_gpt_pattern(cjk_lexicon())
    words = [(list(w), f) for w, f in Counter(split_gpt(text, pattern)).items()]
    k = min(args.naive_merges, args.merges)
    t0 = time.perf_counter()
    naive = naive_train(words, k)
    t_naive_k = time.perf_counter() - t0
    t_naive = t_naive_k / k * args.merges
    same = naive == [m.pair for m in ours.merges[:k]]
    print(f"naive (full recount): {k} merges in {t_naive_k:.2f} s -> extrapolated to "
          f"{args.merges}: {t_naive:.1f} s; same first {k} merges as ours: {same}")

    try:
        t_hf = hf_train(text, args.merges, pattern, len(ours.tokenizer.base_vocab))
        print(f"HF tokenizers BpeTrainer (Rust): {t_hf:.2f} s")
    except ImportError:
        t_hf = float("nan")
        print("HF tokenizers not installed: skipped")

    print(f"ratios: naive/ours = {t_naive / t_ours:.0f}x, ours/HF = {t_ours / t_hf:.1f}x")
    print(f"goals: ours <= 5 s: {'PASS' if t_ours <= 5 else 'FAIL'}; "
          f">= 20x faster than naive: {'PASS' if t_naive / t_ours >= 20 else 'FAIL'}")

    page = build_corpus(0).train_text.replace(ENDOFTEXT, " ")[:200_000]
    t0 = time.perf_counter()
    r = train_bpe(page, 500, mode="classic")
    t_page = time.perf_counter() - t0
    print(f"page case (classic, 200 KB, 500 merges): {len(r.merges)} merges in {t_page:.2f} s "
          f"({'PASS' if t_page <= 3 else 'FAIL'} <= 3 s)")


if __name__ == "__main__":
    main()
