"""What each attention head of a real model does, read off its attention pattern.

A pattern is one head's softmax weights [q_pos, k_pos] (``blocks.L.attn.hook_pattern``).
Four behaviours that interpretability papers keep finding are scored from it, each a number
in [0, 1]:

    previous_token  mean weight a query puts on the token right before it
    first_token     mean weight on position 0 (an "attention sink": a place to park
                    attention when nothing else is relevant)
    self            mean weight a query puts on itself
    broad           how far a query is from picking one token: 1 − its largest weight,
                    scaled so that 1 = evenly over everything it may see, 0 = one token
                    (the same units as the others: half on one token scores about 0.5)

A head's label is its highest score, always (so the label and the score table beside it can
never disagree): previous-token, first-token, self or broad, whichever is largest, when it
reaches ``LABEL_THRESHOLD``; otherwise "mixed" (nothing dominates: it looks somewhere that
moves with the content, which is often the interesting case). Ties go to the earlier name
in ``BEHAVIOURS``. Query 0 is skipped (it can only see itself: every behaviour would
score 1), and when the prompt is long enough query 1 is skipped too (its previous token
IS the first token, so the two behaviours could not be told apart).

Also here: per-head attention from one query position to chosen key positions (the
coreference probe: at the position that must name the referent, which heads look at
苹果 and which at 书包), and locating a word's tokens in a tokenised prompt. Pure numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.engine import names
from core.engine.numeric import softmax

BEHAVIOURS: tuple[str, ...] = ("previous_token", "first_token", "self", "broad")
SHARP_BEHAVIOURS: tuple[str, ...] = ("previous_token", "first_token", "self")
LABEL_THRESHOLD = 0.4  # a sharp behaviour needs this much mean weight to name the head
BROAD_THRESHOLD = 0.75  # normalised entropy this high: the head spreads its weight evenly
MIXED = "mixed"
TOO_SHORT = "too_short"


def stack_patterns(trace: Mapping[str, np.ndarray], n_layer: int) -> np.ndarray:
    """Every layer's pattern from a trace as one array [layer, head, q_pos, k_pos].

    Example: stack_patterns(trace, 4).shape -> (4, 4, n_pos, n_pos)
    """
    if n_layer < 1:
        raise ValueError(f"n_layer must be at least 1, got {n_layer}")
    keys = [names.act_name("pattern", layer=layer) for layer in range(n_layer)]
    missing = [key for key in keys if key not in trace]
    if missing:
        raise KeyError(f"the trace has no attention pattern {missing[0]!r}; was it made by run_with_trace?")
    return np.stack([np.asarray(trace[key]) for key in keys])


def _check_pattern(pattern: np.ndarray) -> np.ndarray:
    pattern = np.asarray(pattern, dtype=float)
    if pattern.ndim != 2 or pattern.shape[0] != pattern.shape[1] or pattern.shape[0] == 0:
        raise ValueError(f"a head's pattern must be a non-empty square [q_pos, k_pos], got shape {pattern.shape}")
    if not np.isfinite(pattern).all():
        raise ValueError("the pattern contains NaN or infinity; pass softmax weights, not masked scores")
    return pattern


def behaviour_scores(pattern: np.ndarray) -> dict[str, float]:
    """Score one head's pattern [q_pos, k_pos] on each behaviour (NaN for a one-token prompt).

    Example: behaviour_scores(np.eye(3))["self"] -> 1.0
    """
    pattern = _check_pattern(pattern)
    n = pattern.shape[0]
    if n < 2:
        return {b: float("nan") for b in BEHAVIOURS}
    first_query = 2 if n >= 3 else 1  # skip q=0 always, and q=1 when there is a later query
    queries = np.arange(first_query, n)
    rows = pattern[queries]  # (n_queries, k_pos)
    visible = queries + 1  # a causal query at position q sees q + 1 keys
    spread = (1.0 - rows.max(axis=1)) / (1.0 - 1.0 / visible)  # 0: one token; 1: all equal
    return {
        "previous_token": float(rows[np.arange(len(queries)), queries - 1].mean()),
        "first_token": float(rows[:, 0].mean()),
        "self": float(rows[np.arange(len(queries)), queries].mean()),
        "broad": float(np.clip(spread, 0.0, 1.0).mean()),
    }


@dataclass(frozen=True)
class HeadBehaviour:
    """One head's label and the scores it came from."""

    layer: int
    head: int
    label: str  # one of BEHAVIOURS, MIXED, or TOO_SHORT
    score: float  # the label's score (the best score for MIXED; NaN for TOO_SHORT)
    scores: dict[str, float] = field(default_factory=dict)


