"""ui.precompute: what every model's pages need, computed once at load, without extra copies."""

from __future__ import annotations

import numpy as np
import pytest

import core
from serving.caches import freeze
from ui import precompute


@pytest.fixture(scope="module")
def classic():
    return core.load_builtin("classic")


def test_the_embedding_table_is_a_read_only_view_of_the_weights(classic) -> None:
    view = freeze(precompute.embeddings_table(classic))
    weights = classic.model.wte.weight
    assert np.shares_memory(view.matrix, weights.detach().numpy())  # no 3 MB copy per model
    np.testing.assert_array_equal(view.matrix, classic.model.embedding_matrix())
    with pytest.raises(ValueError):
        view.matrix[0, 0] = 1.0
    logits, _ = classic.model.run_with_trace([1, 2, 3])  # the model still runs on its (shared) weights
    assert np.isfinite(logits).all()
    assert view.projection.coords.shape == (classic.config.vocab_size, 3)
    assert len(view.labels) == len(view.vocab) == len(view.categories) == classic.config.vocab_size


def test_preset_prompts_run_ahead_only_for_models_every_session_sees(classic) -> None:
    asked: list[tuple[str, str]] = []
    hooks = precompute.hooks(lambda name, text: asked.append((name, text)), lambda loaded: None)
    assert hooks[precompute.PRESET_RUNS](classic) == 0 and asked == []  # a session model: nothing ahead
    hooks = precompute.hooks(lambda name, text: asked.append((name, text)), lambda loaded: "classic")
    assert hooks[precompute.PRESET_RUNS](classic) > 0 and asked and all(n == "classic" for n, _ in asked)


def test_the_neuron_index_hook_is_the_transformer_block_pages_table(classic) -> None:
    from core.lessons import block

    assert precompute.NEURON_INDEX not in precompute.hooks(lambda *_: None, lambda _l: None)  # not at every load
    hooked = precompute.AFTER_START[precompute.NEURON_INDEX](classic)
    direct = block.build_neuron_index(classic.model, classic.tokenizer, block.corpus_documents(240))
    np.testing.assert_array_equal(hooked.acts, direct.acts)
    np.testing.assert_array_equal(hooked.doc, direct.doc)
    np.testing.assert_array_equal(hooked.pos, direct.pos)
