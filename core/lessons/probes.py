"""What a trained model has learned, measured: facts, coreference, embedding geometry.

Training (``core.training.train``) and the shipped-model tests use these; the Multi-head page can
reuse ``coref_head_attention``. Probes are the corpus' dicts: kind ("capital" | "coref"),
lang, prompt, answer (the next token's text, e.g. " Paris" or "巴黎") and, for coref, the
distractor (the other noun of the sentence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine import names
from core.lessons.head_analysis import attention_to_groups, find_word
from core.engine.model import GPT
from core.engine.numeric import softmax
from core.lessons.vectors import find_token_id, pca_3d


@dataclass(frozen=True)
class ProbeResult:
    """The model's answer to one probe prompt."""

    kind: str
    lang: str
    prompt: str
    answer: str
    predicted: str  # the top-1 next token's text
    answer_prob: float  # probability of the answer's (first) token
    answer_rank: int  # 0 = top-1
    correct: bool  # the answer's first token is top-1


def _answer_id(tokenizer: Any, answer: str) -> int:
    ids = tokenizer.encode(answer)
    if not ids:
        raise ValueError(f"the answer {answer!r} encodes to no tokens")
    return int(ids[0])


def next_token_probs(model: GPT, tokenizer: Any, prompt: str) -> np.ndarray:
    """The model's next-token distribution after ``prompt`` [vocab] (temperature 1)."""
    ids = tokenizer.encode(prompt)
    return softmax(model.logits(ids)[-1])


def evaluate_probe(model: GPT, tokenizer: Any, probe: Mapping[str, Any]) -> ProbeResult:
    """Is the answer the most probable next token after the prompt?

    Example: evaluate_probe(m, tok, {"kind": "capital", "lang": "zh", "prompt": "法国的首都是", "answer": "巴黎"}).correct
    """
    return _probe_result(tokenizer, probe, next_token_probs(model, tokenizer, probe["prompt"]))


def _probe_result(tokenizer: Any, probe: Mapping[str, Any], probs: np.ndarray) -> ProbeResult:
    """Score one next-token distribution [vocab] against the probe's answer (ties: lowest id first)."""
    answer_id = _answer_id(tokenizer, probe["answer"])
    order = np.lexsort((np.arange(probs.size), -probs))
    top = int(order[0])
    return ProbeResult(
        kind=str(probe["kind"]),
        lang=str(probe["lang"]),
        prompt=str(probe["prompt"]),
        answer=str(probe["answer"]),
        predicted=tokenizer.decode([top]),
        answer_prob=float(probs[answer_id]),
        answer_rank=int(np.flatnonzero(order == answer_id)[0]),
        correct=top == answer_id,
    )


def evaluate_probes(model: GPT, tokenizer: Any, probes: Sequence[Mapping[str, Any]], batch_size: int = 256) -> list[ProbeResult]:
    """``evaluate_probe`` for many probes at once, in the order given.

    Prompts of the same token length run as one batch (no padding, so nothing can leak
    between them): training evaluates ~2,600 probes at every history row, and one forward
    per prompt cost ~25 s each time on a 2-core box; batched it is ~3 s.
    Batched matrix products may round differently in the last bit from one-at-a-time ones, so
    a near-tie can flip; the shipped-model tests keep using ``evaluate_probe``.

    Example: [r.correct for r in evaluate_probes(m, tok, probes[:3])]
    """
    encoded = [tokenizer.encode(p["prompt"]) for p in probes]
    by_length: dict[int, list[int]] = {}
    for index, ids in enumerate(encoded):
        if not ids:
            raise ValueError(f"the probe prompt {probes[index]['prompt']!r} encodes to no tokens")
        by_length.setdefault(len(ids), []).append(index)
    last_probs: dict[int, np.ndarray] = {}
    for indices in by_length.values():
        for start in range(0, len(indices), batch_size):
            chunk = indices[start : start + batch_size]
            batch = np.array([encoded[i] for i in chunk], dtype=np.int64)  # (batch, pos)
            logits = model.logits(batch)[:, -1]  # (batch, vocab)
            for i, row in zip(chunk, logits):
                last_probs[i] = softmax(row)
    return [_probe_result(tokenizer, probe, last_probs[index]) for index, probe in enumerate(probes)]


