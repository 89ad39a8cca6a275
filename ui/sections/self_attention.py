"""Self-attention sections: Q, K, V, scores, ÷√d_k, the causal mask, softmax and the weighted
sum on the seeds' "我 爱 你" numbers; a softmax lab; why ÷√d_k; multi-head vs one big head.

All numbers come from ``core.lessons.attention_math``; these sections only lay them out. Each
tab is a fragment: its controls rerun that tab only.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd
import streamlit as st

import ui.charts.common as draw

from core.lessons import attention_math as am
from ui.charts.attention import grouped_bars, lines_over_dk, overlaid_histogram, value_matrix_spec
from ui.i18n import t, translate
from ui import state
from ui.page import durable_tabs, relabel_after_language_switch
from ui.resources import memo
from ui.text import escape_markdown

SOURCES = ("seeds", "seeds_as_written", "random")
MATRIX_KEYS = ("sa_x", "sa_wq", "sa_wk", "sa_wv")
SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
CURVE_D_KS = (2, 4, 8, 16, 32, 64, 128, 256, 512)
N_KEYS = 8  # keys per random query in the √d_k experiment (uniform softmax = 3 bits)


def sub(i: int) -> str:
    """Subscript digits: sub(12) -> '₁₂'."""
    return str(i).translate(SUBSCRIPT)


def num(v: float, decimals: int = 3) -> str:
    """A number as the seeds write it: integers plain, others with ``decimals`` places, −∞."""
    if np.isneginf(v):
        return "−∞"
    text = str(int(v)) if float(v).is_integer() and abs(v) < 1e9 else f"{v:.{decimals}f}"
    return text.replace("-", "−")  # the typographic minus, as in print


def short(v: float) -> str:
    """An input number kept short: 1.5, −0.5, 2 (at most 4 significant digits)."""
    return "−∞" if np.isneginf(v) else format(float(v), ".4g").replace("-", "−")


def vec(values: np.ndarray, decimals: int = 3) -> str:
    return "[" + ", ".join(num(v, decimals) for v in values) + "]"


def dims(n: int) -> list[str]:
    return [str(i + 1) for i in range(n)]


@memo(maxsize=512)
def matrix_spec(matrix: np.ndarray, rows: tuple[str, ...], cols: tuple[str, ...], options: tuple) -> dict:
    """A numbered matrix chart's spec, built once per distinct input (reruns stay fast)."""
    return value_matrix_spec(matrix, list(rows), list(cols), **dict(options))


def show_matrix(matrix: np.ndarray, rows: list[str], cols: list[str], **options) -> None:
    spec = matrix_spec(np.asarray(matrix, dtype=float), tuple(rows), tuple(cols), tuple(sorted(options.items())))
    draw.vega(spec=spec, width="content")


# --- source of the numbers --------------------------------------------------------------


# The textbook's 3-token example in the page's language, with the same numbers.
EXAMPLE_TOKENS: dict[str, tuple[str, ...]] = {"zh": am.SEED_TOKENS, "en": ("I", "love", "you")}


def example_tokens() -> list[str]:
    return list(EXAMPLE_TOKENS.get(st.session_state.get("lang", "en"), EXAMPLE_TOKENS["en"]))


def toy_words() -> dict[str, str]:
    """{a}, {b}, {c} for the texts: the three tokens the student typed, else the example's."""
    typed = str(st.session_state.get(state.durable_key("sa_tokens"), "") or "").split()
    words = [escape_markdown(w) for w in typed] if len(typed) == 3 else example_tokens()
    return dict(zip("abc", words))


def follow_language() -> None:
    """An untouched example follows a language switch: 我 爱 你 in 中文, I love you in English."""
    current = str(st.session_state.get(state.durable_key("sa_tokens"), "") or "")
    examples = {" ".join(tokens) for tokens in EXAMPLE_TOKENS.values()}
    wanted = " ".join(example_tokens())
    if state.get("sa_source") != "random" and current in examples and current != wanted:
        state.put("sa_tokens", wanted)


def source_matrices(source: str, seed: int) -> tuple[list[str], tuple[np.ndarray, ...]]:
    if source == "random":
        x, w_q, w_k, w_v = am.random_example(seed)
        return [t("self_attention.token_name", i=i) for i in range(len(x))], (x, w_q, w_k, w_v)
    x = am.SEED_X if source == "seeds" else am.SEED_X_AS_WRITTEN
    return example_tokens(), (x, am.SEED_W_Q, am.SEED_W_K, am.SEED_W_V)


