"""The whole model: a parameter calculator tied to a config, the layer stack read through the
logit lens, and where the parameters sit (the FFN's ~2/3).

Sections (``ui.sections.whole_model``). Counting is ``core.lessons.param_count``; the lens grid
is ``core.lessons.logit_lens.logit_lens_grid``.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page
from ui.sections import whole_model

page = open_page("whole_model")

whole_model.calc_section(page)  # with the hand count and where the FFN takes ~2/3
whole_model.stack_section(page)
whole_model.textbook_table_section(page)
check_yourself.card("whole_model")
