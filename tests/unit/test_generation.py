"""Generation with a KV cache: same logits as recomputing, hand-checked counts, stop rules."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from core.engine.generation import (
    STOP_CONTEXT_FULL,
    STOP_EOS,
    STOP_MAX_NEW_TOKENS,
    GenerationSettings,
    GenerationState,
    generate,
    generation_step,
    kv_counts,
    prefill,
    start_generation,
)
from core.engine.model import GPTConfig, build_model
from tests.floats import assert_close32, f32_tolerance

torch.set_num_threads(1)

PROMPT = [4, 9, 2, 31]
VARIANTS = [
    GPTConfig.tiny(),
    GPTConfig.tiny(positional="sinusoidal"),
    GPTConfig.tiny(positional="rope", norm="rmsnorm", mlp="swiglu", bias=False),
]


@pytest.mark.parametrize("config", VARIANTS, ids=lambda c: c.positional)
def test_cached_logits_equal_full_recompute(config: GPTConfig) -> None:
    model = build_model(config, seed=2).eval()
    state, reports = generate(model, PROMPT, eos_id=None, settings=GenerationSettings(temperature=1.0, seed=3, max_new_tokens=12))
    assert len(reports) == 12
    scale = np.abs(model.logits(PROMPT)).max()  # float32 rounding follows the logits' size (tests/floats.py)
    for report in reports:
        assert report.max_abs_logit_diff <= f32_tolerance(scale, ulps=256)
    # Independently: the cached path, token by token, against a plain traced forward.
    logits, cache = prefill(model, PROMPT)
    ids = list(PROMPT)
    for token in state.generated_ids:
        full, _ = model.run_with_trace(ids)
        assert_close32(logits, full[-1], ulps=256)
        ids.append(token)
        with torch.inference_mode():
            out, past = model(torch.tensor([[token]], device=model.device), past_kv=cache.past)
        logits, cache = out[0, -1].cpu().numpy(), type(cache)(tuple(ids), past)


def test_kv_counts_by_hand() -> None:
    # Prompt of 4: step 1 projects 4 (both ways); step 2 projects 1 with the cache, 5 without; ...
    assert kv_counts(4, 1) == (4, 4, 4, 4)
    assert kv_counts(4, 2) == (1, 5, 5, 9)
    assert kv_counts(4, 3) == (1, 6, 6, 15)
    # The seed: 4-token prompt, 100 tokens -> 4 + 99 = 103 with the cache; 4+5+...+103 = 5350 without.
    assert kv_counts(4, 100) == (1, 103, 103, sum(range(4, 104)))
    assert kv_counts(1, 100)[3] == 5050  # 1 + 2 + ... + 100
    with pytest.raises(ValueError):
        kv_counts(0, 1)


def test_step_reports_counts_cache_lengths_and_top5() -> None:
    model = build_model(GPTConfig.tiny(), seed=1).eval()
    _, reports = generate(model, PROMPT, eos_id=None, settings=GenerationSettings(max_new_tokens=3))
    assert [r.cache_len_per_layer for r in reports] == [[4, 4], [5, 5], [6, 6]]
    assert [(r.kv_computed_cached, r.kv_computed_uncached) for r in reports] == [(4, 4), (1, 5), (1, 6)]
    assert [(r.kv_total_cached, r.kv_total_uncached) for r in reports] == [(4, 4), (5, 9), (6, 15)]
    for report in reports:
        assert report.n_layer == 2
        assert report.probs.shape == (50,) and report.probs.sum() == pytest.approx(1.0)
        probs = [p for _, p in report.top5]
        assert probs == sorted(probs, reverse=True) and len(report.top5) == 5
        assert report.top5[0][1] == pytest.approx(report.probs.max())
        assert report.probs[report.token_id] > 0
        assert report.seconds_cached > 0 and report.seconds_recompute > 0
    assert [r.step for r in reports] == [1, 2, 3]
    assert reports[-1].stop_reason == STOP_MAX_NEW_TOKENS


def test_greedy_follows_the_argmax_and_temperature_zero_is_deterministic() -> None:
    model = build_model(GPTConfig.tiny(), seed=6).eval()
    state, _ = generate(model, PROMPT, eos_id=None, settings=GenerationSettings(temperature=0, max_new_tokens=5))
    assert len(state.generated_ids) == 5
    ids = list(PROMPT)
    for token in state.generated_ids:
        assert token == int(np.argmax(model.logits(ids)[-1]))
        ids.append(token)


def test_stops_at_end_of_text() -> None:
    model = build_model(GPTConfig.tiny(), seed=6).eval()
    first = int(np.argmax(model.logits(PROMPT)[-1]))
    state, reports = generate(model, PROMPT, eos_id=first, settings=GenerationSettings(temperature=0, max_new_tokens=10))
    assert state.generated_ids == (first,)
    assert state.stop_reason == STOP_EOS == reports[-1].stop_reason


def test_stops_when_the_context_is_full() -> None:
    model = build_model(GPTConfig.tiny(n_ctx=8), seed=6).eval()
    state, reports = generate(model, [1, 2, 3, 4, 5], eos_id=None, settings=GenerationSettings(max_new_tokens=50))
    assert len(state.ids) == 8 and len(reports) == 3
    assert state.stop_reason == STOP_CONTEXT_FULL
    with pytest.raises(ValueError, match="no room left"):
        start_generation(model, list(range(8)))


def test_stepping_across_reruns_without_the_cache_gives_the_same_tokens() -> None:
    model = build_model(GPTConfig.tiny(positional="rope"), seed=8).eval()
    settings = GenerationSettings(temperature=1.2, top_k=10, top_p=0.9, seed=5, max_new_tokens=6)
    reference, _ = generate(model, PROMPT, eos_id=None, settings=settings)
    stored = start_generation(model, PROMPT, settings).to_dict()
    while True:  # like a Streamlit page: plain data in session state, no cache kept
        state = GenerationState.from_dict(json.loads(json.dumps(stored)))
        state, report, _ = generation_step(model, state, eos_id=None, cache=None)
        assert report.max_abs_logit_diff <= 1e-5
        stored = state.to_dict()
        if state.finished:
            break
    assert GenerationState.from_dict(stored) == reference
    with pytest.raises(ValueError, match="already stopped"):
        generation_step(model, reference, eos_id=None)


def test_sampling_depends_on_the_seed() -> None:
    model = build_model(GPTConfig.tiny(), seed=8).eval()
    runs = {
        generate(model, PROMPT, None, GenerationSettings(temperature=2.0, seed=s, max_new_tokens=8))[0].generated_ids
        for s in range(4)
    }
    assert len(runs) > 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": -1.0}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_k": -2}, "top_k"),
        ({"seed": -1}, "seed"),
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"max_new_tokens": 10**9}, "max_new_tokens"),
    ],
)
def test_bad_settings_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GenerationSettings(**kwargs)


def test_bad_prompts_raise() -> None:
    model = build_model(GPTConfig.tiny())
    with pytest.raises(ValueError, match="empty"):
        start_generation(model, [])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        start_generation(model, [1, 99])


def _count_forwards(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the length of every forward core.engine.generation runs (the list fills as it runs)."""
    import core.engine.generation as gen

    calls: list[int] = []
    real_forward = gen._forward

    def counting(model_, ids, past):  # noqa: ANN001, ANN202
        calls.append(len(ids))
        return real_forward(model_, ids, past)

    monkeypatch.setattr(gen, "_forward", counting)
    return calls


