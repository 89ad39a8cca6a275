"""The browser's BPE replay (ui/components/frontend/src/bpe_replay.ts, as built) equals the Python
core at every step of random trainings: the Tokenization page draws any merge step from it.

Node runs the committed build (build/bpe_replay.js) on cases made here; the e2e test
(tests/e2e/test_tokenization.py) checks the page draws what it computes.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from core.text.bpe_view import vocab_sizes
from core.text.tokenizer import train_bpe

REPLAY = Path(__file__).resolve().parents[2] / "ui" / "components" / "frontend" / "build" / "bpe_replay.js"
RUNNER = """
import { readFileSync } from "node:fs";
const { replay, vocabSizes } = await import(process.argv[1]);
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.map((c) => ({
  steps: c.steps.map((n) => c.words.map((w) => replay(w, c.merges, n))),
  sizes: vocabSizes(c.base, c.merges.map((m) => m.new)),
}));
process.stdout.write(JSON.stringify(out));
"""


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (the e2e test still compares the page with core)")
    return node


def _corpus(rng: random.Random) -> str:
    pieces = ["lo", "w", "er", "est", "ne", "wi", "d", "a", "aa", "th", "e", "首", "都", "的", "🙂", "\u0301"]
    words = ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(3, 30))]
    return " ".join(rng.choices(words, k=rng.randint(5, 150)))


def test_replay_equals_core_at_every_step() -> None:
    node = _node()
    rng = random.Random(43)
    cases, expected = [], []
    for _ in range(24):
        corpus = _corpus(rng)
        mode = rng.choice(("classic", "gpt"))
        result = train_bpe(corpus, rng.randint(1, 60), mode)
        merges = [{"rank": m.rank, "left": m.pair[0], "right": m.pair[1], "new": m.new} for m in result.merges]
        steps = sorted({0, len(merges), *rng.sample(range(len(merges) + 1), min(8, len(merges) + 1))})
        starts = [list(pieces) for _, _, pieces in result.segmentation_at(0)]
        extra = ["lowest", "newer", " widest", "首都的"]  # words training never saw: the encode box
        start_extra = [list(result.encode_word(w, 0).pieces) for w in extra]
        cases.append({"words": starts + start_extra, "merges": merges, "steps": steps, "base": result.base_vocab})
        want = []
        for n in steps:
            corpus_pieces = [pieces for _, _, pieces in result.segmentation_at(n)]
            encoded = [result.encode_word(w, n) for w in extra]
            want.append([(p, None) for p in corpus_pieces]
                        + [(list(e.pieces), [m.rank for m in e.merges]) for e in encoded])
        expected.append((want, vocab_sizes(result.base_vocab, [m.new for m in result.merges]), merges))
    run = subprocess.run([node, "--input-type=module", "-e", RUNNER, REPLAY.as_uri()], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=60, check=True)
    got = json.loads(run.stdout)
    for case, (want, sizes, merges) in zip(got, expected):
        assert case["sizes"] == sizes
        for step_got, step_want in zip(case["steps"], want):
            for word_got, (pieces, ranks) in zip(step_got, step_want):
                assert word_got["pieces"] == pieces
                if ranks is not None:  # the merges that fired: the encode box's list
                    assert [merges[k]["rank"] for k in word_got["fired"]] == ranks
