"""Generation & KV cache sections: the generation loop with its cache, and the memory calculator.

Generation state lives in ``st.session_state`` under ``gen_*`` keys as plain data (the ids
so far and one record per step); the KV cache itself is rebuilt from the ids when a rerun
lost it (``core.engine.generation`` does that before its timer starts). The shared model object is
only read. The memory calculator answers in the browser (``ui.components.calculators``: a port of
``core.lessons.kv_memory``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core.engine.generation import (
    STOP_CONTEXT_FULL,
    STOP_EOS,
    STOP_MAX_NEW_TOKENS,
    TIMING_REPEATS,
    GenerationSettings,
    GenerationState,
    KVCache,
    StepReport,
    generate,
    generation_step,
    prefill,
    start_generation,
)
from core.lessons.kv_memory import MODEL_PRESETS
from ui import state as durable
from ui.components import calculators, sampling_lab
from ui.charts.output import (
    AFTER_COLOR,
    CACHED_COLOR,
    RECOMPUTE_COLOR,
    cache_length_chart,
    causal_mask_chart,
    show,
    timeline_chart,
    token_labels,
    top5_chart,
    two_series_line_chart,
)
from ui.i18n import t
from ui.page import Page
from ui.resources import get_model, memo
from ui.text import escape_markdown

MAX_NEW_TOKENS = 64
MASK_MAX_POSITIONS = 48  # the causal-mask chart shows at most the last 48 positions
LIVE_MODEL_PRESET = "__live__"  # the calculator's entry for the model running in this app
# Presets whose names are descriptions get a translated name; real model names stay.
TRANSLATED_PRESETS = ("llama4_scout_like", "deepseek_style")
# The memory calculator's highest values (ui.state declares the same ranges; tests/app/test_generation.py checks).
MEMORY_LIMITS = {"layers": 1000, "heads": 1024, "kv_heads": 1024, "head_dim": 4096, "tokens": 10_000_000, "batch": 4096}

GEN_KEYS = ("gen_signature", "gen_state", "gen_steps", "gen_notice")


@st.cache_resource(show_spinner=False)
def warm_up(model_name: str) -> bool:
    """Run both forward paths once per server, so step 1's timing is not PyTorch's first-call setup."""
    loaded = get_model(model_name)
    generate(loaded.model, [1, 2], None, GenerationSettings(temperature=0.0, max_new_tokens=3))
    return True


def record(report: StepReport) -> dict[str, Any]:
    """One step as plain data for session state (no arrays, no tensors)."""
    return {
        "step": report.step,
        "token_id": report.token_id,
        "prob": float(report.probs[report.token_id]),
        "top5": [[int(i), float(p)] for i, p in report.top5],
        "cache_len": list(report.cache_len_per_layer),
        "kv_step_cached": report.kv_computed_cached,
        "kv_step_uncached": report.kv_computed_uncached,
        "kv_total_cached": report.kv_total_cached,
        "kv_total_uncached": report.kv_total_uncached,
        "n_layer": report.n_layer,
        "ms_cached": report.seconds_cached * 1000,
        "ms_recompute": report.seconds_recompute * 1000,
        "logit_diff": report.max_abs_logit_diff,
        "stop": report.stop_reason,
    }


def reset_generation(signature: tuple, reason: str | None, fresh_state: dict[str, Any] | None) -> None:
    """Forget every step and start again from the prompt (``fresh_state``; None if it cannot start).

    A session's first start keeps the step count a link brought (``replay_linked_steps``)."""
    if "gen_signature" in st.session_state:
        durable.put("generation_steps", 0)
    for key in GEN_KEYS:
        st.session_state.pop(key, None)
    st.session_state["gen_signature"] = signature
    st.session_state["gen_steps"] = []
    st.session_state["gen_notice"] = reason
    if fresh_state is not None:
        st.session_state["gen_state"] = fresh_state


def alternatives(tokenizer: Any, steps: list[dict[str, Any]]) -> list[str]:
    """Each step's top 5 as "token p, token p, ..." (the timeline's tooltip and the table)."""
    return [", ".join(f"{lab} {p:.2f}" for lab, (_, p) in zip(token_labels(tokenizer, [i for i, _ in s["top5"]]), s["top5"]))
            for s in steps]


# --- the generation loop -------------------------------------------------------------------------


