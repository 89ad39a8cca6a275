"""Logits & sampling sections: the softmax at the last position, the sampling knobs, seeded
draws, and the logit lens.

The knobs are temperature -> top-k -> top-p -> renormalise (``core.engine.sampling``); the lens
is ``core.lessons.logit_lens``. The knobs and the softmax section's "Tokens to show (N)" answer
in the browser (``ui.components.sampling_lab``: no server run while they move); their values
reach the server with "Draw", which commits them (session state and link) and reruns the seeded
draws. The number of draws answers in the browser too (the 1000 draws of the committed knobs
are sent once; N draws are their first N). Sections 2-3 are a fragment: Draw reruns only them,
never the sidebar or the logit lens. The sidebar prompt reruns the page; the trace is shared, so that
costs one forward per new prompt.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core.engine.sampling import SamplingSteps, entropy_bits, sampling_steps, softmax
from core.lessons.logit_lens import EMBEDDING_STAGE, LogitLens, logit_lens
from ui import state
from ui.components import sampling_lab
from ui.charts.output import (
    cached,
    final_token_by_stage_chart,
    logit_lens_chart,
    show,
    token_labels,
)
from ui.i18n import t
from ui.page import Page
from ui.resources import get_model, memo, run_prompt
from ui.text import escape_markdown


# The seeds' illustration for 法国的首都是: logits and probabilities (巴黎 high, 伦敦 lower).
SEED_CANDIDATES_ZH: tuple[tuple[str, str, str], ...] = (
    ("巴黎", "15.2", "0.86"), ("伦敦", "7.1", "0.04"), ("柏林", "—", "0.03"), ("苹果", "-2.5", "0.000001"),
)
SEED_CANDIDATES_EN: tuple[tuple[str, str, str], ...] = (
    (" Paris", "15.2", "0.86"), (" London", "7.1", "0.04"), (" Berlin", "—", "0.03"), (" apple", "-2.5", "0.000001"),
)


@dataclass(frozen=True)
class LastPosition:
    """The last position's logits (float64), their softmax, and the token ids by probability."""

    logits: np.ndarray
    probs: np.ndarray
    ranking: np.ndarray  # most probable first, lower id among equals


def last_position(page: Page) -> LastPosition:
    logits = page.run.logits[-1].astype(np.float64)
    probs = softmax(logits)
    return LastPosition(logits, probs, np.lexsort((np.arange(page.config.vocab_size), -probs)))


@memo(maxsize=64)
def lens_for(model_name: str, prompt: str, k: int) -> LogitLens:
    """Logit lens at the last position (cached per model, prompt and k)."""
    loaded = get_model(model_name)
    run = run_prompt(model_name, prompt)
    return logit_lens(run.trace, loaded.config.n_layer, loaded.model.final_norm_and_unembed, position=-1, k=k)


# --- 1. logits -> softmax -----------------------------------------------------------------------


def controls_section(page: Page, last: LastPosition) -> None:
    """Softmax, the knobs and the seeded draws. The softmax section answers in the browser
    (``sampling_lab.softmax``: its "Tokens to show" knob redraws the bars and metrics and the
    knobs' bars below, with no message to the server); it gets the top ``TOP_N.high`` tokens once."""
    tokenizer, vocab, probs = page.loaded.tokenizer, page.config.vocab_size, last.probs
    st.header(t("logits_sampling.head.softmax"))
    st.markdown(t("logits_sampling.softmax.explain", d_model=page.config.d_model, vocab=vocab,
                  last=escape_markdown(token_labels(tokenizer, [page.run.ids[-1]])[0])))
    top_ids = [int(i) for i in last.ranking[:int(sampling_lab.TOP_N.high)]]
    top_labels = token_labels(tokenizer, top_ids)
    sampling_lab.softmax(key="logits_sampling_softmax", shown_ids=top_ids, shown_labels=top_labels,
                         probs=probs[top_ids], logits=last.logits[top_ids], entropy=entropy_bits(probs),
                         vocab_size=vocab)
    _seed_comparison(page, last)
    knobs_section(page, last, top_ids, top_labels)


def _seed_comparison(page: Page, last: LastPosition) -> None:
    """The seeds' framing: 巴黎 high, 伦敦 lower. Compare with what our live model says."""
    tokenizer, probs = page.loaded.tokenizer, last.probs
    is_chinese = any("\u4e00" <= ch <= "\u9fff" for ch in page.run.text)
    candidates = SEED_CANDIDATES_ZH if is_chinese else SEED_CANDIDATES_EN
    rows = []
    for word, seed_logit, seed_prob in candidates:
        ids = tokenizer.encode(word)
        first = int(ids[0])
        rows.append({
            t("logits_sampling.seed.word"): word.strip(),
            t("logits_sampling.seed.first_token"): token_labels(tokenizer, [first])[0]
            + ("" if len(ids) == 1 else t("logits_sampling.seed.more_tokens", n=len(ids))),
            t("logits_sampling.seed.seed_logit"): seed_logit,
            t("logits_sampling.seed.seed_prob"): seed_prob,
            t("logits_sampling.seed.live_logit"): f"{last.logits[first]:.2f}",
            t("logits_sampling.seed.live_prob"): f"{probs[first]:.4f}" if probs[first] >= 1e-4 else f"{probs[first]:.1e}",
            t("logits_sampling.seed.live_rank"): int((probs > probs[first]).sum()) + 1,
        })
    with st.container(border=True):
        st.markdown(t("logits_sampling.seed.title"))
        st.caption(t("logits_sampling.seed.caption"))
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="logits_sampling_seed_table")


