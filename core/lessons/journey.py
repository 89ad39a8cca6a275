"""The journey picture's data: one forward pass turned into plain, JSON-able numbers.

The Overview's journey component (``ui/components/journey``) only draws; it never runs the
model (BertViz's rule: the view takes arrays, the caller runs the model). This module turns
a trace (``GPT.run_with_trace``), the tokens and the last position's logits into a dict of
lists, ints, floats and strings that the browser draws left to right:

    tokens → embedding rows → (+ position) → blocks (attention, MLP, residual) →
    final norm → logits → probabilities → the sampled token

Sizes stay small whatever the model: embedding rows are cut to their first numbers,
attention patterns are sent for every query position only while they fit a budget (else
for the last position, the one that predicts), and the vocabulary's logits are sent whole
up to ``max_logits`` ids, beyond which the rest is summarised as a histogram so the
browser's softmax still divides by (almost exactly) the whole vocabulary.

Example:
    logits, trace = model.run_with_trace(ids)
    data = journey_data(ids, tokens, logits, trace, model.config, vocab_label=lambda i: tok.decode([i]))
    data["layers"][0]["attn"][1]  # layer 0, head 1: rows = data["query_positions"], columns = keys
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from core.engine import names
from core.engine.numeric import softmax

EMBED_FIRST = 16  # numbers of each embedding row shown as a mini heatmap
TOP_SHOWN = 10  # probability bars
SAMPLE_POOL = 200  # tokens the browser may draw from (they get their strings)
MAX_LOGITS = 4096  # logits sent as-is; the rest of a larger vocabulary becomes a histogram
TAIL_BINS = 64
MAX_ROWS = 24  # token rows drawn: a longer prompt shows its last MAX_ROWS tokens
PATTERN_BUDGET = 40_000  # attention weights sent for every query row, all layers and heads
DIGITS = 5  # rounding of the numbers sent (the picture shows 3-4 significant digits)


def _r(values: np.ndarray) -> Any:
    """Round and turn into (nested) Python lists of floats."""
    return np.round(np.asarray(values, dtype=np.float64), DIGITS).tolist()


def _norms(x: np.ndarray) -> list[float]:
    """Euclidean norm of each row of [pos, d]."""
    return _r(np.linalg.norm(np.asarray(x, dtype=np.float64), axis=-1))


def journey_data(
    ids: Sequence[int],
    tokens: Sequence[str],
    logits: np.ndarray,
    trace: dict[str, np.ndarray],
    config: Any,
    vocab_label: Callable[[int], str],
    *,
    embed_first: int = EMBED_FIRST,
    sample_pool: int = SAMPLE_POOL,
    max_logits: int = MAX_LOGITS,
    pattern_budget: int = PATTERN_BUDGET,
    max_rows: int = MAX_ROWS,
) -> dict[str, Any]:
    """Everything the journey picture shows, as plain data.

    ``ids``/``tokens``: the prompt's token ids and their display strings (same length).
    ``logits``: [pos, vocab] (only the last row is used: it predicts the next token).
    ``trace``: names from ``core.engine.names``. ``config``: the model's ``GPTConfig``.
    ``vocab_label(id)``: the display string of any vocabulary id (for the top tokens).

    A prompt longer than ``max_rows`` tokens is drawn by its last ``max_rows`` tokens: every
    per-token list covers positions ``row_start`` .. n-1 (``row_start`` is in the dict), and
    attention rows keep only those keys (``attn_hidden`` holds the weight on earlier ones).
    """
    n = len(ids)
    if n == 0:
        raise ValueError("the journey needs at least one token")
    if len(tokens) != n:
        raise ValueError(f"{len(tokens)} token strings for {n} ids")
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or logits.shape[0] != n or logits.shape[1] != config.vocab_size:
        raise ValueError(f"logits must be [{n}, {config.vocab_size}], got {logits.shape}")
    last = logits[-1]
    if not np.isfinite(last).all():
        raise ValueError("the last position's logits are not all finite")

    d = config.d_model
    k = min(embed_first, d)
    start = max(0, n - max_rows)
    m = n - start  # rows drawn
    win = slice(start, n)
    embed = np.asarray(trace[names.HOOK_EMBED], dtype=np.float64)[win]
    rope = config.positional == "rope"
    pos = None if rope else np.asarray(trace[names.HOOK_POS_EMBED], dtype=np.float64)[win]
    resid0 = np.asarray(trace[names.act_name("resid_pre", layer=0)], dtype=np.float64)[win]

    # Attention: every drawn query row while it fits, else only the last (predicting) position.
    full_size = config.n_layer * config.n_head * m * m
    query_positions = list(range(m)) if full_size <= pattern_budget else [m - 1]  # window indices
    query_abs = [start + q for q in query_positions]

    layers = []
    for layer in range(config.n_layer):
        pattern = np.asarray(trace[names.act_name("pattern", layer=layer)], dtype=np.float64)[:, query_abs, :]
        layers.append({
            "resid_pre_norm": _norms(trace[names.act_name("resid_pre", layer=layer)][win]),
            "attn_out_norm": _norms(trace[names.act_name("attn_out", layer=layer)][win]),
            "resid_mid_norm": _norms(trace[names.act_name("resid_mid", layer=layer)][win]),
            "mlp_out_norm": _norms(trace[names.act_name("mlp_out", layer=layer)][win]),
            "resid_post_norm": _norms(trace[names.act_name("resid_post", layer=layer)][win]),
            # [head][query row][key]; keys after the query are exactly 0 (causal mask)
            "attn": _r(pattern[:, :, win]),
            "attn_hidden": _r(pattern[:, :, :start].sum(axis=-1)),  # [head][query row]
        })

    final = np.asarray(trace[names.LN_FINAL_NORMALIZED], dtype=np.float64)[win]

    # Logits of the last position, best first (lower id first among equal logits, as core.engine.sampling).
    order = np.lexsort((np.arange(last.size), -last))
    sent = order[: min(max_logits, last.size)]
    rest = order[sent.size:]
    tail: dict[str, Any] = {"count": int(rest.size), "bins": []}
    if rest.size:
        values = last[rest]
        edges = np.linspace(values.min(), values.max(), TAIL_BINS + 1)
        counts, _ = np.histogram(values, bins=edges)
        centres = (edges[:-1] + edges[1:]) / 2
        tail["bins"] = [[round(float(c), DIGITS), int(m)] for c, m in zip(centres, counts) if m]
    pool = sent[: min(sample_pool, sent.size)]

    probs = softmax(last)

    return {
        "model": {
            "n_layer": int(config.n_layer),
            "n_head": int(config.n_head),
            "d_model": int(d),
            "d_mlp": int(config.d_mlp),
            "vocab_size": int(config.vocab_size),
            "n_ctx": int(config.n_ctx),
            "positional": str(config.positional),
            "norm": str(config.norm),
            "mlp": str(config.mlp),
        },
        "n_tokens": n,
        "row_start": start,
        "tokens": [{"text": str(text), "id": int(i)} for text, i in list(zip(tokens, ids))[start:]],
        "embed": {"first": _r(embed[:, :k]), "norm": _norms(embed)},
        "pos": None if pos is None else {"first": _r(pos[:, :k]), "norm": _norms(pos)},
        "resid0": {"first": _r(resid0[:, :k]), "norm": _norms(resid0)},
        "query_positions": query_positions,
        "layers": layers,
        "final_norm": {"first": _r(final[:, :k]), "norm": _norms(final)},
        "logits": {
            "ids": [int(i) for i in sent],
            "values": _r(last[sent]),
            "labels": [str(vocab_label(int(i))) for i in pool],
            "tail": tail,
        },
        "top": [
            {"id": int(i), "label": str(vocab_label(int(i))), "logit": round(float(last[i]), DIGITS),
             "prob": round(float(probs[i]), DIGITS + 2)}
            for i in order[:TOP_SHOWN]
        ],
        "shapes": {
            "ids": [n],
            "embed": [n, int(d)],
            "pos": None if rope else [n, int(d)],
            "pattern": [int(config.n_head), n, n],
            "mlp_hidden": [n, int(config.d_mlp)],
            "final_norm": [n, int(d)],
            "logits": [int(config.vocab_size)],
        },
    }


def attention_focus(data: dict[str, Any], query: int, keys: Sequence[int]) -> dict[str, int] | None:
    """The (layer, head) whose ``query`` row puts the most weight on ``keys`` (the coreference demo).

    ``query`` and ``keys`` are prompt positions; the result's ``query`` is a drawn-row index
    (position - ``row_start``). Returns ``{"layer", "head", "query"}``, or None when the query
    row was not sent or no key is drawn. Ties go to the lowest layer, then the lowest head.

    Example: attention_focus(data, query=7, keys=[3, 6]) -> {"layer": 2, "head": 1, "query": 7}
    """
    start = data["row_start"]
    query -= start
    keys = [key - start for key in keys if key >= start]
    rows = data["query_positions"]
    if query not in rows or not keys:
        return None
    row = rows.index(query)
    best: tuple[float, int, int] | None = None
    for layer, block in enumerate(data["layers"]):
        for head, pattern in enumerate(block["attn"]):
            weight = sum(pattern[row][k] for k in keys)
            if best is None or weight > best[0]:
                best = (weight, layer, head)
    assert best is not None
    return {"layer": best[1], "head": best[2], "query": int(query)}
