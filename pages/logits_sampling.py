"""Logits & sampling: from the last hidden state to a probability for every token, then a draw.

The page shows the full-vocabulary softmax at the last position, the sampling knobs
(temperature -> top-k -> top-p -> renormalise, in ``core.engine.sampling``), seeded draws against
the distribution they came from, and the logit lens (``core.lessons.logit_lens``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.lessons.logit_lens import EMBEDDING_STAGE, LogitLens, logit_lens
from core.engine.sampling import SamplingSteps, entropy_bits, sample, sampling_steps, softmax
from ui.charts.output import (
    before_after_chart,
    cached,
    final_token_by_stage_chart,
    logit_lens_chart,
    sample_histogram_chart,
    show,
    token_labels,
    top_tokens_chart,
)
from ui.i18n import t
from ui.state import bind_clamped as bound
from ui.state import commit_to as commit
from ui import state
from ui.page import setup
from ui.resources import memo, get_model, run_prompt, run_prompt_or_stop
from ui.text import escape_markdown

PAGE = "logits_sampling"
MAX_SAMPLES = 1000
HISTOGRAM_TOKENS = 12  # bars in the sample histogram; the rest is one "other" bar

# The seeds' illustration for 法国的首都是: logits and probabilities (巴黎 high, 伦敦 lower).
SEED_CANDIDATES_ZH: tuple[tuple[str, str, str], ...] = (
    ("巴黎", "15.2", "0.86"), ("伦敦", "7.1", "0.04"), ("柏林", "—", "0.03"), ("苹果", "-2.5", "0.000001"),
)
SEED_CANDIDATES_EN: tuple[tuple[str, str, str], ...] = (
    (" Paris", "15.2", "0.86"), (" London", "7.1", "0.04"), (" Berlin", "—", "0.03"), (" apple", "-2.5", "0.000001"),
)



@memo(maxsize=64)
def lens_for(model_name: str, prompt: str, k: int) -> LogitLens:
    """Logit lens at the last position (cached per model, prompt and k)."""
    loaded = get_model(model_name)
    run = run_prompt(model_name, prompt)
    return logit_lens(run.trace, loaded.config.n_layer, loaded.model.final_norm_and_unembed, position=-1, k=k)


ctx = setup(PAGE)
st.title(t("logits_sampling.title"))
st.markdown(t("logits_sampling.intro"))

run = run_prompt_or_stop(ctx.model_name, ctx.prompt)
loaded = get_model(ctx.model_name)
tokenizer = loaded.tokenizer
cfg = loaded.config
vocab = cfg.vocab_size
last_logits = run.logits[-1].astype(np.float64)
probs = softmax(last_logits)
ranking = np.lexsort((np.arange(vocab), -probs))  # most probable first, lower id among equals

# --- 1. logits -> softmax ---------------------------------------------------------------------
# The interactive sections 1-3 are one fragment (the top-n choice feeds the knobs' chart), with
# sections 2-3 a fragment inside it: a knob reruns only sections 2-3, the top-n slider 1-3,
# never the sidebar or the logit lens. The sidebar prompt reruns the page; the trace is shared,
# so that costs one forward per new prompt.


@st.fragment
def controls_section() -> None:
    """Softmax, the knobs and the seeded draws: the top-n choice and the knobs feed all three."""
    st.header(t("logits_sampling.head.softmax"))
    st.markdown(t("logits_sampling.softmax.explain", d_model=cfg.d_model, vocab=vocab,
                  last=escape_markdown(token_labels(tokenizer, [run.ids[-1]])[0])))
    top_n = st.slider(t("logits_sampling.top_n"), min_value=5, max_value=30, step=1,
                      **state.bind("logits_sampling_top_n"), help=t("logits_sampling.top_n.help"))
    top_ids = [int(i) for i in ranking[:top_n]]
    top_labels = token_labels(tokenizer, top_ids)
    tail_mass = float(1.0 - probs[top_ids].sum())

    cols = st.columns(4)
    cols[0].metric(t("logits_sampling.metric.top_token"), top_labels[0])
    cols[1].metric(t("logits_sampling.metric.top_prob"), f"{probs[top_ids[0]]:.4f}")
    cols[2].metric(t("logits_sampling.metric.tail"), f"{tail_mass:.4f}",
                   help=t("logits_sampling.metric.tail.help", n=vocab - top_n))
    cols[3].metric(t("logits_sampling.metric.entropy"), f"{entropy_bits(probs):.2f}",
                   help=t("logits_sampling.metric.entropy.help", max=f"{np.log2(vocab):.1f}"))

    show(
        cached(
            top_tokens_chart,
            top_labels, probs[top_ids], t("logits_sampling.tail_label", n=f"{vocab - top_n:,}"), tail_mass,
            title=t("logits_sampling.chart.top.title", n=top_n, vocab=f"{vocab:,}"),
            x_title=t("logits_sampling.axis.prob"), y_title=t("logits_sampling.axis.token"),
            kind_title=t("logits_sampling.legend.kind"), kind_top=t("logits_sampling.legend.top", n=top_n),
            kind_tail=t("logits_sampling.legend.tail"), logits=last_logits[top_ids],
            logit_title=t("logits_sampling.axis.logit"),
        ),
    )

    # The seeds' framing: 巴黎 high, 伦敦 lower. Compare with what our live model says.
    is_chinese = any("\u4e00" <= ch <= "\u9fff" for ch in run.text)
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
            t("logits_sampling.seed.live_logit"): f"{last_logits[first]:.2f}",
            t("logits_sampling.seed.live_prob"): f"{probs[first]:.4f}" if probs[first] >= 1e-4 else f"{probs[first]:.1e}",
            t("logits_sampling.seed.live_rank"): int((probs > probs[first]).sum()) + 1,
        })
    with st.container(border=True):
        st.markdown(t("logits_sampling.seed.title"))
        st.caption(t("logits_sampling.seed.caption"))
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="logits_sampling_seed_table")

    knobs_section(top_ids, top_labels)


@st.fragment
def knobs_section(top_ids: list[int], top_labels: list[str]) -> None:
    """The knobs and the seeded draws, nested in ``controls_section``: a knob or the number of
    draws reruns only this part (the softmax chart and the table above stay as they are); the
    top-n choice reruns both."""
    # --- 2. the knobs -------------------------------------------------------------------------
    st.header(t("logits_sampling.head.knobs"))
    st.markdown(t("logits_sampling.knobs.order"))
    k1, k2, k3 = st.columns(3)
    with k1:
        wkey = bound("sampling_temperature", "logits_sampling_temperature", (0.0, 3.0))
        st.slider(t("logits_sampling.temperature"), min_value=0.0, max_value=3.0, step=0.05, key=wkey,
                  on_change=commit("sampling_temperature", wkey), help=t("logits_sampling.temperature.help"))
    with k2:
        wkey = bound("sampling_top_k", "logits_sampling_top_k", (0, vocab))
        st.number_input(t("logits_sampling.top_k"), min_value=0, max_value=vocab, step=1, key=wkey,
                        on_change=commit("sampling_top_k", wkey), help=t("logits_sampling.top_k.help", vocab=vocab))
    with k3:
        wkey = bound("sampling_top_p", "logits_sampling_top_p", (0.05, 1.0))
        st.slider(t("logits_sampling.top_p"), min_value=0.05, max_value=1.0, step=0.05, key=wkey,
                  on_change=commit("sampling_top_p", wkey), help=t("logits_sampling.top_p.help"))

    temperature = float(st.session_state["sampling_temperature"])
    top_k = int(st.session_state["sampling_top_k"])
    top_p = float(st.session_state["sampling_top_p"])
    try:
        steps: SamplingSteps = sampling_steps(last_logits, temperature=temperature, top_k=top_k or None, top_p=top_p)
    except ValueError:  # the widgets bound the values; this catches anything else (in the page's words)
        st.error(t("logits_sampling.knobs.invalid"))
        st.stop()

    # One slot whatever the temperature says (a note or nothing): the elements below keep their
    # place, so the browser updates their charts instead of drawing them anew.
    note = st.empty()
    if temperature == 0:
        note.info(t("logits_sampling.greedy"))
    elif temperature < 1:
        note.caption(t("logits_sampling.temp.sharper", t=f"{temperature:.2f}"))
    elif temperature > 1:
        note.caption(t("logits_sampling.temp.flatter", t=f"{temperature:.2f}"))

    final = steps.final_probs
    final_order = np.lexsort((np.arange(vocab), -final))  # most probable first, lower id among equals
    final_top = int(final_order[0])
    m = st.columns(4)
    m[0].metric(t("logits_sampling.metric.final_top"), token_labels(tokenizer, [final_top])[0])
    change = final[final_top] - probs[final_top]
    m[1].metric(t("logits_sampling.metric.final_top_prob"), f"{final[final_top]:.4f}",
                delta=f"{change:+.4f}" if abs(change) >= 5e-5 else None)
    m[2].metric(t("logits_sampling.metric.candidates"), f"{steps.n_candidates:,}",
                help=t("logits_sampling.metric.candidates.help", vocab=f"{vocab:,}"))
    entropy_change = steps.entropy_final_bits - steps.entropy_original_bits
    m[3].metric(t("logits_sampling.metric.entropy_final"), f"{steps.entropy_final_bits:.2f}",
                delta=f"{entropy_change:+.2f}" if abs(entropy_change) >= 0.005 else None, delta_color="off")

    # The bars follow the original ranking so a student sees the same tokens move.
    status = [
        t("logits_sampling.status.top_k") if steps.cut_by_top_k[i]
        # At T = 0 every token but the argmax ends at 0 whatever top-p says: greedy, not "kept".
        else t("logits_sampling.status.greedy") if temperature == 0 and final[i] == 0
        else t("logits_sampling.status.top_p") if steps.cut_by_top_p[i]
        else t("logits_sampling.status.kept")
        for i in top_ids
    ]
    show(
        cached(
            before_after_chart,
            top_labels, steps.original_probs[top_ids], final[top_ids], status,
            title=t("logits_sampling.chart.compare.title", t=f"{temperature:.2f}",
                    k=top_k if top_k else t("logits_sampling.off"), p=f"{top_p:.2f}"),
            x_title=t("logits_sampling.axis.prob"), y_title=t("logits_sampling.axis.token"),
            series_title=t("logits_sampling.legend.series"), original_name=t("logits_sampling.legend.original"),
            after_name=t("logits_sampling.legend.after"), status_title=t("logits_sampling.legend.status"),
        ),
        live=True,  # the knobs change its title and bars, not its layout: the browser swaps the data
    )

    n_cut_k = int(steps.cut_by_top_k.sum())
    n_cut_p = int(steps.cut_by_top_p.sum())
    mass_cut_k = float(steps.tempered_probs[steps.cut_by_top_k].sum())
    mass_cut_p = float(steps.after_top_k_probs[steps.cut_by_top_p].sum())
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(t("logits_sampling.cut.top_k", n=f"{n_cut_k:,}", mass=f"{mass_cut_k:.4f}") if top_k
                    else t("logits_sampling.cut.top_k_off"))
    with c2:
        st.markdown(t("logits_sampling.cut.top_p", n=f"{n_cut_p:,}", mass=f"{mass_cut_p:.4f}") if top_p < 1
                    else t("logits_sampling.cut.top_p_off"))

    table = pd.DataFrame({
        t("logits_sampling.table.token"): top_labels,
        t("logits_sampling.table.id"): top_ids,
        t("logits_sampling.table.logit"): np.round(last_logits[top_ids], 3),
        t("logits_sampling.table.original"): np.round(steps.original_probs[top_ids], 5),
        t("logits_sampling.table.tempered"): np.round(steps.tempered_probs[top_ids], 5),
        t("logits_sampling.table.after_k"): np.round(steps.after_top_k_probs[top_ids], 5),
        t("logits_sampling.table.final"): np.round(final[top_ids], 5),
        t("logits_sampling.table.status"): status,
    })
    with st.expander(t("logits_sampling.table.title"), expanded=False):
        st.dataframe(table, hide_index=True, width="stretch", key="logits_sampling_table")
        st.caption(t("logits_sampling.table.caption"))

    # --- 3. seeded draws ----------------------------------------------------------------------------
    st.header(t("logits_sampling.head.samples"))
    n_samples = st.slider(t("logits_sampling.n_samples"), min_value=1, max_value=MAX_SAMPLES, step=1,
                          **state.bind("logits_sampling_n_samples"))
    draws = sample(final, n=int(n_samples), seed=ctx.seed)
    counts = np.bincount(draws, minlength=vocab)
    # Show the most probable tokens after the knobs plus anything drawn; the rest is one bar.
    shown = [int(i) for i in final_order[final[final_order] > 0][:HISTOGRAM_TOKENS]]
    shown += [int(i) for i in np.flatnonzero(counts) if int(i) not in shown][: max(0, HISTOGRAM_TOKENS - len(shown))]
    labels = token_labels(tokenizer, shown)
    observed = [counts[i] / n_samples for i in shown]
    expected = [float(final[i]) for i in shown]
    shown_counts = [int(counts[i]) for i in shown]
    rest_count = int(n_samples - sum(shown_counts))
    rest_expected = float(max(0.0, 1.0 - sum(expected)))
    if rest_count > 0 or rest_expected > 1e-6:
        labels.append(t("logits_sampling.hist.other"))
        observed.append(rest_count / n_samples)
        expected.append(rest_expected)
        shown_counts.append(rest_count)
    show(
        cached(
            sample_histogram_chart,
            labels, observed, expected, shown_counts,
            title=t("logits_sampling.chart.hist.title", n=n_samples, seed=ctx.seed),
            x_title=t("logits_sampling.axis.token"), y_title=t("logits_sampling.axis.share"),
            series_title=t("logits_sampling.legend.series"), observed_name=t("logits_sampling.legend.observed"),
            expected_name=t("logits_sampling.legend.expected"), count_title=t("logits_sampling.axis.count"),
        ),
        live=True,  # the knobs and N change which tokens, their bars and the title: all data
    )
    most = int(np.argmax(counts))
    st.caption(t("logits_sampling.hist.caption", n=n_samples, seed=ctx.seed, token=escape_markdown(token_labels(tokenizer, [most])[0]),
                 count=int(counts[most]), distinct=int((counts > 0).sum())))


controls_section()

# --- 4. logit lens ------------------------------------------------------------------------------
st.header(t("logits_sampling.head.lens"))
st.markdown(t("logits_sampling.lens.explain"))
lens = lens_for(ctx.model_name, run.text, 5)
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

st.subheader(t("logits_sampling.try_title"))
st.markdown(t("logits_sampling.try_list"))