def load_source(seed: int) -> None:
    """Fill the editable boxes from the chosen source (and remember what was loaded)."""
    source = state.get("sa_source")
    tokens, matrices = source_matrices(source, seed)
    state.put("sa_tokens", " ".join(tokens))
    for key, matrix in zip(MATRIX_KEYS, matrices):
        state.put(key, am.format_matrix(matrix))
    st.session_state["sa_loaded"] = (source, seed)


def clean_labels(text: str, n: int) -> list[str]:
    """Token labels typed by the user: printable, short, one per row of X, unique."""
    words = [
        "".join(ch for ch in w if unicodedata.category(ch)[0] != "C")[:12]
        for w in re.split(r"\s+", text.strip()) if w
    ]
    words = [w for w in words if w]
    if len(words) != n:
        return [t("self_attention.token_name", i=i) for i in range(n)]
    if len(set(words)) != n:
        return [f"{i}·{w}" for i, w in enumerate(words)]
    return words


def problem_text(name: str, problem: am.InputProblem) -> str:
    """A translated message from the problem's code (the core's English detail is not shown)."""
    return t("self_attention.problem", name=name, why=t(f"self_attention.problem.{problem.code}"))


# --- 1. step by step ---------------------------------------------------------------------


@st.fragment
def step_by_step(seed: int) -> None:
    """The six steps on the chosen (or typed) numbers, then one row worked by hand."""
    st.markdown(t("self_attention.steps.intro"))
    source = _source_choice(seed)
    _edit_boxes(source, seed)
    parsed = _parsed_inputs()
    if parsed is None:
        return
    x, w_q, w_k, w_v = parsed

    c1, c2, c3 = st.columns(3)
    scale = c1.toggle(t("self_attention.scale"), **state.bind("sa_scale"), help=t("self_attention.scale.help"))
    causal = c2.toggle(t("self_attention.mask"), **state.bind("sa_mask"), help=t("self_attention.mask.help"))
    try:
        steps = am.attention_steps(x, w_q, w_k, w_v, scale=scale, causal=causal)
    except am.InputProblem as problem:
        st.error(problem_text("X, W", problem))
        return
    tokens = clean_labels(state.get("sa_tokens"), len(x))
    lang = st.session_state.get("lang", "en")  # bound now: AppTest formats values outside the run
    query = c3.selectbox(t("self_attention.query"), list(range(len(x))),
                         **state.bind("sa_query", options=range(len(x))),
                         format_func=lambda i: f"{tokens[i]} ({translate('self_attention.row', lang, i=i)})")
    if query >= len(x):  # the matrices shrank under a kept choice
        query = 0

    _step_projections(steps, (x, w_q, w_k, w_v), tokens)
    if source == "seeds_as_written":
        st.warning(t("self_attention.as_written.warning", k2=vec(steps.k[2]), row=vec(steps.scores[0]), **toy_words()))
    _steps_scores_to_output(steps, tokens)
    walkthrough(steps, tokens, query)


def _source_choice(seed: int) -> str:
    """Where the numbers come from (the seeds, the seeds as printed, random): fills the boxes."""
    boxes_missing = any(state.durable_key(k) not in st.session_state for k in (*MATRIX_KEYS, "sa_tokens"))
    new_seed = state.get("sa_source") == "random" and st.session_state.get("sa_loaded") != ("random", seed)
    if boxes_missing or new_seed:
        load_source(seed)

    lang = st.session_state.get("lang", "en")  # bound now: AppTest formats values outside the run
    st.radio(t("self_attention.source"), SOURCES, **state.bind("sa_source", then=load_source, args=(seed,)),
             horizontal=True, format_func=lambda s: translate(f"self_attention.source.{s}", lang))
    source = state.get("sa_source")
    st.caption(t(f"self_attention.source.{source}.note", **toy_words()))
    return source


def _edit_boxes(source: str, seed: int) -> None:
    """The tokens and the four matrices, editable."""
    with st.expander(t("self_attention.edit"), expanded=False):
        st.caption(t("self_attention.edit.help"))
        # A value that fails its check (a crafted message) falls back to the chosen source's example.
        source_tokens, source_values = source_matrices(source, seed)
        st.text_input(t("self_attention.edit.tokens"), **state.bind("sa_tokens", default=" ".join(source_tokens)),
                      max_chars=120)
        columns = st.columns(4)
        for column, key, name, matrix in zip(columns, MATRIX_KEYS, ("X", "W_Q", "W_K", "W_V"), source_values):
            with column:
                st.text_area(name, **state.bind(key, default=am.format_matrix(matrix)), height=150, max_chars=2000)