# --- 2. the knobs ----------------------------------------------------------------------------------


@st.fragment
def knobs_section(page: Page, last: LastPosition, top_ids: list[int], top_labels: list[str]) -> None:
    """The knobs and the seeded draws, nested in ``controls_section``. The knobs answer in the
    browser (``ui.components.sampling_lab``: the bars, metrics, cuts and table follow every move
    with no message to the server); "Draw" sends them, and this fragment draws with them (the
    softmax chart and the table above stay as they are)."""
    st.header(t("logits_sampling.head.knobs"))
    st.markdown(t("logits_sampling.knobs.order"))
    vocab = page.config.vocab_size
    best = int(np.lexsort((np.arange(vocab), -last.logits))[0])  # the top token after any knobs
    sampling_lab.take("logits_sampling_knobs")  # "Draw": its knobs are committed; the draws below use them
    sampling_lab.lab(
        key="logits_sampling_knobs", logits=last.logits, shown_ids=top_ids, shown_labels=top_labels,
        top_label=token_labels(page.loaded.tokenizer, [best])[0], vocab_size=vocab,
        words=sampling_lab.labels(top_k_help=t("logits_sampling.top_k.help", vocab=vocab),
                                  stale=t("logits_sampling.draw.stale")),
        buttons=(sampling_lab.Button("draw", t("logits_sampling.draw"), primary=True),), top_n=True,
        extra=(sampling_lab.N_SAMPLES,),
    )
    temperature, top_k, top_p = (state.get(k.name) for k in sampling_lab.sampling_knobs(vocab))
    top_k = min(int(top_k), vocab)
    try:
        steps: SamplingSteps = sampling_steps(last.logits, temperature=temperature, top_k=top_k or None, top_p=top_p)
    except ValueError:  # ui.state checked the values; this catches anything else (in the page's words)
        st.error(t("logits_sampling.knobs.invalid"))
        st.stop()
    final_order = np.lexsort((np.arange(vocab), -steps.final_probs))  # most probable first, lower id among equals
    _draws_section(page, steps, final_order)


# --- 3. seeded draws -------------------------------------------------------------------------------


def _draws_section(page: Page, steps: SamplingSteps, final_order: np.ndarray) -> None:
    """Seeded draws from the committed knobs' distribution (``core.engine.sampling.sample``),
    drawn against what it expects; the number of draws answers in the browser
    (``sampling_lab.draws``); the caption says which knob values they used."""
    tokenizer = page.loaded.tokenizer
    st.header(t("logits_sampling.head.samples"))
    sampling_lab.draws(key="logits_sampling_draws", final=steps.final_probs, final_order=final_order, seed=page.seed,
                       label_of=lambda ids: token_labels(tokenizer, ids))
    st.caption(t("logits_sampling.draw.used", t=f"{steps.temperature:.2f}",
                 k=steps.top_k if steps.top_k else t("logits_sampling.off"), p=f"{steps.top_p:.2f}"))


# --- 4. logit lens ---------------------------------------------------------------------------------


def lens_section(page: Page) -> None:
    """What each stage of the model would predict if it were the last (the logit lens)."""
    tokenizer = page.loaded.tokenizer
    st.header(t("logits_sampling.head.lens"))
    st.markdown(t("logits_sampling.lens.explain"))
    lens = lens_for(page.model_name, page.run.text, 5)
    stage_labels = [t("logits_sampling.lens.stage_embedding") if s == EMBEDDING_STAGE
                    else t("logits_sampling.lens.stage_block", layer=s) for s in lens.stages]
    lens_tokens = [token_labels(tokenizer, row) for row in lens.top_ids.tolist()]
    final_label = token_labels(tokenizer, [lens.final_id])[0]
    show(
        cached(
            logit_lens_chart,
            stage_labels, lens_tokens, lens.top_probs,
            title=t("logits_sampling.chart.lens.title", token=final_label),
            x_title=t("logits_sampling.axis.rank"), y_title=t("logits_sampling.axis.stage"),
            value_title=t("logits_sampling.axis.prob"), token_title=t("logits_sampling.axis.token"),
            highlight_token=final_label,
        ),
    )
    show(
        cached(
            final_token_by_stage_chart,
            stage_labels, lens.final_id_probs, lens.final_id_ranks,
            title=t("logits_sampling.chart.lens_line.title", token=final_label),
            x_title=t("logits_sampling.axis.stage"), y_title=t("logits_sampling.axis.prob"),
            rank_title=t("logits_sampling.axis.rank"),
        ),
    )
    st.caption(t("logits_sampling.lens.caption", token=escape_markdown(final_label),
                 stage=stage_labels[lens.first_stage_with_final_on_top]))
