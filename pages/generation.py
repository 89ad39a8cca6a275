"""Generation & KV cache: write text one token at a time and see what the cache saves.

Sections (``ui.sections.generation``): the generation loop with its KV cache (one fragment: its
knobs and buttons rerun only it) and the memory calculator (a fragment of its own).
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import generation

page = open_page("generation")
generation.warm_up(page.model_name)

generation.generation_section(page)
generation.memory_section(page)
try_this("generation.try_title", "generation.try_list")
check_yourself.card("generation", live=check_yourself.generation_live(page))