def _parsed_inputs() -> list[np.ndarray] | None:
    """X, W_Q, W_K, W_V from the boxes, or None after saying what is wrong with one."""
    parsed: list[np.ndarray] = []
    for key, name in zip(MATRIX_KEYS, ("X", "W_Q", "W_K", "W_V")):
        # X: one row per token (≤ MAX_TOKENS); W: one row per dimension of X (≤ MAX_DIM).
        max_rows = am.MAX_TOKENS if key == "sa_x" else am.MAX_DIM
        try:
            parsed.append(am.parse_matrix(state.get(key), max_rows=max_rows))
        except am.InputProblem as problem:
            st.error(problem_text(name, problem))
            return None
    return parsed


def _step_projections(steps: am.AttentionSteps, inputs: tuple[np.ndarray, ...], tokens: list[str]) -> None:
    """Step 1: X and the three weight matrices, then Q, K and V."""
    x, w_q, w_k, w_v = inputs
    tok_t, dim_t, val_t = t("self_attention.axis.token"), t("self_attention.axis.dim"), t("self_attention.axis.value")

    st.subheader(t("self_attention.step1"))
    st.latex(r"Q = X\,W_Q \qquad K = X\,W_K \qquad V = X\,W_V")
    cols = st.columns(4)
    for col, m, name, x_t, y_t, rows in (
        (cols[0], x, "X", dim_t, tok_t, tokens),
        (cols[1], w_q, "W_Q", t("self_attention.axis.out_dim"), t("self_attention.axis.in_dim"), dims(len(w_q))),
        (cols[2], w_k, "W_K", t("self_attention.axis.out_dim"), t("self_attention.axis.in_dim"), dims(len(w_k))),
        (cols[3], w_v, "W_V", t("self_attention.axis.out_dim"), t("self_attention.axis.in_dim"), dims(len(w_v))),
    ):
        with col:
            show_matrix(m, rows, dims(m.shape[1]), title=t("self_attention.matrix", name=name,
                 shape=f"{m.shape[0]}×{m.shape[1]}"), x_title=x_t, y_title=y_t, value_title=val_t, cell=34)
    cols = st.columns(3)
    for col, m, name in ((cols[0], steps.q, "Q = X W_Q"), (cols[1], steps.k, "K = X W_K"), (cols[2], steps.v, "V = X W_V")):
        with col:
            show_matrix(m, tokens, dims(m.shape[1]), title=t("self_attention.matrix", name=name,
                 shape=f"{m.shape[0]}×{m.shape[1]}"), x_title=dim_t, y_title=tok_t, value_title=val_t, cell=40)


def _steps_scores_to_output(steps: am.AttentionSteps, tokens: list[str]) -> None:
    """Steps 2-6: scores, ÷√d_k, the causal mask, softmax, the weighted sum."""
    scale, causal = steps.scale, steps.causal
    dim_t, val_t = t("self_attention.axis.dim"), t("self_attention.axis.value")
    tok_t = t("self_attention.axis.token")
    key_t, query_t = t("self_attention.axis.key"), t("self_attention.axis.query")

    st.subheader(t("self_attention.step2"))
    st.latex(r"\text{scores} = Q\,K^{\top}")
    st.caption(t("self_attention.step2.caption"))
    show_matrix(steps.scores, tokens, tokens, title=t("self_attention.chart.scores"),
                      x_title=key_t, y_title=query_t, value_title=val_t, cell=52)

    st.subheader(t("self_attention.step3"))
    if scale:
        st.latex(rf"\frac{{Q K^{{\top}}}}{{\sqrt{{d_k}}}} = \frac{{QK^{{\top}}}}{{\sqrt{{{steps.d_k}}}}} = \frac{{QK^{{\top}}}}{{{steps.divisor:.3f}}}")
        show_matrix(steps.scaled, tokens, tokens, title=t("self_attention.chart.scaled", d_k=steps.d_k),
                          x_title=key_t, y_title=query_t, value_title=val_t, cell=52)
    else:
        st.info(t("self_attention.step3.off", d_k=steps.d_k))

    st.subheader(t("self_attention.step4"))
    if causal:
        st.caption(t("self_attention.step4.caption"))
        show_matrix(steps.masked, tokens, tokens, title=t("self_attention.chart.masked"),
                          x_title=key_t, y_title=query_t, value_title=val_t, cell=52)
    else:
        st.info(t("self_attention.step4.off", **toy_words()))

    st.subheader(t("self_attention.step5"))
    st.latex(r"\text{weights}_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}")
    show_matrix(steps.weights, tokens, tokens, title=t("self_attention.chart.weights"), x_title=key_t,
                      y_title=query_t, value_title=t("self_attention.axis.weight"), value_format=".3f",
                      diverging=False, cell=52)
    st.caption(t("self_attention.step5.caption"))

    st.subheader(t("self_attention.step6"))
    st.latex(r"\text{output} = \text{weights} \cdot V")
    show_matrix(steps.output, tokens, dims(steps.output.shape[1]), title=t("self_attention.chart.output"),
                      x_title=dim_t, y_title=tok_t, value_title=val_t, value_format=".3f", cell=52)