@st.fragment
def generation_section(page: Page) -> None:
    """The knobs' preview, Next / Run / Reset, the text so far and the KV cache of this run.

    Temperature, top-k and top-p answer in the browser (``ui.components.sampling_lab``: the
    preview of the next token's distribution follows every move with no server run); Next,
    Run and Reset are the component's buttons and carry the knobs, committed before this run.
    """
    st.header(t("generation.head.loop"))
    st.markdown(t("generation.loop.explain"))
    max_new = _max_new()
    action = sampling_lab.take(PREVIEW_KEY)
    signature, fresh, started_over = _start(page, max_new)
    kind = action["kind"] if action else None
    if kind == "reset":
        reset_generation(signature, None, fresh.to_dict() if fresh is not None else None)
    elif kind in ("next", "run") and fresh is not None and not _finished():
        _generate(page, max_new, run_clicked=kind == "run", keep_notice=started_over)
    elif fresh is not None and not _finished():
        replay_linked_steps(page, max_new)

    gen_state = GenerationState.from_dict(st.session_state["gen_state"]) if fresh is not None else None
    _preview(page, gen_state, max_new)
    if st.session_state.get("gen_notice") == "changed":
        st.info(t("generation.reset_notice"))

    steps: list[dict[str, Any]] = st.session_state.get("gen_steps", [])
    tokenizer = page.loaded.tokenizer
    if gen_state is not None:
        _text_so_far(page, gen_state, max_new)
    if steps:
        _latest_step_charts(tokenizer, steps)
    _cache_section(page, steps, gen_state)


PREVIEW_KEY = "generation_knobs"
PREVIEW_TOKENS = 10  # bars in the preview: the next token's most probable candidates at T = 1


def _max_new() -> int:
    """The number of new tokens Run writes (the sampling knobs are the preview's, in the browser)."""
    return int(st.slider(t("generation.max_new"), min_value=1, max_value=MAX_NEW_TOKENS, step=1,
                         **durable.bind("generation_max_new"), help=t("generation.max_new.help")))


def _sampling() -> tuple[float, int, float]:
    """The committed temperature, top-k and top-p (checked by ``ui.state``)."""
    return (float(durable.get("sampling_temperature")), int(durable.get("sampling_top_k")),
            float(durable.get("sampling_top_p")))


def _finished() -> bool:
    return GenerationState.from_dict(st.session_state["gen_state"]).finished if "gen_state" in st.session_state else True


@memo(maxsize=256)
def next_token_logits(model_name: str, ids: tuple[int, ...]) -> np.ndarray:
    """The logits the next step draws from: the last position's after ``ids`` (one forward, shared)."""
    return prefill(get_model(model_name).model, ids)[0]


def _preview(page: Page, gen_state: GenerationState | None, max_new: int) -> None:
    """The next token's distribution under the knobs (recomputed in the browser as they move),
    with Next token / Run / Reset, which send the knobs along."""
    ids = tuple(gen_state.ids if gen_state is not None else page.run.ids)[-page.config.n_ctx:]
    logits = next_token_logits(page.model_name, ids).astype(np.float64)
    vocab = page.config.vocab_size
    ranking = np.lexsort((np.arange(vocab), -logits))
    shown = [int(i) for i in ranking[:PREVIEW_TOKENS]]
    labels = token_labels(page.loaded.tokenizer, shown)
    finished = gen_state is None or gen_state.finished
    if not finished:  # once the text has stopped there is no next token to preview: knobs and buttons only
        st.markdown(t("generation.preview.title"))
    sampling_lab.lab(
        key=PREVIEW_KEY, logits=logits, shown_ids=shown, shown_labels=labels, top_label=labels[0], vocab_size=vocab,
        words=sampling_lab.labels(
            {"temperature": "generation.temperature", "top_k": "generation.top_k", "top_p": "generation.top_p"},
            temperature_help=t("generation.temperature.help"), top_k_help=t("generation.top_k.help", vocab=vocab),
            stale=t("generation.preview.stale")),
        buttons=(sampling_lab.Button("next", t("generation.next"), primary=True, disabled=finished),
                 sampling_lab.Button("run", t("generation.run", n=max_new), disabled=finished),
                 sampling_lab.Button("reset", t("generation.reset"))),
        parts=("note",) if finished else ("note", "chart", "cuts"),
    )


