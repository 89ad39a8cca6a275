"""The Tokenization page's BPE steps: a Streamlit components-v2 component (bundled JS, no CDN).

Python sends one recorded training once — every merge with its evidence, the most frequent
words' starting symbols, the corpus token curve — and the browser replays the merges
(``ui/components/frontend/src/bpe_replay.ts``, the same steps as ``core.text.tokenizer``) at
whatever step the student picks: the slider, the step buttons, Play and the arrow keys redraw
the page with no message to the server. The step's durable value is ``ui.state``'s
``tok_merge_step``: the browser keeps it in the address bar (so a link carries it) and adopts
the server's value when that changes (a link, a new training). The component sends nothing
back, so no value from the browser is read here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from core.text.bpe_view import pair_table, vocab_breakdown, vocab_id
from core.text.tokenizer import TrainResult
from ui.i18n import t
from ui.presenter import presenter_on
from ui.tokens import display_token

BUILD = Path(__file__).resolve().parents[1] / "frontend" / "build"
COMPONENT_NAME = "token_journey.bpe_steps"
KNOB = "tok_merge_step"
PAIRS_SHOWN = 12
TIES_SHOWN = 6
PLAY_MS = 800  # one merge per 0.8 s: slow enough to read the headline

# component label -> i18n key (the page's own strings)
LABELS: dict[str, str] = {
    "first": "tokenization.step.first", "back": "tokenization.step.back", "forward": "tokenization.step.forward",
    "last": "tokenization.step.last", "play": "tokenization.step.play", "pause": "tokenization.step.pause",
    "slider": "tokenization.step.slider", "valuetext": "tokenization.step.valuetext",
    "start": "tokenization.step.start", "merge": "tokenization.step.merge", "ties": "tokenization.step.ties",
    "chips_title": "tokenization.chips.title", "chips_x": "tokenization.chips.x", "chips_y": "tokenization.chips.y",
    "chips_caption": "tokenization.chips.caption", "token": "tokenization.token", "word": "tokenization.word",
    "frequency": "tokenization.frequency", "tokens_in_word": "tokenization.tokens_in_word",
    "vocab_id": "tokenization.vocab_id", "pairs_title": "tokenization.pairs.title",
    "pairs_title_next": "tokenization.pairs.title_next", "pairs_left": "tokenization.pairs.left",
    "pairs_right": "tokenization.pairs.right", "pairs_count": "tokenization.pairs.count",
    "pairs_status": "tokenization.pairs.status", "pairs_chosen": "tokenization.pairs.chosen",
    "pairs_tie": "tokenization.pairs.tie", "tie_rule": "tokenization.pairs.tie_rule",
    "merges_title": "tokenization.merges.title", "merges_none": "tokenization.merges.none",
    "vocab_title": "tokenization.vocab.title", "vocab_size": "tokenization.vocab.size",
    "vocab_summary": "tokenization.vocab.summary", "vocab_special": "tokenization.vocab.special",
    "vocab_bytes": "tokenization.vocab.bytes", "vocab_characters": "tokenization.vocab.characters",
    "vocab_merged": "tokenization.vocab.merged", "curve_title": "tokenization.curve.title",
    "curve_x": "tokenization.curve.x", "curve_total": "tokenization.curve.total",
    "curve_per_word": "tokenization.curve.per_word", "curve_caption": "tokenization.curve.caption",
    "curve_caption_start": "tokenization.curve.caption_start",
    "encode_chart": "tokenization.encode.chart", "encode_applied": "tokenization.encode.applied",
    "encode_no_merge": "tokenization.encode.no_merge", "encode_empty": "tokenization.encode.empty",
}


def _read(name: str) -> str:
    return (BUILD / name).read_text(encoding="utf-8")


_mount = st.components.v2.component(
    COMPONENT_NAME, js=_read("bpe_steps.js"), css=_read("bpe_steps.css"), isolate_styles=True,
)


def _merges(result: TrainResult) -> list[dict[str, Any]]:
    return [{
        "rank": m.rank, "left": m.pair[0], "right": m.pair[1], "new": m.new, "count": int(m.count),
        "n_tied": int(m.n_tied), "ties": [list(p) for p in m.ties[:TIES_SHOWN]],
        "pairs": [[r.left, r.right, r.count, r.status] for r in pair_table(m)[:PAIRS_SHOWN]],
    } for m in result.merges]


def _symbols_info(result: TrainResult, symbols: set[str]) -> tuple[dict[str, int], dict[str, str]]:
    """Each symbol's vocabulary id (where it has one) and its visible form (where it differs)."""
    ids = {s: i for s in symbols if (i := vocab_id(result.tokenizer, s)) is not None}
    show = {s: shown for s in symbols if (shown := display_token(s)) != s}
    return ids, show


def training_data(result: TrainResult, words: list[tuple[str, int, list[str]]], distinct: int) -> dict[str, Any]:
    """Everything the browser needs to show any step of ``result`` (labels excluded).

    ``words`` are the shown words with their starting symbols (``segmentation_at(0)``).
    """
    breakdown = vocab_breakdown(result.base_vocab, [], result.tokenizer.special_tokens)
    symbols = {*result.base_vocab, *(m.new for m in result.merges)} | {s for _, _, start in words for s in start}
    ids, show = _symbols_info(result, symbols)
    curve = result.token_count_curve()
    return {
        "merges": _merges(result),
        "words": [[display_token(w), int(f), list(start)] for w, f, start in words],
        "distinct": int(distinct),
        "encode": [],
        "base": list(result.base_vocab),
        "special": list(breakdown.special),
        "bytes": list(breakdown.byte_tokens),
        "ids": ids,
        "show": show,
        "curve": [int(v) for v in curve.tokens],
        "total_words": int(curve.num_words),
    }


def encode_data(result: TrainResult, encode: list[tuple[str, tuple[str, ...]]]) -> dict[str, Any]:
    """The encode box's words with their starting symbols (``encode_word(word, 0)``) and the merges."""
    symbols = {*(m.new for m in result.merges)} | {s for _, start in encode for s in start}
    ids, show = _symbols_info(result, symbols)
    return {"merges": _merges(result), "words": [], "distinct": 0, "base": [], "special": [], "bytes": [],
            "curve": [0], "total_words": 1, "encode": [[w, list(start)] for w, start in encode],
            "ids": ids, "show": show}


def labels() -> dict[str, str]:
    return {name: t(key) for name, key in LABELS.items()}


def bpe_steps(training: dict[str, Any], step: int, *, part: str, key: str, scope: str) -> None:
    """Mount one part: "steps" (``training_data``: the controls and the step view) or "encode"
    (``encode_data``: the encode box's split). ``step`` is the server's durable value (already
    checked), the default 0. ``scope`` names the corpus: a new corpus starts from the server's
    step (0 after a preset or an edit) however far the browser had moved.
    """
    data = {**training, "part": part, "knob": {"name": KNOB, "value": int(step), "default": 0, "scope": scope},
            "labels": labels(), "presenter": presenter_on(), "play_ms": PLAY_MS}
    _mount(key=key, data=data, width="stretch", height="content")
