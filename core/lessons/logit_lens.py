"""The logit lens: read the residual stream as if the model stopped after each layer.

The model's real prediction is ``lm_head(ln_f(residual after the last block))`` at the last
position. The logit lens (nostalgebraist, 2020) applies the same final norm and LM head to
the residual stream *earlier*: after the embedding, after block 0, after block 1, ... Each
gives a next-token distribution, so a student can watch the answer form layer by layer.
The last stage is, by construction, exactly the model's own output.

One lens, two views of it:

    logit_lens        one position (the last, on the Logits page): the top-k tokens per stage,
                      and how the model's final answer ranks at each stage
    logit_lens_grid   every position (the Whole-model page): the top-1 token per stage

Both read the same residuals (``stage_residuals``), go through the same ``lens_probs`` (final
norm + LM head, then ``core.engine.numeric.softmax``) and rank with the same tie rule.

They take the trace (plain numpy, ``core.engine.names`` keys) and the "final norm + LM head" as
a callable (``model.final_norm_and_unembed``), so they need no model internals and work with
any function of the same shape in tests.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from core.engine import names
from core.engine.numeric import softmax

EMBEDDING_STAGE = "embedding"  # the residual stream before block 0: token (+ position) embedding


@dataclass(frozen=True)
class LogitLens:
    """Top-k next tokens at each stage of the residual stream, for one position.

    Stage 0 is the embedding (``blocks.0.hook_resid_pre``); stage L + 1 is after block L
    (``blocks.L.hook_resid_post``).
    """

    position: int  # the position read (non-negative)
    stages: list[str]  # "embedding", "0", "1", ...: after which block
    top_ids: np.ndarray  # (stage, k) token ids, most probable first
    top_probs: np.ndarray  # (stage, k) their probabilities
    final_id: int  # the model's own top token (top of the last stage)
    final_id_probs: np.ndarray  # (stage,) probability of final_id at each stage
    final_id_ranks: np.ndarray  # (stage,) rank of final_id at each stage, 1 = top

    @property
    def first_stage_with_final_on_top(self) -> int:
        """Index of the earliest stage from which the final answer stays the top token."""
        on_top = self.final_id_ranks == 1
        stage = len(on_top) - 1
        while stage > 0 and on_top[stage - 1]:
            stage -= 1
        return stage


@dataclass(frozen=True)
class LensGrid:
    """The top-1 token at every stage and every position (the Whole-model page's grid)."""

    stages: tuple[str, ...]  # "embedding", "0", "1", ...
    top_ids: np.ndarray  # (stage, pos)
    top_probs: np.ndarray  # (stage, pos)


def _top_k_rows(probs: np.ndarray, k: int) -> np.ndarray:
    """The k most probable token ids per row, most probable first; the lower id first among
    equal probabilities. Partitions instead of sorting the whole vocabulary: a 150k-token
    foreign model would otherwise sort 150k floats per stage on every rerun."""
    if k == 1:
        return probs.argmax(axis=-1)[:, None]  # (row, 1); argmax takes the first maximum: the lower id
    vocab = probs.shape[-1]
    rows = []
    # the k-th largest value of each row: every top-k id has at least this probability
    thresholds = np.partition(probs, vocab - k, axis=-1)[:, vocab - k]
    for row, threshold in zip(probs, thresholds):
        candidates = np.flatnonzero(row >= threshold)  # ascending ids; more than k only on ties
        rows.append(candidates[np.lexsort((candidates, -row[candidates]))][:k])
    return np.stack(rows)


def _ranks_of(probs: np.ndarray, token_id: int) -> np.ndarray:
    """Rank (1 = top) of ``token_id`` in each row, with the same tie rule as _top_k_rows."""
    own = probs[:, token_id : token_id + 1]
    return 1 + (probs > own).sum(axis=1) + (probs[:, :token_id] == own).sum(axis=1)


def stage_residuals(trace: Mapping[str, np.ndarray], n_layer: int,
                    position: int | None = -1) -> tuple[list[str], np.ndarray]:
    """The residual stream at ``position`` after the embedding and after every block:
    (stage, d_model); ``position=None`` keeps every position: (stage, pos, d_model).

    Example: stage_residuals(trace, 2)[0] -> ["embedding", "0", "1"]
    """
    if isinstance(n_layer, bool) or not isinstance(n_layer, int) or n_layer < 1:
        raise ValueError(f"n_layer must be a positive int, got {n_layer!r}")
    wanted = [names.act_name("resid_pre", layer=0)] + [names.act_name("resid_post", layer=L) for L in range(n_layer)]
    missing = [name for name in wanted if name not in trace]
    if missing:
        raise ValueError(f"the trace lacks {missing[0]}; run the model with run_with_trace first")
    first = np.asarray(trace[wanted[0]])
    if first.ndim != 2:
        raise ValueError(f"expected residuals of shape [pos, d_model] for one prompt, got {first.shape}")
    n_pos = first.shape[0]
    stages = [EMBEDDING_STAGE] + [str(L) for L in range(n_layer)]
    if position is None:
        return stages, np.stack([np.asarray(trace[name]) for name in wanted])  # (stage, pos, d_model)
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not -n_pos <= position < n_pos:
        raise ValueError(f"position must be an int in [{-n_pos}, {n_pos}), got {position!r}")
    return stages, np.stack([np.asarray(trace[name])[position] for name in wanted])  # (stage, d_model)


def lens_probs(residuals: np.ndarray, unembed: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Next-token probabilities (float64) of ``unembed(residuals)``: [..., d_model] -> [..., vocab].

    Example: lens_probs(np.zeros((3, 4)), lambda x: x)[0] -> array([0.25, 0.25, 0.25, 0.25])
    """
    logits = np.asarray(unembed(residuals), dtype=np.float64)  # (..., vocab)
    if logits.shape[:-1] != residuals.shape[:-1]:
        raise ValueError(f"unembed must map {list(residuals.shape[:-1]) + ['d_model']} to "
                         f"{list(residuals.shape[:-1]) + ['vocab']}, got shape {logits.shape}")
    if not (np.isfinite(logits.max()) and np.isfinite(logits.min())):  # a NaN or ±inf reaches max or min: no big mask
        raise ValueError("the unembedded residuals contain NaN or infinity")
    return softmax(logits)


def logit_lens(
    trace: Mapping[str, np.ndarray],
    n_layer: int,
    unembed: Callable[[np.ndarray], np.ndarray],
    position: int = -1,
    k: int = 5,
) -> LogitLens:
    """Top-k tokens of ``unembed(residual)`` at one position, after each stage of the model.

    ``unembed`` maps residual vectors [..., d_model] to logits [..., vocab]; pass
    ``model.final_norm_and_unembed`` so every stage goes through the final norm and LM head.

    Example: logit_lens(trace, cfg.n_layer, model.final_norm_and_unembed).top_ids[-1, 0] -> the model's top token
    """
    stages, vectors = stage_residuals(trace, n_layer, position)
    probs = lens_probs(vectors, unembed)  # (stage, vocab)
    vocab = probs.shape[1]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= vocab:
        raise ValueError(f"k must be an int in [1, {vocab}], got {k!r}")
    top_ids = _top_k_rows(probs, int(k))  # (stage, k)
    final_id = int(top_ids[-1, 0])
    ranks = _ranks_of(probs, final_id)
    n_pos = np.asarray(trace[names.act_name("resid_pre", layer=0)]).shape[0]
    return LogitLens(
        position=int(position) % n_pos,
        stages=stages,
        top_ids=top_ids,
        top_probs=np.take_along_axis(probs, top_ids, axis=1),
        final_id=final_id,
        final_id_probs=probs[:, final_id],
        final_id_ranks=ranks.astype(int),
    )


def logit_lens_grid(trace: Mapping[str, np.ndarray], unembed: Callable[[np.ndarray], np.ndarray]) -> LensGrid:
    """The lens at every position: the top-1 token of every stage (lower id first among ties).

    Example: logit_lens_grid(trace, model.final_norm_and_unembed).top_ids[-1] -> the model's top token at each position
    """
    stages, residuals = stage_residuals(trace, names.n_layers_in(trace), position=None)  # (stage, pos, d_model)
    probs = lens_probs(residuals, unembed)  # (stage, pos, vocab)
    n_stage, n_pos, vocab = probs.shape
    top = _top_k_rows(probs.reshape(n_stage * n_pos, vocab), 1).reshape(n_stage, n_pos)  # (stage, pos)
    return LensGrid(tuple(stages), top, np.take_along_axis(probs, top[..., None], axis=-1)[..., 0])