def _start(page: Page, max_new: int) -> tuple[tuple, GenerationState | None, bool]:
    """The run's signature, its fresh start (None if it cannot start) and whether the steps so
    far were just forgotten because the signature changed (new knobs, prompt, model, ...)."""
    run, cfg = page.run, page.config
    temperature, top_k, top_p = _sampling()
    top_k = min(top_k, cfg.vocab_size)
    try:
        settings = GenerationSettings(temperature=temperature, top_k=top_k or None, top_p=top_p,
                                      seed=page.seed, max_new_tokens=int(max_new))
        fresh = start_generation(page.loaded.model, run.ids, settings)
    except ValueError:  # said by cause in the page's language (the core's message is English)
        fresh = None
        if len(run.ids) >= cfg.n_ctx:
            st.warning(t("generation.cannot_start.context_full", n=len(run.ids), n_ctx=cfg.n_ctx))
        else:
            st.warning(t("generation.cannot_start"))

    signature = (page.model_name, tuple(run.ids), temperature, top_k, top_p, page.seed, int(max_new))
    started_over = False
    if st.session_state.get("gen_signature") != signature:
        started_over = bool(st.session_state.get("gen_steps"))
        reset_generation(signature, "changed" if started_over else None, fresh.to_dict() if fresh is not None else None)
    return signature, fresh, started_over


def _generate(page: Page, max_new: int, *, run_clicked: bool, keep_notice: bool) -> None:
    """One step (Next) or every step left (Run, with a progress bar), recorded in session state.
    ``keep_notice``: the knobs sent with this press started the text over; say so."""
    model, eos_id = page.loaded.model, page.loaded.tokenizer.eot_id
    state = GenerationState.from_dict(st.session_state["gen_state"])
    cache: KVCache | None = None  # a click's first step rebuilds it from the ids (untimed)
    progress = st.progress(0.0, text=t("generation.progress", done=0, total=max_new)) if run_clicked else None
    try:
        while not state.finished:
            state, report, cache = generation_step(model, state, eos_id, cache)
            st.session_state["gen_steps"].append(record(report))
            st.session_state["gen_state"] = state.to_dict()
            if progress is not None:
                done = len(state.generated_ids)
                progress.progress(min(1.0, done / max_new), text=t("generation.progress", done=done, total=max_new))
            if not run_clicked:
                break
    except ValueError:
        st.error(t("generation.step_failed"))
    if progress is not None:
        progress.empty()
    if not keep_notice:
        st.session_state["gen_notice"] = None
    _keep_step_count()


def _keep_step_count() -> None:
    """The number of tokens generated goes into the view's link (a fragment run redraws no
    sidebar, so the address is written here)."""
    durable.put("generation_steps", len(GenerationState.from_dict(st.session_state["gen_state"]).generated_ids))
    durable.sync_url()


def replay_linked_steps(page: Page, max_new: int) -> None:
    """A link that says "n tokens generated" opens with those n steps taken again (same prompt,
    model, seed and knobs: the same tokens), so the student sees the text the link was made on."""
    wanted = min(int(durable.get("generation_steps")), max_new)
    have = len(GenerationState.from_dict(st.session_state["gen_state"]).generated_ids)
    if wanted <= have:
        return
    model, eos_id = page.loaded.model, page.loaded.tokenizer.eot_id
    gen_state = GenerationState.from_dict(st.session_state["gen_state"])
    cache: KVCache | None = None
    try:
        while not gen_state.finished and len(gen_state.generated_ids) < wanted:
            gen_state, report, cache = generation_step(model, gen_state, eos_id, cache)
            st.session_state["gen_steps"].append(record(report))
            st.session_state["gen_state"] = gen_state.to_dict()
    except ValueError:
        st.error(t("generation.step_failed"))
    _keep_step_count()


def _text_so_far(page: Page, gen_state: GenerationState, max_new: int) -> None:
    """The prompt and every token chosen so far, and why the loop stopped."""
    tokenizer = page.loaded.tokenizer
    generated = list(gen_state.generated_ids)
    st.markdown(t("generation.text_so_far", steps=len(generated)))
    with st.container(border=True):  # plain text: st.code would fetch a 0.5 MB highlighter
        st.text(tokenizer.decode(gen_state.ids))
    if generated:
        st.caption(t("generation.new_tokens", tokens=" · ".join(escape_markdown(x) for x in token_labels(tokenizer, generated))))
    reason = gen_state.stop_reason
    if reason == STOP_EOS:
        st.success(t("generation.stop.eos"))
    elif reason == STOP_MAX_NEW_TOKENS:
        st.success(t("generation.stop.max", n=max_new))
    elif reason == STOP_CONTEXT_FULL:
        st.warning(t("generation.stop.context", n_ctx=page.config.n_ctx))
    elif not generated:
        st.caption(t("generation.press_next"))


