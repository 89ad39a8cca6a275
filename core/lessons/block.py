"""Inside one transformer block, and the block stack: the maths of the two "block" pages.

Pure numpy/torch on a trace (``core.engine.names`` keys) and a model's weights; nothing here
changes the model. Pieces:

- residual stream norms per layer (pre / mid / post) and the size of each sub-layer's write;
- direct logit attribution (DLA): the final residual is a sum of parts (embedding + position,
  every head's write through W_O, each attention bias, every MLP output); with the final
  norm's scale frozen at its actual value for this token, the norm is linear, so each part
  gets its own share of the logit and the shares add up to the real logit exactly;
- the textbook's normalisation examples (LayerNorm, RMSNorm, BatchNorm per feature);
- activation functions, neuron key-value memory (W_out row . W_U; top-firing corpus contexts);
- a toy mixture-of-experts router (a fixed random matrix, honestly a toy);
- the logit-lens grid lives in ``core.lessons.logit_lens`` (one lens for the Logits and Whole-model pages).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from core.engine import names
from core.engine.numeric import softmax  # re-exported: the block page reads block.softmax

CORPUS_PATH = Path(__file__).resolve().parents[2] / "assets" / "corpus" / "train.txt"
ENDOFTEXT = "<|endoftext|>"

# The textbook's LayerNorm example and its 3-sample table (LayerNorm vs BatchNorm).
TEXTBOOK_X = (0.2, 8.5, -3.1, 1.4)
TEXTBOOK_SAMPLES = ((0.2, 8.5, -3.1, 1.4), (1.1, 2.3, 4.2, -0.5), (3.0, 1.2, 0.8, 2.1))
TEXTBOOK_RELU_IN = (-3.0, -1.0, 0.0, 2.0, 5.0)


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.setflags(write=False)
    return array


def _layer_arg(layer: Any, n_layer: int) -> int:
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < n_layer:
        raise ValueError(f"layer must be an int in [0, {n_layer}), got {layer!r}")
    return int(layer)


def _get(trace: Mapping[str, np.ndarray], kind: str, layer: int | None = None) -> np.ndarray:
    name = names.act_name(kind, layer)
    if name not in trace:
        raise ValueError(f"the trace lacks {name}; run the model with run_with_trace first")
    array = np.asarray(trace[name])
    return array


# --- residual stream ---------------------------------------------------------------------


@dataclass(frozen=True)
class ResidualNorms:
    """L2 norms [layer, pos] of the stream before/between/after each block and of each write."""

    pre: np.ndarray
    mid: np.ndarray
    post: np.ndarray
    attn_out: np.ndarray
    mlp_out: np.ndarray

    def write_ratio(self) -> tuple[np.ndarray, np.ndarray]:
        """‖attn_out‖ / ‖resid_pre‖ and ‖mlp_out‖ / ‖resid_mid‖ per layer and position."""
        return self.attn_out / np.maximum(self.pre, 1e-12), self.mlp_out / np.maximum(self.mid, 1e-12)


def residual_norms(trace: Mapping[str, np.ndarray]) -> ResidualNorms:
    """Norms of the residual stream and of what each sub-layer adds, for one prompt.

    Example: residual_norms(trace).post.shape -> (n_layer, pos)
    """
    n_layer = names.n_layers_in(trace)

    def norms(kind: str) -> np.ndarray:
        return np.stack([np.linalg.norm(_get(trace, kind, L).astype(np.float64), axis=-1) for L in range(n_layer)])

    first = _get(trace, "resid_pre", 0)
    if first.ndim != 2:
        raise ValueError(f"expected [pos, d_model] arrays for one prompt, got {first.shape}")
    return ResidualNorms(*(norms(k) for k in ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out")))


# --- direct logit attribution ------------------------------------------------------------


@dataclass(frozen=True)
class Attribution:
    """The logit of one token at one position, split into the parts of the residual stream.

    kinds: "embed" (token + position), "head", "attn_bias", "mlp", "norm_bias" (the final
    norm's beta, LayerNorm only). ``values`` sum to ``logit`` (float64 arithmetic).
    """

    token_id: int
    position: int
    kinds: tuple[str, ...]
    layers: tuple[int | None, ...]
    heads: tuple[int | None, ...]
    values: np.ndarray  # (part,)
    logit: float  # the model's real logit for token_id at position
    scale: float  # the frozen divisor of the final norm: std (LayerNorm) or RMS (RMSNorm)
    norm: str  # "layernorm" | "rmsnorm"

    @property
    def total(self) -> float:
        return float(np.sum(self.values))

    def per_layer(self) -> dict[str, np.ndarray]:
        """Attention (heads + bias) and MLP totals per layer, and the embedding part."""
        n_layer = 1 + max(L for L in self.layers if L is not None)
        attn = np.zeros(n_layer)
        mlp = np.zeros(n_layer)
        embed = 0.0
        other = 0.0
        for kind, L, v in zip(self.kinds, self.layers, self.values):
            if kind in ("head", "attn_bias"):
                attn[L] += v
            elif kind == "mlp":
                mlp[L] += v
            elif kind == "embed":
                embed += v
            else:
                other += v
        return {"attn": attn, "mlp": mlp, "embed": np.array([embed]), "norm_bias": np.array([other])}


def _np(tensor: torch.Tensor | None) -> np.ndarray | None:
    return None if tensor is None else tensor.detach().cpu().numpy().astype(np.float64)


def direct_logit_attribution(model: Any, trace: Mapping[str, np.ndarray], token_id: int, position: int = -1) -> Attribution:
    """Split ``logit[position, token_id]`` into the residual stream's parts (the standard DLA).

    The final residual x is embed+pos + sum_L (sum_h head_{L,h} + b_O,L + mlp_L). The final
    norm divides by a scale s computed from x itself (std for LayerNorm, RMS for RMSNorm);
    freezing s at its actual value makes the norm linear in x. LayerNorm also subtracts the
    mean, which is linear too: each part loses its own mean. So each part c contributes
    ((c - mean(c)) / s * gamma) . W_U[token] (RMSNorm: (c / s * gamma) . W_U[token]), and
    beta . W_U[token] is left over as the norm's bias. The parts sum to the real logit.
    """
    cfg = model.config
    n_layer = cfg.n_layer
    first = _get(trace, "resid_pre", 0)
    if first.ndim != 2:
        raise ValueError(f"expected a trace of one prompt ([pos, d_model]), got {first.shape}")
    n_pos = first.shape[0]
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not -n_pos <= position < n_pos:
        raise ValueError(f"position must be an int in [{-n_pos}, {n_pos}), got {position!r}")
    pos = int(position) % n_pos
    if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)) or not 0 <= token_id < cfg.vocab_size:
        raise ValueError(f"token_id must be an int in [0, {cfg.vocab_size}), got {token_id!r}")
    with torch.no_grad():
        w_u = _np(model.lm_head.weight[int(token_id)])  # (d_model,)
        gamma = _np(model.ln_f.weight)
        beta = _np(getattr(model.ln_f, "bias", None))
        w_os = [_np(model.h[L].attn.c_proj.weight) for L in range(n_layer)]  # (d_model, n_head*d_head)
        b_os = [_np(model.h[L].attn.c_proj.bias) for L in range(n_layer)]
    kinds: list[str] = ["embed"]
    layers: list[int | None] = [None]
    heads: list[int | None] = [None]
    parts: list[np.ndarray] = [first[pos].astype(np.float64)]
    for L in range(n_layer):
        z = _get(trace, "z", L)[pos].astype(np.float64)  # (head, d_head)
        d_head = z.shape[-1]
        for h in range(z.shape[0]):
            parts.append(w_os[L][:, h * d_head:(h + 1) * d_head] @ z[h])
            kinds.append("head"), layers.append(L), heads.append(h)
        if b_os[L] is not None:
            parts.append(b_os[L])
            kinds.append("attn_bias"), layers.append(L), heads.append(None)
        parts.append(_get(trace, "mlp_out", L)[pos].astype(np.float64))
        kinds.append("mlp"), layers.append(L), heads.append(None)
    stack = np.stack(parts)  # (part, d_model)
    x = stack.sum(axis=0)
    eps = float(cfg.eps)
    if cfg.norm == "layernorm":
        centred = stack - stack.mean(axis=1, keepdims=True)
        scale = math.sqrt(float(np.mean((x - x.mean()) ** 2)) + eps)
    else:
        centred = stack
        scale = math.sqrt(float(np.mean(x ** 2)) + eps)
    values = (centred / scale * gamma) @ w_u
    if beta is not None:
        values = np.append(values, float(beta @ w_u))
        kinds.append("norm_bias"), layers.append(None), heads.append(None)
    logit = float(np.asarray(trace[names.UNEMBED_OUT])[pos, int(token_id)])
    return Attribution(int(token_id), pos, tuple(kinds), tuple(layers), tuple(heads), _frozen(values), logit, scale, cfg.norm)


# --- ablation helpers --------------------------------------------------------------------


def top_next(logits_row: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """Top-k token ids and probabilities of one logits row (lower id first among ties)."""
    probs = softmax(np.asarray(logits_row, dtype=np.float64))
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= probs.shape[-1]:
        raise ValueError(f"k must be an int in [1, {probs.shape[-1]}], got {k!r}")
    order = np.lexsort((np.arange(probs.shape[-1]), -probs))[:k]
    return order, probs[order]


def gradient_paths(depth: int = 48, factors: Sequence[float] = (0.9, 1.1)) -> dict[str, np.ndarray]:
    """The textbook's gradient arithmetic: factor**n through n plain layers, vs the +1 path.

    With y = x + F(x), dy/dx = 1 + F'(x): the product over layers always contains the term
    1 * 1 * ... * 1 (straight down the residual stream), so that path alone keeps 1.
    Example: gradient_paths(48)["0.9"][-1] -> 0.0064 (0.6 %); gradient_paths(48)["1.1"][-1] -> 97.0
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 1000:
        raise ValueError(f"depth must be an int in [1, 1000], got {depth!r}")
    n = np.arange(depth + 1, dtype=np.float64)
    out = {format(f, "g"): np.power(float(f), n) for f in factors}
    out["residual"] = np.ones(depth + 1)
    return out


# --- normalisation lab -------------------------------------------------------------------


@dataclass(frozen=True)
class NormSteps:
    mean: float  # 0 for RMSNorm (it does not subtract one)
    scale: float  # std (population, as LayerNorm) or RMS
    normalized: np.ndarray


def layer_norm(x: Sequence[float], eps: float = 0.0) -> NormSteps:
    """(x - mean) / sqrt(var + eps), var the population variance (divide by n), as LayerNorm does.

    Example: layer_norm([0.2, 8.5, -3.1, 1.4]).normalized -> [-0.366, 1.595, -1.146, -0.083]
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2 or not np.isfinite(arr).all():
        raise ValueError("x must be at least two finite numbers")
    mean = float(arr.mean())
    std = math.sqrt(float(np.mean((arr - mean) ** 2)) + eps)
    if std == 0.0:
        raise ValueError("all values are equal: the standard deviation is 0 (LayerNorm needs eps here)")
    return NormSteps(mean, std, (arr - mean) / std)


def rms_norm(x: Sequence[float], eps: float = 0.0) -> NormSteps:
    """x / sqrt(mean(x^2) + eps): RMSNorm skips the mean subtraction.

    Example: rms_norm([0.2, 8.5, -3.1, 1.4]).scale -> 4.58
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1 or not np.isfinite(arr).all():
        raise ValueError("x must be finite numbers")
    rms = math.sqrt(float(np.mean(arr ** 2)) + eps)
    if rms == 0.0:
        raise ValueError("all values are 0: the RMS is 0 (RMSNorm needs eps here)")
    return NormSteps(0.0, rms, arr / rms)


def normalize_table(samples: Sequence[Sequence[float]], axis: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(normalised table, means, stds): axis "sample" = LayerNorm (per row), "feature" = BatchNorm (per column)."""
    table = np.asarray(samples, dtype=np.float64)
    if table.ndim != 2 or min(table.shape) < 2 or not np.isfinite(table).all():
        raise ValueError("samples must be a finite table of at least 2 x 2")
    if axis not in ("sample", "feature"):
        raise ValueError(f"axis must be 'sample' or 'feature', got {axis!r}")
    ax = 1 if axis == "sample" else 0
    mean = table.mean(axis=ax, keepdims=True)
    std = np.sqrt(((table - mean) ** 2).mean(axis=ax, keepdims=True))
    if (std == 0).any():
        raise ValueError("a row or column has equal values: its standard deviation is 0")
    return (table - mean) / std, mean.ravel(), std.ravel()


@dataclass(frozen=True)
class TokenNormStats:
    """Per-token statistics of the residual before a norm and of the norm's output."""

    mean_in: np.ndarray
    std_in: np.ndarray
    rms_in: np.ndarray
    mean_out: np.ndarray
    std_out: np.ndarray
    rms_out: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray | None


def token_norm_stats(model: Any, trace: Mapping[str, np.ndarray], layer: int, which: str) -> TokenNormStats:
    """Mean, std and RMS per token before and after ln1 ("ln1") or ln2 ("ln2") of a layer, plus gamma/beta."""
    L = _layer_arg(layer, model.config.n_layer)
    if which not in ("ln1", "ln2"):
        raise ValueError(f"which must be 'ln1' or 'ln2', got {which!r}")
    before = _get(trace, "resid_pre" if which == "ln1" else "resid_mid", L).astype(np.float64)
    after = _get(trace, which, L).astype(np.float64)
    module = model.h[L].ln_1 if which == "ln1" else model.h[L].ln_2
    with torch.no_grad():
        gamma = _np(module.weight)
        beta = _np(getattr(module, "bias", None))

    def stats(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return a.mean(axis=-1), a.std(axis=-1), np.sqrt((a ** 2).mean(axis=-1))

    return TokenNormStats(*stats(before), *stats(after), gamma, beta)


# --- activations and the FFN -------------------------------------------------------------


ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "silu", "swiglu")


def activation(name: str, x: Any, up: float = 1.0) -> np.ndarray:
    """ReLU, GELU (exact, erf), GELU (tanh approximation), SiLU, or SwiGLU's SiLU(x) * up.

    Example: activation("relu", [-3, -1, 0, 2, 5]) -> [0, 0, 0, 2, 5]; activation("silu", [-3, 3]) -> [-0.142, 2.858]
    """
    arr = torch.as_tensor(np.asarray(x, dtype=np.float64))
    if name == "relu":
        out = torch.relu(arr)
    elif name == "gelu":
        out = F.gelu(arr, approximate="none")
    elif name == "gelu_tanh":
        out = F.gelu(arr, approximate="tanh")
    elif name == "silu":
        out = F.silu(arr)
    elif name == "swiglu":
        out = F.silu(arr) * float(up)
    else:
        raise ValueError(f"unknown activation {name!r}; one of {ACTIVATIONS}")
    return out.numpy()


def swiglu_hidden(d_model: int, multiple_of: int = 256, ffn_dim_multiplier: float | None = None) -> tuple[float, int]:
    """Llama's SwiGLU width: 2/3 of 4d, times an optional multiplier, rounded up to ``multiple_of``.

    Example: swiglu_hidden(4096) -> (10922.67, 11008) (Llama-2 7B); swiglu_hidden(4096, 1024, 1.3) -> (..., 14336)
    """
    raw = 2 * 4 * d_model / 3
    hidden = int(raw)
    if ffn_dim_multiplier is not None:
        hidden = int(ffn_dim_multiplier * hidden)
    return raw, multiple_of * ((hidden + multiple_of - 1) // multiple_of)


def mlp_activations(trace: Mapping[str, np.ndarray], layer: int) -> np.ndarray:
    """The MLP's hidden activations [pos, d_mlp] (after GELU, or after SiLU(gate) * up for SwiGLU)."""
    return _get(trace, "post", layer)


def top_neurons(post: np.ndarray, position: int, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """The k neurons with the largest |activation| at one position: (ids, activations)."""
    row = np.asarray(post, dtype=np.float64)[position]
    k = max(1, min(int(k), row.size))
    order = np.lexsort((np.arange(row.size), -np.abs(row)))[:k]
    return order, row[order]


@dataclass(frozen=True)
class NeuronTokens:
    up_ids: np.ndarray
    up_values: np.ndarray
    down_ids: np.ndarray
    down_values: np.ndarray


def neuron_output_tokens(model: Any, layer: int, neuron: int, k: int = 10) -> NeuronTokens:
    """The tokens one neuron's output row writes toward most: W_out[:, neuron] . W_U, top k up and down.

    This is the "value" half of the key-value view (direct path, final norm left out).
    """
    L = _layer_arg(layer, model.config.n_layer)
    d_mlp = model.config.d_mlp
    if isinstance(neuron, bool) or not isinstance(neuron, (int, np.integer)) or not 0 <= neuron < d_mlp:
        raise ValueError(f"neuron must be an int in [0, {d_mlp}), got {neuron!r}")
    with torch.no_grad():
        row = model.h[L].mlp.c_proj.weight[:, int(neuron)]  # (d_model,)
        scores = (model.lm_head.weight @ row).double().cpu().numpy()  # (vocab,)
    ids = np.arange(scores.size)
    up = np.lexsort((ids, -scores))[:k]
    down = np.lexsort((ids, scores))[:k]
    return NeuronTokens(up, scores[up], down, scores[down])


def corpus_documents(n: int = 240, path: Path = CORPUS_PATH) -> list[str]:
    """The first n documents of the bundled training corpus (split at <|endoftext|>)."""
    text = path.read_text(encoding="utf-8")
    docs = [d.strip() for d in text.split(ENDOFTEXT) if d.strip()]
    return docs[:n]


@dataclass(frozen=True)
class NeuronIndex:
    """For every layer and neuron, the k corpus positions where it fired most (read-only arrays).

    acts/doc/pos are [layer, d_mlp, k]; ``tokens[doc]`` are the token strings of a document.
    """

    acts: np.ndarray
    doc: np.ndarray
    pos: np.ndarray
    tokens: tuple[tuple[str, ...], ...]

    def contexts(self, layer: int, neuron: int, window: int = 6) -> list[tuple[float, int, str, str, str]]:
        """(activation, doc, left context, firing token, right context) for one neuron, strongest first."""
        out = []
        for a, d, p in zip(self.acts[layer, neuron], self.doc[layer, neuron], self.pos[layer, neuron]):
            toks = self.tokens[int(d)]
            out.append((float(a), int(d), "".join(toks[max(0, p - window):p]), toks[p], "".join(toks[p + 1:p + 1 + 2])))
        return out


NEURON_INDEX_BATCH = 8  # documents per forward pass (right-padded; causal, so padding changes nothing before it)


class _CapturedAll(Exception):
    """Raised by ``_OnlyNames`` once it holds every wanted intermediate: the rest of the forward
    pass (the last layers' outputs, the unembedding over the whole vocabulary) is not needed."""


class _OnlyNames(dict):
    """A trace dict that keeps only the named intermediates and stops the pass after the last one."""

    def __init__(self, wanted: Sequence[str]) -> None:
        super().__init__()
        self._wanted = frozenset(wanted)

    def __setitem__(self, key: str, value: Any) -> None:
        if key in self._wanted:
            super().__setitem__(key, value)
            if len(self) == len(self._wanted):
                raise _CapturedAll


def _top_k_last_axis(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values along the last axis, largest first; among equal values
    the lower index first (what a stable sort gives). The full stable sort of every candidate
    cost 0.8 s of the neuron index's 2 s; this sorts only the k winners of each row, and fully
    only the rows where a tie straddles the k-th place."""
    n = values.shape[-1]
    if n <= k:
        return np.argsort(-values, axis=-1, kind="stable")
    flat = values.reshape(-1, n)
    kth = np.partition(flat, n - k, axis=-1)[:, n - k:n - k + 1]  # each row's k-th largest value
    above = flat >= kth
    exact = above.sum(axis=-1) == k
    out = np.empty((flat.shape[0], k), dtype=np.intp)
    if exact.any():
        cols = np.nonzero(above[exact])[1].reshape(-1, k)  # the k winners of each row, by index
        winners = np.take_along_axis(flat[exact], cols, axis=-1)
        out[exact] = np.take_along_axis(cols, np.argsort(-winners, axis=-1, kind="stable"), axis=-1)
    if not exact.all():
        out[~exact] = np.argsort(-flat[~exact], axis=-1, kind="stable")[:, :k]
    return out.reshape(values.shape[:-1] + (k,))


def build_neuron_index(model: Any, tokenizer: Any, documents: Sequence[str], k: int = 5) -> NeuronIndex:
    """Run every document once and keep, per neuron, its k highest activations (one model, once).

    Each document is cut to the model's context. A position counts once per neuron; among equal
    activations the earlier document and position come first. Documents run in right-padded
    batches: attention is causal, so a real position never sees the padding after it, and only
    the MLP activations are kept (not the ~70 other intermediates a full trace holds).
    """
    cfg = model.config
    post_names = [names.act_name("post", L) for L in range(cfg.n_layer)]
    # Per layer, the best so far: activations (d_mlp, kept) and where they were (document, position).
    best_acts = [np.zeros((cfg.d_mlp, 0), dtype=np.float32) for _ in post_names]
    best_doc = [np.zeros((cfg.d_mlp, 0), dtype=np.int64) for _ in post_names]
    best_pos = [np.zeros((cfg.d_mlp, 0), dtype=np.int64) for _ in post_names]
    encoded = [tokenizer.encode(text)[: cfg.n_ctx] for text in documents]
    token_lists = tuple(tuple(tokenizer.decode([i]) for i in ids) for ids in encoded)
    present = [d for d, ids in enumerate(encoded) if ids]
    for start in range(0, len(present), NEURON_INDEX_BATCH):
        batch = present[start:start + NEURON_INDEX_BATCH]
        padded = np.zeros((len(batch), max(len(encoded[d]) for d in batch)), dtype=np.int64)
        for row, d in enumerate(batch):
            padded[row, :len(encoded[d])] = encoded[d]
        idx, _ = model.as_token_batch(padded)
        trace = _OnlyNames(post_names)
        with torch.inference_mode():
            try:
                model.forward(idx, trace=trace)
            except _CapturedAll:
                pass
        # Every real (not padding) position of the batch, in document order.
        rows = np.concatenate([np.full(len(encoded[d]), row) for row, d in enumerate(batch)])
        pos_of = np.concatenate([np.arange(len(encoded[d]), dtype=np.int64) for d in batch])
        doc_of = np.asarray(batch, dtype=np.int64)[rows]
        for L, name in enumerate(post_names):  # one layer at a time: small temporaries
            new = trace[name].float().cpu().numpy()[rows, pos_of, :].T  # (d_mlp, positions)
            kept = best_acts[L].shape[-1]
            candidates = np.concatenate([best_acts[L], new], axis=-1)
            order = _top_k_last_axis(candidates, k)
            is_new = order >= kept
            new_at = np.where(is_new, order - kept, 0)
            old_at = np.where(is_new, 0, order) if kept else None
            best_acts[L] = np.take_along_axis(candidates, order, axis=-1)
            best_doc[L] = np.where(is_new, doc_of[new_at], np.take_along_axis(best_doc[L], old_at, axis=-1) if kept else 0)
            best_pos[L] = np.where(is_new, pos_of[new_at], np.take_along_axis(best_pos[L], old_at, axis=-1) if kept else 0)
    stacked = np.stack(best_acts).astype(np.float64)
    return NeuronIndex(_frozen(stacked), _frozen(np.stack(best_doc)), _frozen(np.stack(best_pos)), token_lists)


# --- toy mixture of experts --------------------------------------------------------------


@dataclass(frozen=True)
class Routing:
    logits: np.ndarray  # (expert,)
    probs: np.ndarray  # softmax over experts
    chosen: np.ndarray  # top-k expert ids, strongest first
    gates: np.ndarray  # their probabilities renormalised to sum to 1


def toy_router(d_model: int, n_experts: int = 8, seed: int = 0) -> np.ndarray:
    """A fixed random router matrix [n_experts, d_model]: a toy, not trained (our models are dense)."""
    rng = np.random.default_rng(seed)
    return _frozen(rng.standard_normal((n_experts, d_model)) / math.sqrt(d_model))


def route(hidden: Sequence[float], router: np.ndarray, k: int = 2) -> Routing:
    """Top-k gating: logits = router @ h, softmax, keep the k largest, renormalise their weights."""
    h = np.asarray(hidden, dtype=np.float64)
    r = np.asarray(router, dtype=np.float64)
    if h.ndim != 1 or r.ndim != 2 or r.shape[1] != h.size:
        raise ValueError(f"router {r.shape} does not fit a hidden state of {h.shape}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= r.shape[0]:
        raise ValueError(f"k must be an int in [1, {r.shape[0]}], got {k!r}")
    logits = r @ h
    probs = softmax(logits)
    chosen = np.lexsort((np.arange(probs.size), -probs))[:k]
    gates = probs[chosen] / probs[chosen].sum()
    return Routing(logits, probs, chosen, gates)


def single_head_effects(model: Any, ids: Sequence[int]) -> tuple[int, np.ndarray, np.ndarray]:
    """Ablate every head on its own: (top token, its probability [layer, head] after each ablation, new top-1 ids).

    One extra forward pass per head, each through ``run_with_trace(ids, ablate=...)``.
    """
    from core.engine.model import Ablation

    cfg = model.config
    logits, _ = model.run_with_trace(list(ids))
    top = int(np.argmax(logits[-1]))
    probs = np.zeros((cfg.n_layer, cfg.n_head))
    new_top = np.zeros((cfg.n_layer, cfg.n_head), dtype=np.int64)
    for L in range(cfg.n_layer):
        for h in range(cfg.n_head):
            ablated, _ = model.run_with_trace(list(ids), ablate=Ablation(heads=frozenset({(L, h)})))
            p = softmax(ablated[-1])
            probs[L, h] = p[top]
            new_top[L, h] = int(np.argmax(p))
    return top, probs, new_top