def walkthrough(steps: am.AttentionSteps, tokens: list[str], i: int) -> None:
    st.subheader(t("self_attention.hand.title", token=escape_markdown(tokens[i])))
    walk = am.row_walkthrough(steps, i)
    lines = []
    for j, products in enumerate(walk.products):
        terms = " + ".join(f"{short(a)}×{short(b)}" for a, b in zip(steps.q[i], steps.k[j]))
        lines.append(f"Q{sub(i)} · K{sub(j)} = {terms} = {short(walk.dots[j])}   ← {tokens[i]} → {tokens[j]}")
    st.markdown(t("self_attention.hand.dots"))
    st.code("\n".join(lines), language=None)
    row = walk.softmax.scores
    notes = []
    if steps.scale:
        notes.append(t("self_attention.hand.scaled", divisor=f"{walk.divisor:.3f}", row=vec(steps.scaled[i])))
    if walk.masked.any():
        notes.append(t("self_attention.hand.masked", row=vec(row)))
    for note in notes:
        st.markdown(note)
    sm = walk.softmax
    shift = f" − {num(sm.shift)}" if sm.shift else ""
    def power(s: float) -> str:
        text = f"{num(s)}{shift}"
        return text if not shift and s >= 0 else f"({text})"

    exp_lines = [f"e^{power(s)} = {sm.exps[j]:.3f}" for j, s in enumerate(row)]
    exp_lines.append(t("self_attention.hand.sum") + " = " + " + ".join(f"{e:.3f}" for e in sm.exps)
                     + f" = {sm.total:.3f}")
    exp_lines += [f"softmax{sub(j)} = {sm.exps[j]:.3f} / {sm.total:.3f} = {sm.weights[j]:.3f}"
                  for j in range(len(row))]
    st.markdown(t("self_attention.hand.softmax"))
    st.code("\n".join(exp_lines), language=None)
    weights = steps.weights[i]
    out_terms = " + ".join(f"{weights[j]:.3f} × [{', '.join(short(v) for v in steps.v[j])}]"
                           for j in range(len(weights)))
    st.markdown(t("self_attention.hand.output"))
    st.code(f"Output{sub(i)} = {out_terms}\n        = {vec(walk.output)}", language=None)
    percent = ", ".join(f"{escape_markdown(tokens[j])} {100 * w:.1f}%" for j, w in enumerate(weights))
    st.markdown(t("self_attention.hand.summary", token=escape_markdown(tokens[i]), percent=percent))
    if state.get("sa_source") == "seeds" and i == 0 and not steps.scale and not steps.causal:
        st.caption(t("self_attention.hand.seed_rounding"))


# --- 2. softmax lab ------------------------------------------------------------------------


def lab_case_scores() -> str:
    """The chosen case's scores as the lab's field shows them (the field's default: a link carries
    the scores only when the student typed others)."""
    case = state.get("sa_lab_case")
    for name, scores, _ in am.SEED_SOFTMAX_CASES:
        if name == case:
            return ", ".join(num(s) for s in scores)
    return ""


def set_lab_case() -> None:
    state.put("sa_lab_scores", lab_case_scores())


