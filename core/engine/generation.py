"""Autoregressive generation, one step at a time, with a KV cache and honest cost accounting.

A page drives generation across Streamlit reruns, so the state between steps is plain data
(``GenerationState``: ids and settings, ``to_dict``/``from_dict`` for session state). The KV
cache is an optimisation the caller may keep (``generation_step`` returns it) or drop: when
it is missing or stale, it is rebuilt from the ids *before* the timer starts, so every
reported cost is measured on the real cached path.

K/V accounting (per layer; multiply by ``n_layer`` for the whole model), prompt of P tokens:
    with cache     step 1 projects P positions, every later step 1  -> after t steps P + t - 1
    without cache  step t projects all P + t - 1 positions          -> t*P + t*(t-1)/2
The seed's example: P = 4 and 100 steps -> 4 + 99 = 103 with the cache, 5350 without.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np
import torch

from core.engine.model import GPT, PastKV
from core.engine.sampling import check_params, next_token_distribution, sample

STOP_EOS = "eos"  # the model produced <|endoftext|>
STOP_CONTEXT_FULL = "context_full"  # the sequence reached n_ctx tokens
STOP_MAX_NEW_TOKENS = "max_new_tokens"  # the caller's budget is used up
MAX_NEW_TOKENS_LIMIT = 4096  # guard against absurd requests; n_ctx stops far earlier anyway
TIMING_REPEATS = 9  # timed repetitions per forward; the median is reported (odd: a true middle value; 9 is as
# steady as 11 for these millisecond forwards and a Next click costs 4 forwards less)
MEASURED_SHAPES_PER_MODEL = 4096  # remembered medians per model (a shape: new positions, cached positions, repeats)


@dataclass(frozen=True)
class GenerationSettings:
    """How tokens are chosen. Plain values only, so they survive session state and JSON."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float = 1.0
    seed: int = 0
    max_new_tokens: int = 32
    timing_repeats: int = TIMING_REPEATS  # warm runs per timed forward (median reported); 1 = a single run

    def __post_init__(self) -> None:
        check_params(self.temperature, self.top_k, self.top_p)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        n = self.max_new_tokens
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_NEW_TOKENS_LIMIT:
            raise ValueError(f"max_new_tokens must be an int in [1, {MAX_NEW_TOKENS_LIMIT}], got {n!r}")
        r = self.timing_repeats
        if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= 1000:
            raise ValueError(f"timing_repeats must be an int in [1, 1000], got {r!r}")


@dataclass(frozen=True)
class GenerationState:
    """Everything needed to continue generating: prompt, tokens so far, settings, why it stopped."""

    prompt_ids: tuple[int, ...]
    generated_ids: tuple[int, ...] = ()
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    stop_reason: str | None = None  # None while generation can continue

    @property
    def ids(self) -> list[int]:
        """Prompt followed by the generated tokens."""
        return [*self.prompt_ids, *self.generated_ids]

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready plain data for ``st.session_state``."""
        return {
            "prompt_ids": list(self.prompt_ids),
            "generated_ids": list(self.generated_ids),
            "settings": asdict(self.settings),
            "stop_reason": self.stop_reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GenerationState:
        return cls(
            prompt_ids=tuple(int(i) for i in data["prompt_ids"]),
            generated_ids=tuple(int(i) for i in data["generated_ids"]),
            settings=GenerationSettings(**data["settings"]),
            stop_reason=data["stop_reason"],
        )


@dataclass(frozen=True)
class KVCache:
    """Keys and values of every position in ``ids``, per layer, each (1, kv_head, pos, d_head).

    With grouped-query attention only the ``n_kv_head`` shared K/V heads are kept: that is
    where GQA saves memory (the query heads of a group all read the same cached K and V).
    """

    ids: tuple[int, ...]
    past: PastKV

    def lengths(self) -> list[int]:
        """How many positions each layer's cache holds."""
        return [int(k.shape[2]) for k, _ in self.past]


@dataclass(frozen=True)
class StepReport:
    """What one generation step did and what it cost."""

    step: int  # 1-based
    token_id: int  # the chosen token
    probs: np.ndarray  # [vocab] distribution after temperature / top-k / top-p
    top5: list[tuple[int, float]]  # (token id, probability), most probable first
    cache_len_per_layer: list[int]  # K/V rows held per layer after this step
    kv_computed_cached: int  # positions whose K, V were projected this step, with the cache (per layer)
    kv_computed_uncached: int  # ... if the whole sequence were recomputed (per layer)
    kv_total_cached: int  # running totals since step 1 (per layer)
    kv_total_uncached: int
    n_layer: int  # multiply the per-layer counts by this for the whole model
    seconds_cached: float  # measured wall time of this step's forward with the cache
    seconds_recompute: float  # measured wall time of a full forward over the same sequence
    max_abs_logit_diff: float  # cached vs recomputed logits: the cache changes (almost) nothing
    stop_reason: str | None  # set when this step ended generation