def label_head(pattern: np.ndarray, layer: int = 0, head: int = 0,
               threshold: float = LABEL_THRESHOLD, broad_threshold: float | None = None) -> HeadBehaviour:
    """Name one head after its top score (if it reaches ``threshold``), else "mixed".

    Ties go to the earlier name in BEHAVIOURS. ``broad_threshold`` is kept for callers of
    the older rule and ignored: the label is always the largest score.
    Example: label_head(np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]).label -> "broad"
    """
    scores = behaviour_scores(pattern)
    if any(np.isnan(v) for v in scores.values()):
        return HeadBehaviour(layer, head, TOO_SHORT, float("nan"), scores)
    best = max(BEHAVIOURS, key=lambda b: (scores[b], -BEHAVIOURS.index(b)))
    if scores[best] >= threshold:
        return HeadBehaviour(layer, head, best, scores[best], scores)
    return HeadBehaviour(layer, head, MIXED, scores[best], scores)


def label_heads(patterns: np.ndarray, threshold: float = LABEL_THRESHOLD,
                broad_threshold: float | None = None) -> list[HeadBehaviour]:
    """Label every head of [layer, head, q_pos, k_pos] patterns, layer by layer.

    Example: [b.label for b in label_heads(stack_patterns(trace, 4))][:2] -> ["first_token", "previous_token"]
    """
    patterns = np.asarray(patterns, dtype=float)
    if patterns.ndim != 4:
        raise ValueError(f"expected patterns [layer, head, q_pos, k_pos], got shape {patterns.shape}")
    return [label_head(patterns[layer, head], layer, head, threshold, broad_threshold)
            for layer in range(patterns.shape[0]) for head in range(patterns.shape[1])]


def attention_from(patterns: np.ndarray, query_pos: int) -> np.ndarray:
    """Each head's weights from one query position to every key: [layer, head, k_pos].

    Example: attention_from(patterns, 5)[0, 1, :6].sum() -> 1.0
    """
    patterns = np.asarray(patterns, dtype=float)
    if patterns.ndim != 4:
        raise ValueError(f"expected patterns [layer, head, q_pos, k_pos], got shape {patterns.shape}")
    n = patterns.shape[2]
    if not 0 <= query_pos < n:
        raise ValueError(f"query position {query_pos} is outside 0..{n - 1}")
    return patterns[:, :, query_pos, :]