@st.fragment
def softmax_lab() -> None:
    """Softmax against plain normalising on scores the student types, and the seeds' cases."""
    st.markdown(t("self_attention.lab.intro"))
    if state.durable_key("sa_lab_scores") not in st.session_state:
        set_lab_case()
    cases = [name for name, _, _ in am.SEED_SOFTMAX_CASES]
    lang = st.session_state.get("lang", "en")  # bound now: AppTest formats values outside the run
    c1, c2 = st.columns([1, 2])
    c1.selectbox(t("self_attention.lab.case"), cases, **state.bind("sa_lab_case", then=set_lab_case),
                 format_func=lambda c, words=toy_words(): translate(f"self_attention.lab.case.{c}", lang, **words))
    c2.text_input(t("self_attention.lab.scores"), **state.bind("sa_lab_scores", default=lab_case_scores()), max_chars=300,
                  help=t("self_attention.lab.scores.help"))
    try:
        scores = am.parse_vector(state.get("sa_lab_scores"))
        steps = am.softmax_steps(scores)
    except am.InputProblem as problem:
        st.error(problem_text(t("self_attention.lab.scores"), problem))
        steps = None
    if steps is not None:
        _lab_comparison(scores, steps)
    _lab_cases()


def _lab_comparison(scores: np.ndarray, steps: am.SoftmaxSteps) -> None:
    """The typed scores through softmax and through plain normalising, side by side."""
    plain = am.plain_normalise(scores)
    labels = [f"x{sub(j)} = {num(s)}" for j, s in enumerate(scores)]
    left, right = st.columns(2)
    with left:
        st.markdown(t("self_attention.lab.softmax_head"))
        st.dataframe(pd.DataFrame({
            t("self_attention.lab.col.score"): [num(s) for s in scores],
            t("self_attention.lab.col.exp"): [f"{e:.3f}" for e in steps.exps],
            t("self_attention.lab.col.softmax"): [f"{w:.3f}" for w in steps.weights],
        }), hide_index=True, width="stretch")
        st.caption(t("self_attention.lab.softmax_sum", total=f"{steps.total:.3f}",
                     shift=num(steps.shift)) if steps.shift else
                   t("self_attention.lab.softmax_sum_plain", total=f"{steps.total:.3f}"))
    with right:
        st.markdown(t("self_attention.lab.plain_head"))
        if plain.weights is None:
            st.error(t(f"self_attention.lab.plain.{plain.problem}"))
        else:
            st.dataframe(pd.DataFrame({
                t("self_attention.lab.col.score"): [num(s) for s in scores],
                t("self_attention.lab.col.plain"): [f"{w:.3f}" for w in plain.weights],
            }), hide_index=True, width="stretch")
            st.caption(t("self_attention.lab.plain_sum", total=num(plain.total)))
            if plain.problem == "negative":
                st.warning(t("self_attention.lab.plain.negative"))
    series = {t("self_attention.lab.col.softmax"): list(steps.weights),
              t("self_attention.lab.col.plain"): list(plain.weights) if plain.weights is not None
              else [None] * len(scores)}
    draw.vega_cached(grouped_bars, (labels, series), dict(title=t("self_attention.lab.chart"),
                                                         x_title=t("self_attention.lab.col.score"),
                                                         y_title=t("self_attention.axis.weight"),
                                                         legend_title=t("self_attention.lab.method")),
                     width="stretch")  # built once per input, shared by every session


def _lab_cases() -> None:
    """The seeds' worked cases: softmax, the seeds' printed numbers, plain normalising."""
    st.markdown(t("self_attention.lab.cases_head"))
    rows = []
    for name, case_scores, printed in am.SEED_SOFTMAX_CASES:
        plain = am.plain_normalise(case_scores)
        rows.append({
            t("self_attention.lab.col.case"): t(f"self_attention.lab.case.{name}", **toy_words()),
            t("self_attention.lab.col.scores"): vec(np.array(case_scores)),
            t("self_attention.lab.col.softmax"): vec(am.softmax(np.array(case_scores)), 3),
            t("self_attention.lab.col.seeds"): "[" + ", ".join(f"{v:g}" for v in printed) + "]",
            t("self_attention.lab.col.plain"): t(f"self_attention.lab.plain.short.{plain.problem}")
            if plain.weights is None else vec(plain.weights, 3) + (
                "  ⚠ " + t("self_attention.lab.plain.short.negative") if plain.problem == "negative" else ""),
        })
    st.table(pd.DataFrame(rows))
    st.caption(t("self_attention.lab.cases_caption"))