def _latest_step_charts(tokenizer: Any, steps: list[dict[str, Any]]) -> None:
    """The latest step's top 5 (with the chosen token) beside the chosen tokens' timeline."""
    latest = steps[-1]
    top_ids = [i for i, _ in latest["top5"]]
    top_labels = token_labels(tokenizer, top_ids)
    chosen_label = token_labels(tokenizer, [latest["token_id"]])[0]
    if chosen_label not in top_labels:  # a draw from outside the top 5 (possible at high T)
        top_labels.append(chosen_label)
        top_ids.append(latest["token_id"])
    top_probs = [p for _, p in latest["top5"]] + ([latest["prob"]] if len(top_ids) > len(latest["top5"]) else [])
    left, right = st.columns([2, 3])
    with left:
        show(
            top5_chart(top_labels, top_probs, chosen_label,
                       title=t("generation.chart.top5.title", step=latest["step"]),
                       x_title=t("generation.axis.prob"), y_title=t("generation.axis.token"),
                       chosen_title=t("generation.legend.kind"), chosen_name=t("generation.legend.chosen"),
                       other_name=t("generation.legend.other")),
        )
    with right:
        labels = token_labels(tokenizer, [s["token_id"] for s in steps])
        show(
            timeline_chart([s["step"] for s in steps], labels, [s["prob"] for s in steps], alternatives(tokenizer, steps),
                           title=t("generation.chart.timeline.title"), x_title=t("generation.axis.step"),
                           y_title=t("generation.axis.chosen_prob"), token_title=t("generation.axis.token"),
                           alternatives_title=t("generation.axis.top5")),
        )


# --- the KV cache of this run ---------------------------------------------------------------------


def _cache_section(page: Page, steps: list[dict[str, Any]], gen_state: GenerationState | None) -> None:
    """What the cache holds after each step, what it saves, the causal mask and the steps' table."""
    st.header(t("generation.head.cache"))
    st.markdown(t("generation.cache.explain"))
    if not steps:
        st.caption(t("generation.cache.empty"))
        return
    tokenizer = page.loaded.tokenizer
    _cache_metrics(steps)
    _cache_charts(steps)
    _mask_chart(tokenizer, steps, gen_state, page.run.ids)
    with st.expander(t("generation.table.title")):
        frame = pd.DataFrame({
            t("generation.table.step"): [s["step"] for s in steps],
            t("generation.table.token"): token_labels(tokenizer, [s["token_id"] for s in steps]),
            t("generation.table.prob"): [round(s["prob"], 4) for s in steps],
            t("generation.table.top5"): alternatives(tokenizer, steps),
            t("generation.table.cache"): [s["cache_len"][0] for s in steps],
            t("generation.table.kv_step"): [f"{s['kv_step_cached']} / {s['kv_step_uncached']}" for s in steps],
            t("generation.table.ms"): [f"{s['ms_cached']:.2f} / {s['ms_recompute']:.2f}" for s in steps],
        })
        st.dataframe(frame, hide_index=True, width="stretch", key="generation_steps_table")


def _cache_metrics(steps: list[dict[str, Any]]) -> None:
    latest = steps[-1]
    n_layer = latest["n_layer"]
    m = st.columns(4)
    m[0].metric(t("generation.metric.cache_len"), f"{latest['cache_len'][0]}",
                help=t("generation.metric.cache_len.help", n_layer=n_layer))
    m[1].metric(t("generation.metric.kv_cached"), f"{latest['kv_total_cached']:,}",
                help=t("generation.metric.kv.help", total=f"{latest['kv_total_cached'] * n_layer:,}", n_layer=n_layer))
    m[2].metric(t("generation.metric.kv_uncached"), f"{latest['kv_total_uncached']:,}",
                help=t("generation.metric.kv.help", total=f"{latest['kv_total_uncached'] * n_layer:,}", n_layer=n_layer))
    m[3].metric(t("generation.metric.ms"), f"{latest['ms_cached']:.2f} / {latest['ms_recompute']:.2f}",
                help=t("generation.metric.ms.help", runs=TIMING_REPEATS))
    st.caption(t("generation.cache.diff", diff=f"{max(s['logit_diff'] for s in steps):.2e}"))


