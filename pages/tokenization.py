"""Tokenization: watch BPE learn merges on your own text, then see how the model cuts any text.

Sections (``ui.sections.tokenization``). Part 1 trains BPE once per (corpus, merges, mode) —
cached — and the step controls only re-render the recorded trace. Part 2 runs the live model's
own tokenizer with a merge trace. All user text reaches the screen through Altair charts, data
frames or markdown code spans: never as HTML.
"""

from __future__ import annotations

from ui.page import open_page, try_this
from ui.sections import tokenization

page = open_page("tokenization", runs_prompt=False)

part1, part2 = tokenization.tabs()
with part1:
    tokenization.bpe_part()
with part2:
    tokenization.model_part(page)
try_this("tokenization.try.title", "tokenization.try.list")
