"""Logits & sampling: from the last hidden state to a probability for every token, then a draw.

Sections (``ui.sections.logits_sampling``): the full-vocabulary softmax at the last position,
the sampling knobs and seeded draws (one fragment, with the knobs a fragment inside it), and
the logit lens.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import logits_sampling

page = open_page("logits_sampling")
last = logits_sampling.last_position(page)

logits_sampling.controls_section(page, last)
logits_sampling.lens_section(page)
try_this("logits_sampling.try_title", "logits_sampling.try_list")
check_yourself.card("logits_sampling", live=check_yourself.logits_live(page, last.logits))
