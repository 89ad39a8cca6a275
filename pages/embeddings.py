"""Embeddings: from token ids to vectors, and what the geometry of those vectors means.

Sections (``ui.sections.embeddings``): the lookup table (the prompt's rows of the embedding
matrix), a similarity lab on hand-editable vectors (the seeds' 苹果 / 香蕉 / 飞机), the model's
whole table in 3-D (PCA, coloured by the corpus' categories) with neighbours and analogies, and
contextual embeddings (one word's residual-stream vector in two prompts, layer by layer).
"""

from __future__ import annotations

from ui import check_yourself
from ui.page import open_page, try_this
from ui.sections import embeddings

page = open_page("embeddings")

embeddings.lookup_section(page)
embeddings.lab_section(page)
embeddings.map_section(page)
embeddings.context_section(page)
try_this("embeddings.try.header", "embeddings.try.list", as_header=True)
check_yourself.card("embeddings")