def attention_to_groups(patterns: np.ndarray, query_pos: int,
                        groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Weight from ``query_pos`` to each group of key positions (a word may be several tokens),
    summed over the group: [layer, head, group].

    Example: attention_to_groups(patterns, 12, [[2, 3], [7]]).shape -> (layers, heads, 2)
    """
    rows = attention_from(patterns, query_pos)  # (layer, head, k_pos)
    out = np.zeros(rows.shape[:2] + (len(groups),))
    for g, positions in enumerate(groups):
        positions = list(positions)
        if not positions:
            raise ValueError(f"group {g} has no key positions")
        bad = [p for p in positions if not 0 <= p <= query_pos]
        if bad:
            raise ValueError(f"key positions {bad} are not visible from query {query_pos} (causal: keys 0..{query_pos})")
        out[:, :, g] = rows[:, :, positions].sum(axis=-1)
    return out


def token_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Character span [start, end) of each token in the text they decode to.

    Example: token_spans(["小明", "把", "苹果"]) -> [(0, 2), (2, 3), (3, 5)]
    """
    spans, start = [], 0
    for tok in tokens:
        spans.append((start, start + len(tok)))
        start += len(tok)
    return spans


def find_word(tokens: Sequence[str], word: str, occurrence: int = 0) -> list[int]:
    """Positions of the tokens that overlap the ``occurrence``-th appearance of ``word``.

    Works on the decoded token strings, so a word split into several tokens (or sharing a
    token with its neighbour) is still found. Raises ValueError when it is not there.

    Example: find_word(["小明", "把", "苹", "果"], "苹果") -> [2, 3]
    """
    if not word:
        raise ValueError("the word to find is empty")
    text = "".join(tokens)
    start = -1
    for _ in range(occurrence + 1):
        start = text.find(word, start + 1)
        if start < 0:
            raise ValueError(f"{word!r} does not occur {occurrence + 1} time(s) in the prompt")
    end = start + len(word)
    return [i for i, (a, b) in enumerate(token_spans(tokens)) if a < end and b > start]


# --- the coreference probe (the seeds' 苹果 / 书包 example) ---------------------------------


@dataclass(frozen=True)
class CorefCase:
    """A prompt that stops right where the referent must be named, in the corpus' exact form
    ("…因为它太甜了。它指的是" / "… because it was too sweet. It means the").

    ``answer`` and ``distractor`` are written as they would continue the prompt (English with
    its leading space, as the tokenizer sees it).
    """

    lang: str
    prompt: str
    answer: str
    distractor: str


@dataclass(frozen=True)
class CorefPair:
    """Two prompts that differ only in the trait: one points back at the fruit, one at the container."""

    key: str
    lang: str
    fruit: str  # the word as it appears in the prompt, e.g. "苹果" / "apple"
    container: str
    fruit_trait: str  # "甜" / "sweet": the trait that points back at the fruit
    container_trait: str  # "小" / "small": the trait that points back at the container
    to_fruit: CorefCase
    to_container: CorefCase


def _pair(key: str, lang: str, person: str, fruit: str, container: str, fruit_trait: str,
          container_trait: str, left: bool = False) -> CorefPair:
    def case(trait: str, answer: str, distractor: str) -> CorefCase:
        if lang == "zh":
            first = f"{person}把{fruit}留在{container}里" if left else f"{person}把{fruit}放进{container}"
            return CorefCase(lang, f"{first}，因为它太{trait}了。它指的是", answer, distractor)
        verb = "left" if left else "put"
        return CorefCase(lang, f"{person} {verb} the {fruit} in the {container} because it was too {trait}. It means the",
                         f" {answer}", f" {distractor}")

    return CorefPair(key, lang, fruit, container, fruit_trait, container_trait,
                     case(fruit_trait, fruit, container), case(container_trait, container, fruit))


# The seeds' sentence first; 苹果/书包 and 葡萄/篮子 are pairs the corpus holds out of training.
COREF_PAIRS: tuple[CorefPair, ...] = (
    _pair("zh_apple_bag", "zh", "小明", "苹果", "书包", "甜", "小"),
    _pair("en_apple_bag", "en", "Tom", "apple", "bag", "sweet", "small"),
    _pair("zh_grape_basket", "zh", "小红", "葡萄", "篮子", "熟", "满", left=True),
    _pair("en_grape_basket", "en", "Anna", "grape", "basket", "ripe", "full", left=True),
)


def continuation_token_id(tokenizer: object, prompt: str, continuation: str) -> int:
    """The id of the first token the model would have to produce to continue with ``continuation``.

    Tokenizes prompt + continuation and takes the first token after the prompt's tokens (so
    a word that merges differently in context is still right); falls back to the first token
    of the continuation alone if the prompt's tokens change at the boundary.
    Example: continuation_token_id(tok, "It means the", " apple") -> id of " apple"
    """
    if not continuation:
        raise ValueError("the continuation is empty")
    prompt_ids = tokenizer.encode(prompt)  # type: ignore[attr-defined]
    full = tokenizer.encode(prompt + continuation)  # type: ignore[attr-defined]
    if full[: len(prompt_ids)] == prompt_ids and len(full) > len(prompt_ids):
        return int(full[len(prompt_ids)])
    return int(tokenizer.encode(continuation)[0])  # type: ignore[attr-defined]


@dataclass(frozen=True)
class CorefProbe:
    """Where each head looks from the last position, and what the model predicts there."""

    case: CorefCase
    query_pos: int
    answer_positions: list[int]
    distractor_positions: list[int]
    attention: np.ndarray  # [layer, head, 2]: summed weight on (answer, distractor) tokens
    answer_id: int
    distractor_id: int
    p_answer: float
    p_distractor: float
    top: list[tuple[int, float]]  # the model's most probable next tokens (id, probability)

    @property
    def correct(self) -> bool:
        """The referent is the model's top-1 next token (the training probes' criterion)."""
        return bool(self.top) and self.top[0][0] == self.answer_id

    @property
    def prefers_answer(self) -> bool:
        """The referent is more probable than the other noun (even if neither is the top guess)."""
        return self.p_answer > self.p_distractor


def coreference_probe(case: CorefCase, tokens: Sequence[str], patterns: np.ndarray, last_logits: np.ndarray,
                      tokenizer: object, top_k: int = 5) -> CorefProbe:
    """Per-head attention from the prediction position (the last token) to the two candidate
    nouns, and the model's next-token probabilities for them.

    Example: coreference_probe(COREF_PAIRS[0].to_fruit, run.tokens, stack_patterns(run.trace, 4), run.logits[-1], tok)
    """
    query_pos = len(tokens) - 1
    answer_positions = find_word(tokens, case.answer.strip())
    distractor_positions = find_word(tokens, case.distractor.strip())
    attention = attention_to_groups(patterns, query_pos, [answer_positions, distractor_positions])
    logits = np.asarray(last_logits, dtype=np.float64)
    probs = softmax(logits)
    answer_id = continuation_token_id(tokenizer, case.prompt, case.answer)
    distractor_id = continuation_token_id(tokenizer, case.prompt, case.distractor)
    order = np.argsort(-probs)[:top_k]
    return CorefProbe(case, query_pos, answer_positions, distractor_positions, attention, answer_id, distractor_id,
                      float(probs[answer_id]), float(probs[distractor_id]),
                      [(int(i), float(probs[i])) for i in order])


def coref_shift(to_fruit: CorefProbe, to_container: CorefProbe) -> np.ndarray:
    """How far each head's attention moves towards the fruit when the trait points at the fruit:
    (fruit − container) in the fruit sentence minus the same in the container sentence. [layer, head]

    A head that tracks what "它"/"it" refers to moves a lot; a head that ignores the trait stays at 0.
    Example: coref_shift(p_sweet, p_small).shape -> (layers, heads)
    """
    # attention[..., 0] is each probe's answer: the fruit in to_fruit, the container in to_container.
    fruit_lean_when_fruit = to_fruit.attention[..., 0] - to_fruit.attention[..., 1]
    fruit_lean_when_container = to_container.attention[..., 1] - to_container.attention[..., 0]
    return fruit_lean_when_fruit - fruit_lean_when_container
