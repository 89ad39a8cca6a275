"""Positional encoding: how a model that reads all tokens at once knows their order.

Sections (``ui.sections.positional_encoding``): the sinusoidal table (any d_model, length and
base) with its waves; one position's vector (the seeds' d = 8, pos = 3 row); the
relative-position property PE(pos + k) = M_k · PE(pos); token embedding + positional encoding =
the block input for the prompt; and RoPE, which rotates q and k instead, so that q·k depends
only on the offset.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import positional_encoding as pe

page = open_page("positional_encoding")

pe.sinusoidal_sections()  # with one position and the relative property (nested fragments)
pe.input_section(page)
pe.rope_section(page)
try_this("positional_encoding.try.header", "positional_encoding.try.list", as_header=True)
check_yourself.card("positional_encoding")
