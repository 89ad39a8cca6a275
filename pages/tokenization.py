"""Tokenization: watch BPE learn merges on your own text, then see how the model cuts any text.

Sections (``ui.sections.tokenization``). Part 1 trains BPE once per (corpus, merges, mode) —
cached — and the browser replays the recorded trace at any step, with no round trip. Part 2
runs the live model's own tokenizer with a merge trace. All user text reaches the screen as
text (charts, data frames, code spans, the component's text nodes): never as HTML.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import tokenization

page = open_page("tokenization", runs_prompt=False)

part1, part2 = tokenization.tabs()
with part1:
    tokenization.bpe_part()
with part2:
    tokenization.model_part(page)
try_this("tokenization.try.title", "tokenization.try.list")
check_yourself.card("tokenization")