def kv_counts(prompt_len: int, step: int) -> tuple[int, int, int, int]:
    """(this step cached, this step uncached, total cached, total uncached), per layer.

    Example: kv_counts(4, 100) -> (1, 103, 103, 5350)
    """
    if prompt_len < 1 or step < 1:
        raise ValueError("prompt_len and step must be >= 1")
    this_cached = prompt_len if step == 1 else 1
    this_uncached = prompt_len + step - 1
    total_cached = prompt_len + step - 1
    total_uncached = step * prompt_len + step * (step - 1) // 2
    return this_cached, this_uncached, total_cached, total_uncached


def _sync(model: GPT) -> None:
    if model.device.type == "cuda":
        torch.cuda.synchronize(model.device)  # GPU work is asynchronous: wait before reading the clock


def _forward(model: GPT, ids: Sequence[int], past: PastKV | None) -> tuple[torch.Tensor, PastKV]:
    idx = torch.tensor([list(ids)], dtype=torch.long, device=model.device)  # (1, new positions)
    with torch.inference_mode():
        logits, present = model(idx, past_kv=past)
    return logits[0, -1], present  # logits of the last position (vocab,)


# A forward's cost depends on the model and the shapes it runs on (how many new positions, how
# many cached ones), not on which token ids they hold. So a median, once measured for a shape,
# is remembered per model (weakly: a model that is dropped takes its timings with it) and
# reused by every later step and every session that runs the same shape: a class generating
# from the same prompt measures each length once, and a click costs its own two forwards.
_MEASURED: weakref.WeakKeyDictionary[GPT, OrderedDict[tuple[int, int, int], float]] = weakref.WeakKeyDictionary()
_MEASURED_LOCK = threading.Lock()


def _past_len(past: PastKV | None) -> int:
    return int(past[0][0].shape[2]) if past else 0


def _recall(model: GPT, key: tuple[int, int, int]) -> float | None:
    with _MEASURED_LOCK:
        known = _MEASURED.get(model)
        if known is None or key not in known:
            return None
        known.move_to_end(key)
        return known[key]


def _remember(model: GPT, key: tuple[int, int, int], seconds: float) -> None:
    with _MEASURED_LOCK:
        known = _MEASURED.setdefault(model, OrderedDict())
        known[key] = seconds
        known.move_to_end(key)
        while len(known) > MEASURED_SHAPES_PER_MODEL:
            known.popitem(last=False)


def forget_timings(model: GPT | None = None) -> None:
    """Drop remembered medians (of one model, or all): the next step measures again."""
    with _MEASURED_LOCK:
        if model is None:
            _MEASURED.clear()
        else:
            _MEASURED.pop(model, None)


def timed_forward(model: GPT, ids: Sequence[int], past: PastKV | None,
                  repeats: int = TIMING_REPEATS, *, reuse: bool = True) -> tuple[torch.Tensor, PastKV, float]:
    """One forward's result and its median wall time over ``repeats`` warm runs, in seconds.

    The first run warms the kernels and caches and is not timed; the forward reads ``past``
    without changing it (K, V are concatenated into new tensors), so repeating is safe. A
    median of many runs is needed because one run of a tiny model lasts a millisecond or
    less, the same size as the operating system's scheduling noise. With ``reuse`` the median
    measured earlier for the same model and shape (new positions, cached positions, repeats)
    is returned instead of timing again; the forward itself always runs.

    Example: logits, present, seconds = timed_forward(model, [1, 2, 3], None, repeats=5)
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    logits, present = _forward(model, ids, past)  # warm-up, and the result we keep
    key = (len(ids), _past_len(past), repeats)
    known = _recall(model, key) if reuse else None
    if known is not None:
        return logits, present, known
    times = []
    for _ in range(repeats):
        _sync(model)
        started = time.perf_counter()
        _forward(model, ids, past)
        _sync(model)
        times.append(time.perf_counter() - started)
    seconds = float(np.median(times))
    if reuse:
        _remember(model, key, seconds)
    return logits, present, seconds


def prefill(model: GPT, ids: Sequence[int]) -> tuple[np.ndarray, KVCache]:
    """Run a whole sequence once; return the last position's logits and the filled cache."""
    logits, present = _forward(model, ids, None)
    return logits.float().cpu().numpy(), KVCache(tuple(int(i) for i in ids), present)


