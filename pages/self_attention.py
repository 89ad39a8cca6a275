"""Self-attention by hand: Q, K, V, scores, ÷√d_k, the causal mask, softmax and the weighted
sum on the seeds' "我 爱 你" numbers; a softmax lab; why ÷√d_k; multi-head vs one big head.

Sections (``ui.sections.self_attention``): one tab each, each a fragment (its controls rerun
that tab only). All numbers come from ``core.lessons.attention_math``.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import self_attention as sa

page = open_page("self_attention", runs_prompt=False, before_title=sa.prepare)

tab_steps, tab_lab, tab_dk, tab_mh = sa.tabs()
with tab_steps:
    sa.step_by_step(page.seed)
with tab_lab:
    sa.softmax_lab()
with tab_dk:
    sa.why_scale(page.seed)
with tab_mh:
    sa.multi_head(page.seed)

try_this("self_attention.try.title", "self_attention.try.list", **sa.toy_words())
check_yourself.card("self_attention", live=check_yourself.attention_live())