def probe_accuracy(results: Sequence[ProbeResult]) -> dict[str, dict[str, float]]:
    """Top-1 accuracy per kind, per language and overall: {"capital": {"en": .., "zh": .., "all": ..}}.

    Example: probe_accuracy(results)["capital"]["all"] -> 0.98
    """
    table: dict[str, dict[str, float]] = {}
    for kind in sorted({r.kind for r in results}):
        of_kind = [r for r in results if r.kind == kind]
        row = {lang: float(np.mean([r.correct for r in of_kind if r.lang == lang]))
               for lang in sorted({r.lang for r in of_kind})}
        row["all"] = float(np.mean([r.correct for r in of_kind]))
        row["n"] = float(len(of_kind))
        table[kind] = row
    return table


# --- coreference: which heads look at the right noun -----------------------------------------


@dataclass(frozen=True)
class CorefAttention:
    """Attention from the prediction position (the last token) to each candidate noun."""

    tokens: list[str]
    candidates: list[str]
    candidate_positions: list[list[int]]  # token positions of each candidate in the prompt
    weights: np.ndarray  # [layer, head, candidate]: summed attention weight on the candidate's tokens


def coref_head_attention(model: GPT, tokenizer: Any, prompt: str, candidates: Sequence[str]) -> CorefAttention:
    """Per head, how much the last position attends to each candidate noun of the prompt.

    A candidate is found by its text (surrounding spaces ignored), at its first occurrence.
    Example: coref_head_attention(m, tok, "小明把苹果放进书包，因为它太甜了。它指的是", ["苹果", "书包"]).weights.shape -> (4, 4, 2)
    """
    ids = tokenizer.encode(prompt)
    tokens = [tokenizer.decode([i]) for i in ids]
    positions = [find_word(tokens, str(c).strip()) for c in candidates]
    _, trace = model.run_with_trace(ids)
    patterns = np.stack([trace[names.act_name("pattern", layer)] for layer in range(model.config.n_layer)])
    weights = attention_to_groups(patterns, len(ids) - 1, positions)  # (layer, head, candidate)
    return CorefAttention(tokens=tokens, candidates=[str(c) for c in candidates],
                          candidate_positions=positions, weights=weights)


def coref_head_report(model: GPT, tokenizer: Any, probes: Sequence[Mapping[str, Any]], top: int = 3) -> dict[str, Any]:
    """Average over coref probes of attention (prediction position -> referent vs distractor).

    Returns {"referent": [layer][head], "distractor": [layer][head], "top_heads": [{layer,
    head, referent, distractor, margin}]} where a head's margin is the mean extra weight it
    puts on the right noun. The heads with the largest margin are the coreference heads.
    """
    coref = [p for p in probes if p["kind"] == "coref"]
    if not coref:
        raise ValueError("no coref probes given")
    stacked = np.stack([
        coref_head_attention(model, tokenizer, p["prompt"], [p["answer"], p["distractor"]]).weights for p in coref
    ])  # (probe, layer, head, 2)
    mean = stacked.mean(axis=0)  # (layer, head, 2)
    margin = mean[..., 0] - mean[..., 1]  # (layer, head)
    order = np.argsort(-margin, axis=None, kind="stable")[:top]
    top_heads = []
    for flat in order:
        layer, head = np.unravel_index(flat, margin.shape)
        top_heads.append({
            "layer": int(layer), "head": int(head), "referent": round(float(mean[layer, head, 0]), 4),
            "distractor": round(float(mean[layer, head, 1]), 4), "margin": round(float(margin[layer, head]), 4),
        })
    return {
        "referent": np.round(mean[..., 0], 4).tolist(),
        "distractor": np.round(mean[..., 1], 4).tolist(),
        "top_heads": top_heads,
    }


# --- embedding geometry -----------------------------------------------------------------------------


def category_tokens(tokenizer: Any, groups: Mapping[str, Sequence[str]]) -> tuple[list[int], list[str]]:
    """Token ids (and their category) of every category word that is a single token.

    English words use their in-sentence spelling with a leading space when that is a token.
    A token claimed by two categories is dropped (it would count as right for both).

    Example: category_tokens(tok, {"fruit": ["apple", "苹果"]}) -> ([412, 977], ["fruit", "fruit"])
    """
    vocab = tokenizer.vocab()
    owner: dict[int, str | None] = {}
    for category, words in groups.items():
        for word in words:
            token_id = find_token_id(vocab, word)
            if token_id is None:
                continue
            owner[token_id] = category if owner.get(token_id, category) == category else None
    kept = sorted((i, c) for i, c in owner.items() if c is not None)
    return [i for i, _ in kept], [c for _, c in kept]