# --- 3. why ÷√d_k --------------------------------------------------------------------------


@memo(maxsize=32)
def experiment(d_k: int, seed: int) -> am.ScalingExperiment:
    return am.scaling_experiment(d_k, seed, n_keys=N_KEYS)


@memo(maxsize=8)
def curve(seed: int) -> am.SaturationCurve:
    return am.saturation_curve(CURVE_D_KS, seed, n_keys=N_KEYS)


@st.fragment
def why_scale(seed: int) -> None:
    """Random queries and keys at a chosen d_k: how ÷√d_k keeps the softmax from saturating."""
    st.markdown(t("self_attention.dk.intro"))
    d_k = st.slider(t("self_attention.dk.slider"), min_value=2, max_value=512, step=1, **state.bind("sa_dk"),
                    help=t("self_attention.dk.slider.help", n=N_KEYS))
    ex = experiment(int(d_k), seed)
    raw_name, scaled_name = t("self_attention.dk.raw"), t("self_attention.dk.scaled")
    m = st.columns(3)
    m[0].metric(t("self_attention.dk.metric.std"), f"{ex.dots.std():.2f} → {ex.scaled.std():.2f}",
                help=t("self_attention.dk.metric.std.help", sqrt=f"{np.sqrt(d_k):.2f}"))
    m[1].metric(t("self_attention.dk.metric.max"), f"{ex.max_weight_raw:.3f} → {ex.max_weight_scaled:.3f}",
                help=t("self_attention.dk.metric.max.help", uniform=f"{1 / N_KEYS:.3f}"))
    m[2].metric(t("self_attention.dk.metric.entropy"), f"{ex.entropy_raw:.2f} → {ex.entropy_scaled:.2f}",
                help=t("self_attention.dk.metric.entropy.help", max=f"{np.log2(N_KEYS):.0f}"))
    st.caption(t("self_attention.dk.metric.caption"))
    left, right = st.columns(2)
    with left:
        draw.vega_cached(overlaid_histogram, ({raw_name: ex.dots, scaled_name: ex.scaled},),
                         dict(title=t("self_attention.dk.hist", d_k=d_k),
                              x_title=t("self_attention.dk.hist.x"), y_title=t("self_attention.dk.hist.y"),
                              legend_title=t("self_attention.dk.legend")), width="stretch")
    with right:
        keys = [f"K{sub(j)}" for j in range(N_KEYS)]
        draw.vega_cached(grouped_bars, (keys, {raw_name: list(ex.weights_raw[0]),
                                               scaled_name: list(ex.weights_scaled[0])}),
                         dict(title=t("self_attention.dk.example", d_k=d_k),
                              x_title=t("self_attention.axis.key"), y_title=t("self_attention.axis.weight"),
                              legend_title=t("self_attention.dk.legend")), width="stretch")
    c = curve(seed)
    draw.vega_cached(lines_over_dk, (c.d_ks, {raw_name: c.max_weight_raw, scaled_name: c.max_weight_scaled}, int(d_k)),
                     dict(title=t("self_attention.dk.curve"), x_title="dₖ", y_title=t("self_attention.dk.metric.max"),
                          legend_title=t("self_attention.dk.legend")), width="stretch")
    st.markdown(t("self_attention.dk.explain"))


# --- 4. multi-head vs one big head ------------------------------------------------------------