def test_timing_is_a_median_of_warm_repetitions(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.engine.generation as gen

    repeats = gen.TIMING_REPEATS
    assert repeats >= 9 and repeats % 2 == 1 and GenerationSettings().timing_repeats == repeats
    model = build_model(GPTConfig.tiny(), seed=1).eval()
    calls = _count_forwards(monkeypatch)
    # A fake clock: the timed runs last 1 ... R "seconds" in a shuffled order -> median (R + 1) / 2
    # (the mean would be the same, so the slowest run is made very slow: the median ignores it).
    durations = [float(d) for d in np.random.default_rng(0).permutation(np.arange(1, repeats + 1))]
    durations[durations.index(float(repeats))] = 1000.0
    ticks = iter([x for d in durations for x in (0.0, d)])
    monkeypatch.setattr(gen.time, "perf_counter", lambda: next(ticks))
    logits, _, seconds = gen.timed_forward(model, PROMPT, None)
    assert len(calls) == 1 + repeats  # one warm-up, then the timed runs
    assert seconds == pytest.approx((repeats + 1) / 2)
    assert_close32(logits.numpy(), model.logits(PROMPT)[-1], ulps=256)
    with pytest.raises(ValueError, match="timing_repeats"):
        GenerationSettings(timing_repeats=0)


def test_a_shape_is_timed_once_per_model_and_then_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.engine.generation as gen

    model = build_model(GPTConfig.tiny(), seed=1).eval()
    other = build_model(GPTConfig.tiny(), seed=1).eval()
    calls = _count_forwards(monkeypatch)
    clock = iter(range(10_000))  # every timed run "lasts" one tick
    monkeypatch.setattr(gen.time, "perf_counter", lambda: float(next(clock)))
    _, present, first = gen.timed_forward(model, PROMPT, None, repeats=5)
    assert len(calls) == 6 and first == pytest.approx(1.0)
    # Other token ids, same shape: the forward runs (its own logits), the median is reused.
    logits, _, again = gen.timed_forward(model, [7, 7, 7, 7], None, repeats=5)
    assert len(calls) == 7 and again == first
    assert_close32(logits.numpy(), model.logits([7, 7, 7, 7])[-1], ulps=256)
    # A new shape (one new position on a cache of 4), another model, or reuse=False: measured again.
    gen.timed_forward(model, [3], present, repeats=5)
    assert len(calls) == 13
    gen.timed_forward(other, PROMPT, None, repeats=5)
    assert len(calls) == 19
    gen.timed_forward(model, PROMPT, None, repeats=5, reuse=False)
    assert len(calls) == 25
    gen.forget_timings(model)
    gen.timed_forward(model, PROMPT, None, repeats=5)
    assert len(calls) == 31
