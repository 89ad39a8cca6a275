"""The journey's map: which pages exist, in which section, in which order."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageInfo:
    page_id: str  # also the i18n key suffix: nav.<page_id>
    path: str  # relative to the app root, as st.page_link wants it
    icon: str


# Sections mirror a token's journey. Section None = the top entry (Overview).
SECTIONS: tuple[tuple[str | None, tuple[PageInfo, ...]], ...] = (
    (None, (PageInfo("overview", "app.py", "🧭"),)),
    ("tokens", (
        PageInfo("tokenization", "pages/tokenization.py", "✂️"),
        PageInfo("embeddings", "pages/embeddings.py", "🧮"),
        PageInfo("positional_encoding", "pages/positional_encoding.py", "〰️"),
    )),
    ("attention", (
        PageInfo("self_attention", "pages/self_attention.py", "🔍"),
        PageInfo("multi_head_attention", "pages/multi_head_attention.py", "🧠"),
    )),
    ("block", (
        PageInfo("transformer_block", "pages/transformer_block.py", "🧱"),
        PageInfo("whole_model", "pages/whole_model.py", "🏗️"),
    )),
    ("output", (
        PageInfo("logits_sampling", "pages/logits_sampling.py", "🎲"),
        PageInfo("generation", "pages/generation.py", "🔁"),
    )),
    # After Output, like the textbook's order (stage 3, how the parameters are learned, follows
    # the architecture): the replay shows attention and embeddings learning, so it reads best
    # once a student has met them.
    ("training", (PageInfo("training", "pages/training.py", "🏋️"),)),
)


def page_exists(page: PageInfo) -> bool:
    """Whether the page's script is there (checked once per process: pages do not come and go
    while a server runs, and the sidebar asks on every rerun of every page)."""
    return _script_exists(page.path)


@lru_cache(maxsize=None)
def _script_exists(path: str) -> bool:
    return (ROOT / path).is_file()


def existing_sections() -> list[tuple[str | None, list[PageInfo]]]:
    """Sections with only the pages whose scripts exist; empty sections are dropped."""
    out: list[tuple[str | None, list[PageInfo]]] = []
    for section, pages in SECTIONS:
        present = [p for p in pages if page_exists(p)]
        if present:
            out.append((section, present))
    return out


def page_by_id(page_id: str) -> PageInfo:
    for _, pages in SECTIONS:
        for page in pages:
            if page.page_id == page_id:
                return page
    raise KeyError(page_id)
