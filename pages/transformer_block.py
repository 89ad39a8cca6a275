"""The transformer block: one layer drawn, the residual stream and its attribution, live ablation,
the normalisation lab, the FFN (activations, neurons, key-value memory) and a toy MoE router.

Sections (``ui.sections.transformer_block``). The layer and token pickers and every part they
feed are one fragment (``picked_sections``), drawn last into the slots the sections leave for
it: a pick reruns only those parts. All maths is in ``core.lessons.block`` and
``core.engine.model``.
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page
from ui.sections import transformer_block as tb

page = open_page("transformer_block")
view = tb.block_view(page)

slots = {"layer": tb.layer_section(view)}
slots["resid"] = tb.residual_section(view)
tb.ablation_and_gradients(view)
slots["live_norm"] = tb.norm_section(view)
slots["ffn"] = tb.ffn_section(view)
slots["moe"] = tb.moe_section(view)
tb.picked_sections(view, slots)
check_yourself.card("transformer_block")