def _cache_for(model: GPT, context: tuple[int, ...], cache: KVCache | None) -> KVCache:
    if cache is not None and cache.ids == context:
        return cache
    return prefill(model, context)[1]  # a rerun lost the cache: rebuild it (not timed)


def start_generation(model: GPT, prompt_ids: Sequence[int], settings: GenerationSettings | None = None) -> GenerationState:
    """Validate a prompt and return the state before step 1.

    Example: state = start_generation(model, tokenizer.encode("法国的首都是"))
    """
    model.as_token_batch(list(prompt_ids))  # same checks as a forward pass (empty, range, length)
    ids = tuple(int(i) for i in prompt_ids)
    if len(ids) >= model.config.n_ctx:
        raise ValueError(f"the prompt has {len(ids)} tokens: no room left in the context window of {model.config.n_ctx}")
    return GenerationState(prompt_ids=ids, settings=settings or GenerationSettings())


def generation_step(
    model: GPT, state: GenerationState, eos_id: int | None, cache: KVCache | None = None
) -> tuple[GenerationState, StepReport, KVCache]:
    """Choose one more token. Returns the new state, the step's report and the updated cache."""
    if state.finished:
        raise ValueError(f"generation has already stopped ({state.stop_reason}); start again to continue")
    settings = state.settings
    ids = tuple(state.ids)
    step = len(state.generated_ids) + 1

    if step == 1:  # nothing cached yet: the prompt is processed in full ("prefill")
        past, new_ids = None, ids
    else:  # the cache holds every position but the newest token
        past, new_ids = _cache_for(model, ids[:-1], cache).past, ids[-1:]

    # Both ways timed the same way: median of TIMING_REPEATS warm runs, measured once per model and
    # shape and then reused (see timed_forward). Step 1's two forwards have the same shape.
    cached_logits, present, seconds_cached = timed_forward(model, new_ids, past, settings.timing_repeats)
    full_logits, _, seconds_recompute = timed_forward(model, ids, None, settings.timing_repeats)

    logits = cached_logits.float().cpu().numpy()
    difference = float(np.abs(logits - full_logits.float().cpu().numpy()).max())
    probs = next_token_distribution(logits, settings.temperature, settings.top_k, settings.top_p)
    step_seed = int(np.random.SeedSequence([settings.seed, step]).generate_state(1)[0])
    token = int(sample(probs, 1, seed=step_seed)[0])

    new_len = len(ids) + 1
    stop_reason = None
    if eos_id is not None and token == eos_id:
        stop_reason = STOP_EOS
    elif new_len >= model.config.n_ctx:
        stop_reason = STOP_CONTEXT_FULL
    elif step >= settings.max_new_tokens:
        stop_reason = STOP_MAX_NEW_TOKENS

    top = np.lexsort((np.arange(probs.size), -probs))[:5]
    new_cache = KVCache(ids, present)
    counts = kv_counts(len(state.prompt_ids), step)
    report = StepReport(
        step=step,
        token_id=token,
        probs=probs,
        top5=[(int(i), float(probs[i])) for i in top],
        cache_len_per_layer=new_cache.lengths(),
        kv_computed_cached=counts[0],
        kv_computed_uncached=counts[1],
        kv_total_cached=counts[2],
        kv_total_uncached=counts[3],
        n_layer=model.config.n_layer,
        seconds_cached=seconds_cached,
        seconds_recompute=seconds_recompute,
        max_abs_logit_diff=difference,
        stop_reason=stop_reason,
    )
    new_state = replace(state, generated_ids=(*state.generated_ids, token), stop_reason=stop_reason)
    return new_state, report, new_cache


def generate(
    model: GPT,
    prompt_ids: Sequence[int],
    eos_id: int | None,
    settings: GenerationSettings | None = None,
    on_step: Callable[[StepReport], None] | None = None,
) -> tuple[GenerationState, list[StepReport]]:
    """Generate until a stop condition, keeping the cache between steps.

    Example: state, reports = generate(model, ids, eos_id, GenerationSettings(temperature=0, max_new_tokens=5))
    """
    state = start_generation(model, prompt_ids, settings)
    cache: KVCache | None = None
    reports: list[StepReport] = []
    while not state.finished:
        state, report, cache = generation_step(model, state, eos_id, cache)
        reports.append(report)
        if on_step is not None:
            on_step(report)
    return state, reports