def _cache_charts(steps: list[dict[str, Any]]) -> None:
    """Cache length per layer and step; K/V vectors computed and milliseconds, with and without."""
    step_numbers = [s["step"] for s in steps]
    cache_matrix = np.array([s["cache_len"] for s in steps]).T  # (layer, step)
    show(
        cache_length_chart(cache_matrix, [t("generation.layer", layer=L) for L in range(cache_matrix.shape[0])],
                           [str(s) for s in step_numbers], title=t("generation.chart.cache.title"),
                           x_title=t("generation.axis.step"), y_title=t("generation.axis.layer"),
                           value_title=t("generation.axis.cache_len"), value_format=".0f",
                           show_values=len(steps) <= 32),
    )
    left, right = st.columns(2)
    with left:
        show(
            two_series_line_chart(
                step_numbers,
                {t("generation.legend.with_cache"): [s["kv_total_cached"] for s in steps],
                 t("generation.legend.without_cache"): [s["kv_total_uncached"] for s in steps]},
                [CACHED_COLOR, RECOMPUTE_COLOR],
                title=t("generation.chart.kv.title"), x_title=t("generation.axis.step"),
                y_title=t("generation.axis.kv_total"), series_title=t("generation.legend.mode"),
            ),
        )
    with right:
        show(
            two_series_line_chart(
                step_numbers,
                {t("generation.legend.with_cache"): [s["ms_cached"] for s in steps],
                 t("generation.legend.recompute"): [s["ms_recompute"] for s in steps]},
                [CACHED_COLOR, RECOMPUTE_COLOR],
                title=t("generation.chart.ms.title"), x_title=t("generation.axis.step"),
                y_title=t("generation.axis.ms"), series_title=t("generation.legend.mode"), value_format=".3f",
                log_scale=True,
            ),
        )
    st.caption(t("generation.cache.timing_note", runs=TIMING_REPEATS))


def _mask_chart(tokenizer: Any, steps: list[dict[str, Any]], gen_state: GenerationState | None,
                prompt_ids: list[int]) -> None:
    """The causal mask as it grows: pick a step to see the matrix that step reads."""
    prompt_len = len(gen_state.prompt_ids) if gen_state else len(prompt_ids)
    all_ids = list(gen_state.ids) if gen_state else list(prompt_ids)
    mask_step = len(steps)
    if len(steps) > 1:
        mask_step = st.slider(t("generation.mask_step"), min_value=1, max_value=len(steps), value=len(steps),
                              key="generation_mask_step")
    n_read = prompt_len + mask_step - 1  # step s reads the prompt and the s - 1 tokens chosen before it
    new_rows = prompt_len if mask_step == 1 else 1  # step 1 is the prefill: every prompt row is new
    labels_read = [f"{i}·{lab}" for i, lab in enumerate(token_labels(tokenizer, all_ids[:n_read]))]
    if n_read > MASK_MAX_POSITIONS:  # one cell per pair: keep the chart readable and light
        labels_read = labels_read[-MASK_MAX_POSITIONS:]
        st.caption(t("generation.mask.window", n=MASK_MAX_POSITIONS))
    show(
        causal_mask_chart(labels_read, min(new_rows, len(labels_read)),
                          title=t("generation.chart.mask.title", step=mask_step, n=n_read),
                          x_title=t("generation.axis.key"), y_title=t("generation.axis.query"),
                          state_title=t("generation.legend.mask"), visible_name=t("generation.legend.visible"),
                          masked_name=t("generation.legend.masked"), newest_name=t("generation.legend.newest")),
        width="content",
    )
    st.caption(t("generation.mask.caption"))


# --- the KV-cache memory calculator ---------------------------------------------------------------


def memory_section(page: Page) -> None:
    """The KV-cache memory calculator (independent of the generation above), answered in the browser."""
    st.header(t("generation.head.memory"))
    st.markdown(t("generation.memory.explain"))
    calculators.kv_memory(key="generation_kv_calculator", presets=memory_presets(page),
                          colours=(RECOMPUTE_COLOR, AFTER_COLOR, CACHED_COLOR), limits=MEMORY_LIMITS)


def memory_presets(page: Page) -> list[calculators.KvChoice]:
    """The calculator's presets (the known models, then this app's own), named in the page's language (descriptions translated, real model names as they are)."""
    cfg = page.config
    known = [calculators.KvChoice(key, t(f"generation.memory.preset.{key}") if key in TRANSLATED_PRESETS else p.name,
                                  p.n_layer, p.n_head, p.n_kv_head, p.d_head, p.n_tokens) for key, p in MODEL_PRESETS.items()]
    live = calculators.KvChoice(LIVE_MODEL_PRESET, t("generation.memory.live_model"), cfg.n_layer, cfg.n_head,
                                cfg.n_kv_head, cfg.d_head, cfg.n_ctx)
    return [*known, live]