def knn_purity(vectors: np.ndarray, labels: Sequence[str], k: int = 5) -> float:
    """Mean share of each point's k nearest neighbours (cosine, itself excluded) with its label.

    Example: knn_purity(np.array([[1, 0], [1, 0.1], [0, 1], [0.1, 1]]), ["a", "a", "b", "b"], k=1) -> 1.0
    """
    table = np.asarray(vectors, dtype=np.float64)
    labels_array = np.asarray(labels)
    if table.ndim != 2 or table.shape[0] != labels_array.size:
        raise ValueError("need one label per row of a 2-D table")
    if not 1 <= k < table.shape[0]:
        raise ValueError(f"k must be in [1, {table.shape[0] - 1}], got {k}")
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    unit = table / np.where(norms == 0, 1.0, norms)
    similarity = unit @ unit.T  # (n, n) cosine
    np.fill_diagonal(similarity, -np.inf)
    neighbours = np.argsort(-similarity, axis=1, kind="stable")[:, :k]  # (n, k)
    return float((labels_array[neighbours] == labels_array[:, None]).mean())


def embedding_purity(model: GPT, tokenizer: Any, groups: Mapping[str, Sequence[str]], k: int = 5) -> dict[str, Any]:
    """5-NN category purity of the token-embedding rows of the category words.

    Reported in full dimension and after PCA of those rows to 3-D (the embeddings page's view).
    """
    ids, labels = category_tokens(tokenizer, groups)
    if len(ids) <= k:
        raise ValueError(f"only {len(ids)} single-token category words; need more than k={k}")
    table = model.embedding_matrix()[ids]
    projected = pca_3d(table).coords
    return {
        "k": k,
        "n_words": len(ids),
        "n_categories": len(set(labels)),
        "purity_full": round(knn_purity(table, labels, k), 4),
        "purity_pca3": round(knn_purity(projected, labels, k), 4),
    }


# --- the acceptance figures of metrics.json ---------------------------------------------------------

# The rephrasings a teacher typed that the first models got wrong (issue [W2-H]); all are in
# trained template families now, and metrics.json records the model's answer to each.
NATURAL_PHRASINGS: tuple[dict[str, str], ...] = (
    {"kind": "natural", "lang": "en", "prompt": "France's capital is", "answer": " Paris"},
    {"kind": "natural", "lang": "en", "prompt": "The French capital is", "answer": " Paris"},
    {"kind": "natural", "lang": "en", "prompt": "The capital of France is", "answer": " Paris"},
    {"kind": "natural", "lang": "zh", "prompt": "法国的首都叫", "answer": "巴黎"},
    {"kind": "natural", "lang": "zh", "prompt": "法国首都是", "answer": "巴黎"},
    {"kind": "natural", "lang": "zh", "prompt": "法国的首都是", "answer": "巴黎"},
)


def strongest_coref_head(report: Mapping[str, Any]) -> dict[str, Any]:
    """The head with the largest right-minus-wrong attention margin, with its right/wrong ratio.

    Example: strongest_coref_head(coref_head_report(m, tok, probes))["ratio"] -> 5.1
    """
    best = dict(report["top_heads"][0])
    wrong = best["distractor"]
    best["ratio"] = round(best["referent"] / wrong, 3) if wrong > 0 else float("inf")
    return best


def acceptance(accuracy: Mapping[str, Mapping[str, float]], coref_heads: Mapping[str, Any],
               embedding: Mapping[str, Any], byte_share: float | None,
               natural: Sequence[ProbeResult]) -> dict[str, Any]:
    """The figures issue [W2-H] accepts a model by, flat, one per line of metrics.json.

    capital_*: top-1 on the trained / held-out template families; coref: held-out noun pairs
    in held-out sentence frames; coref_head_ratio: the strongest head's attention on the right
    noun over the wrong one; byte_fallback_share: on the 200 classroom prompts.
    """
    get = lambda kind, lang: round(float(accuracy.get(kind, {}).get(lang, float("nan"))), 4)  # noqa: E731
    head = strongest_coref_head(coref_heads)
    return {
        "capital_trained_en": get("capital", "en"),
        "capital_trained_zh": get("capital", "zh"),
        "capital_heldout_template_en": get("capital_heldout", "en"),
        "capital_heldout_template_zh": get("capital_heldout", "zh"),
        "coref_heldout_en": get("coref", "en"),
        "coref_heldout_zh": get("coref", "zh"),
        "coref_head": f"L{head['layer']}H{head['head']}",
        "coref_head_ratio": head["ratio"],
        "embedding_purity_full": embedding["purity_full"],
        "byte_fallback_share": None if byte_share is None else round(byte_share, 5),
        "natural_phrasings": {r.prompt: r.predicted for r in natural},
        "natural_phrasings_correct": all(r.correct for r in natural),
    }
