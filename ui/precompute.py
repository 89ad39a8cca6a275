"""What the pages need from each model, computed once when the model loads, shared read-only.

``ui.resources.APP`` hands these to start-up, which registers them as precompute hooks of the model registry:
it runs on the loading thread right after a model is loaded (both built-ins load at server
start), before any student asks, and its result is frozen (arrays read-only) and shared by
every session. Pages read the results with ``ui.resources.shared(model, key)``; a page that
asks before the hook has finished waits for that one computation instead of repeating it.

- ``embeddings.table``: the whole embedding table, its two 3-D PCA projections and every
  token's display label and corpus category (the Embeddings page's map, neighbours, analogies).
- ``prompts.presets``: the forward pass (trace) of every sidebar preset prompt, so the first
  visit of each page with the default or a preset prompt finds its trace ready (models every
  session can pick only: a Training snapshot or a live-trained model runs just its own prompts).

``AFTER_START`` are computed for the built-ins only, once both are loaded, prepared and the heap
frozen (``serving.startup``), so the first Overview does not wait for them:

- ``block.neuron_index``: the Transformer block page's top-firing corpus positions of every
  neuron (~1 s per model); any other model builds it on the page's first use, under the same key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.lessons import vectors
from serving.caches import FrozenList
from ui.tokens import display_token

EMBEDDINGS_TABLE = "embeddings.table"
PRESET_RUNS = "prompts.presets"
NEURON_INDEX = "block.neuron_index"  # the key pages/transformer_block.py reads with shared()
MAX_PCA_VOCAB = 60_000  # a larger table is projected when a page first asks, not at load


@dataclass(frozen=True)
class TableView:
    """The whole token-embedding table and what is derived from it once per model."""

    matrix: np.ndarray  # (vocab, d_model)
    projection: vectors.Projection  # directions fitted to every row (built-in models: every trained row)
    projection_categories: vectors.Projection  # directions fitted to the category words only
    labels: list[str]  # display form of every token, by id
    vocab: list[str]  # raw token strings, by id
    categories: list[str | None]  # category key of every token (None = other)
    # Built-in models: the ids that occur in the training text (metrics.json). The others are
    # common Han characters the tokenizer knows but training never used; their rows were never
    # trained as inputs, so the map leaves them out and the projection is fitted without them.
    trained: tuple[int, ...] | None = None


def _embedding_rows(model: Any) -> np.ndarray:
    """The token-embedding table as numpy: a view of the model's own float32 CPU weights (made
    read-only for the pages by ``freeze``; the shared model is never trained in this process),
    not a 3 MB copy per model and snapshot; other dtypes and devices: ``embedding_matrix()``'s copy."""
    weight = getattr(getattr(model, "wte", None), "weight", None)
    if weight is not None and str(weight.dtype) == "torch.float32" and weight.device.type == "cpu":
        return weight.detach().numpy()
    return model.embedding_matrix()


def embeddings_table(loaded: Any) -> TableView:
    """PCA of the full table (``core.lessons.vectors.pca_3d``) and per-token labels and categories."""
    from core.text.corpus import category_words

    matrix = _embedding_rows(loaded.model)
    vocab = loaded.tokenizer.vocab()
    categories = vectors.token_categories(vocab, category_words(None))
    listed = (loaded.metrics or {}).get("trained_token_ids")
    trained = tuple(int(i) for i in listed if 0 <= int(i) < len(vocab)) if isinstance(listed, list) else None
    seen = set(trained) if trained else None
    # Category words the training text never used (a variant such as "apple" without its space)
    # keep their random starting row: they are neither fitted nor drawn.
    words = [i for i, category in enumerate(categories) if category is not None and (seen is None or i in seen)]
    return TableView(
        matrix=matrix,
        projection=vectors.pca_3d(matrix, fit_rows=list(trained)) if trained and len(trained) >= 3 else vectors.pca_3d(matrix),
        projection_categories=vectors.pca_3d(matrix, fit_rows=words) if len(words) >= 3 else vectors.pca_3d(matrix),
        # Read-only lists: every Embeddings rerun passes them to memoised chart builders, which
        # then key them by identity instead of digesting ~6k strings again (serving.memo).
        labels=FrozenList(display_token(token) for token in vocab),
        vocab=FrozenList(vocab),
        categories=FrozenList(categories),
        trained=trained or None,
    )


def neuron_index(loaded: Any) -> Any:
    """Top-firing corpus positions of every neuron (``core.lessons.block.build_neuron_index``), once per model."""
    from core.lessons import block

    small = loaded.config.n_layer * loaded.config.d_mlp <= 8192  # our models: ~1 s; a GPT-2-sized one gets fewer texts
    return block.build_neuron_index(loaded.model, loaded.tokenizer, block.corpus_documents(240 if small else 40))


def hooks(run_prompt: Callable[[str, str], Any], name_of: Callable[[Any], str | None]) -> dict[str, Callable[[Any], Any]]:
    """The precompute hooks, given ``ui.resources.run_prompt`` and the registry name of a loaded
    model (both passed in: this module does not import ``ui.resources``)."""

    def table_if_small(loaded: Any) -> TableView | None:
        if loaded.config.vocab_size > MAX_PCA_VOCAB:
            return None  # the page computes it on first use (shared() with its own compute)
        return embeddings_table(loaded)

    def preset_runs(loaded: Any) -> int:
        from ui.presets import PROMPT_PRESETS

        name = name_of(loaded)
        done = 0
        for preset in PROMPT_PRESETS.values() if name else ():
            try:
                run_prompt(name, preset.text)  # fills the shared per-(model, prompt) cache
                done += 1
            except Exception:  # a prompt this model's tokenizer refuses: the page says so
                continue
        return done

    return {EMBEDDINGS_TABLE: table_if_small, PRESET_RUNS: preset_runs}


AFTER_START: dict[str, Callable[[Any], Any]] = {NEURON_INDEX: neuron_index}
