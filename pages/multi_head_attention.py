"""Multi-head attention on the live model: every head's pattern for the sidebar prompt, a
behaviour label per head, BertViz's head view, and the seeds' coreference example.

Sections (``ui.sections.multi_head_attention``). Values come straight from the model's trace
(``blocks.L.attn.hook_pattern`` and ``hook_attn_scores``); labels and probes from
``core.lessons.head_analysis``.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import multi_head_attention as mha

page = open_page("multi_head_attention", before_title=mha.prepare)
mha.model_line(page)

mha.heads_and_coreference(page)
try_this("multi_head_attention.try.title", "multi_head_attention.try.list")
check_yourself.card("multi_head_attention")