@st.fragment
def multi_head(seed: int) -> None:
    """The seeds' 3-token example split into heads, against one big head, then Concat · W_O."""
    st.markdown(t("self_attention.mh.intro", **dict(zip("abc", example_tokens()))))
    x = am.SEED_MULTIHEAD_X
    d = x.shape[1]
    tokens = example_tokens()
    c1, c2, c3 = st.columns(3)
    counts = am.head_counts(d)
    n_heads = c1.selectbox(t("self_attention.mh.heads"), counts,
                           **state.bind("sa_mh_heads", default=counts[min(1, len(counts) - 1)], options=counts))
    scale = c2.toggle(t("self_attention.scale"), **state.bind("sa_mh_scale"))
    causal = c3.toggle(t("self_attention.mask"), **state.bind("sa_mh_mask"))
    w_o = am.random_w_o(d, seed)
    steps = am.multi_head_steps(x, int(n_heads), w_o=w_o, scale=scale, causal=causal)
    tok_t, dim_t, val_t = t("self_attention.axis.token"), t("self_attention.axis.dim"), t("self_attention.axis.value")
    key_t, query_t, weight_t = t("self_attention.axis.key"), t("self_attention.axis.query"), t("self_attention.axis.weight")

    show_matrix(x, tokens, dims(d), title=t("self_attention.mh.x"), x_title=dim_t, y_title=tok_t,
                      value_title=val_t, cell=40)
    st.markdown(t("self_attention.mh.split", h=steps.n_heads, d=d, d_head=steps.d_head))
    per_row = min(steps.n_heads, 3)
    for start in range(0, steps.n_heads, per_row):
        cols = st.columns(per_row)
        for col, h in zip(cols, range(start, min(start + per_row, steps.n_heads))):
            with col:
                lo = h * steps.d_head
                show_matrix(steps.q[h], tokens, [str(lo + c + 1) for c in range(steps.d_head)],
                                  title=t("self_attention.mh.slice", h=h + 1), x_title=dim_t, y_title=tok_t,
                                  value_title=val_t, cell=36)
                show_matrix(steps.weights[h], tokens, tokens, title=t("self_attention.mh.head_weights", h=h + 1),
                                  x_title=key_t, y_title=query_t, value_title=weight_t, value_format=".3f",
                                  diverging=False, cell=48)
    st.caption(t("self_attention.mh.seeds_note", **dict(zip("abc", example_tokens()))))

    st.markdown(t("self_attention.mh.big_head", d=d))
    show_matrix(steps.single.weights, tokens, tokens, title=t("self_attention.mh.big_weights", d=d),
                      x_title=key_t, y_title=query_t, value_title=weight_t, value_format=".3f",
                      diverging=False, cell=48)
    lines = []
    for i, tok in enumerate(tokens):
        per_head = t("self_attention.mh.sep").join(
            t("self_attention.mh.favourite", h=h + 1, token=tokens[int(np.argmax(steps.weights[h, i]))],
              pct=f"{100 * steps.weights[h, i].max():.0f}")
            for h in range(steps.n_heads))
        big = tokens[int(np.argmax(steps.single.weights[i]))]
        lines.append(t("self_attention.mh.compare_line", token=tok, heads=per_head, big=big,
                       pct=f"{100 * steps.single.weights[i].max():.0f}"))
    st.markdown("\n".join(lines))
    _concat_and_project(steps, w_o, tokens, d)


def _concat_and_project(steps: am.MultiHeadSteps, w_o: np.ndarray, tokens: list[str], d: int) -> None:
    """The heads' outputs side by side, W_O, and the projected result."""
    tok_t, dim_t, val_t = t("self_attention.axis.token"), t("self_attention.axis.dim"), t("self_attention.axis.value")
    st.markdown(t("self_attention.mh.concat"))
    st.latex(r"\text{MultiHead}(X) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)\, W_O")
    cols = st.columns(3)
    with cols[0]:
        show_matrix(steps.concat, tokens, dims(d), title=t("self_attention.mh.concat_chart"), x_title=dim_t,
                          y_title=tok_t, value_title=val_t, value_format=".2f", cell=40)
    with cols[1]:
        show_matrix(w_o, dims(d), dims(d), title=t("self_attention.mh.w_o"), x_title=t("self_attention.axis.out_dim"),
                          y_title=t("self_attention.axis.in_dim"), value_title=val_t, cell=34)
    with cols[2]:
        show_matrix(steps.output, tokens, dims(d), title=t("self_attention.mh.output"), x_title=dim_t,
                          y_title=tok_t, value_title=val_t, value_format=".2f", cell=40)
    st.caption(t("self_attention.mh.w_o_note"))


# --- the page's frame ----------------------------------------------------------------------


def prepare() -> dict[str, str]:
    """Before the title: translated option labels follow a language switch, an untouched example
    follows it too; returns the intro's words ({a}, {b}, {c})."""
    relabel_after_language_switch("sa_lang_seen", ("sa_source", "sa_query", "sa_lab_case"))
    follow_language()
    return toy_words()


def tabs() -> list:
    """Step by step, the softmax lab, why ÷√d_k, multi-head."""
    return durable_tabs("sa_tab", {tab: t(f"self_attention.tab.{tab}") for tab in ("steps", "lab", "dk", "mh")})
