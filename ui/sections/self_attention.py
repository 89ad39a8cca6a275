"""Self-attention sections: Q, K, V, scores, ÷√d_k, the causal mask, softmax and the weighted
sum on the seeds' "我 爱 你" numbers; a softmax lab; why ÷√d_k; multi-head vs one big head.

All numbers come from ``core.lessons.attention_math``; these sections only lay them out. The
knobs whose effect is small math on numbers the page holds (÷√d_k, the causal mask, the query
followed by hand, the softmax lab's scores) answer in the browser (``ui.components.lessons``);
the others live in fragments that rerun their own tab only.
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
from ui.components import lessons
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
    try:  # Q, K, V and Q·Kᵀ: ÷√d_k, the mask and the followed query (in the browser) do not change them
        steps = am.attention_steps(x, w_q, w_k, w_v, scale=False, causal=False)
    except am.InputProblem as problem:
        st.error(problem_text("X, W", problem))
        return
    tokens = clean_labels(state.get("sa_tokens"), len(x))
    _step_projections(steps, (x, w_q, w_k, w_v), tokens)
    if source == "seeds_as_written":
        st.warning(t("self_attention.as_written.warning", k2=vec(steps.k[2]), row=vec(steps.scores[0]), **toy_words()))
    _step_scores(steps, tokens)
    data = steps_data(steps, tokens, source)
    state.show_notes()
    lessons.attention(data, key="sa_steps")


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


def _step_scores(steps: am.AttentionSteps, tokens: list[str]) -> None:
    """Step 2: every query against every key (the browser takes it from here)."""
    st.subheader(t("self_attention.step2"))
    st.latex(r"\text{scores} = Q\,K^{\top}")
    st.caption(t("self_attention.step2.caption"))
    show_matrix(steps.scores, tokens, tokens, title=t("self_attention.chart.scores"),
                x_title=t("self_attention.axis.key"), y_title=t("self_attention.axis.query"),
                value_title=t("self_attention.axis.value"), cell=52)


STEPS_LABELS = {  # short name in the browser -> i18n key
    "scale": "self_attention.scale", "scale_help": "self_attention.scale.help", "mask": "self_attention.mask",
    "mask_help": "self_attention.mask.help", "query": "self_attention.query", "row": "self_attention.row",
    "step3": "self_attention.step3", "step3_off": "self_attention.step3.off", "chart_scaled": "self_attention.chart.scaled",
    "step4": "self_attention.step4", "step4_caption": "self_attention.step4.caption",
    "step4_off": "self_attention.step4.off", "chart_masked": "self_attention.chart.masked",
    "step5": "self_attention.step5", "step5_caption": "self_attention.step5.caption",
    "chart_weights": "self_attention.chart.weights", "step6": "self_attention.step6",
    "chart_output": "self_attention.chart.output", "axis_value": "self_attention.axis.value",
    "axis_weight": "self_attention.axis.weight", "axis_dim": "self_attention.axis.dim",
    "axis_key": "self_attention.axis.key", "axis_query": "self_attention.axis.query",
    "axis_token": "self_attention.axis.token", "hand_title": "self_attention.hand.title",
    "hand_dots": "self_attention.hand.dots", "hand_scaled": "self_attention.hand.scaled",
    "hand_masked": "self_attention.hand.masked", "hand_sum": "self_attention.hand.sum",
    "hand_softmax": "self_attention.hand.softmax", "hand_output": "self_attention.hand.output",
    "hand_summary": "self_attention.hand.summary", "seed_rounding": "self_attention.hand.seed_rounding",
    "numbers": "self_attention.browser.numbers", "formula5": "self_attention.browser.formula5",
    "formula6": "self_attention.browser.formula6",
}


def raw_toy_words() -> dict[str, str]:
    """{a}, {b}, {c} as plain text (the browser writes text, never Markdown: nothing to escape)."""
    typed = str(st.session_state.get(state.durable_key("sa_tokens"), "") or "").split()
    return dict(zip("abc", typed if len(typed) == 3 else example_tokens()))


def fitted(value: object, allowed: range | list[int], default: int) -> object:
    """A generally valid value that does not fit this input (query 5 of 3 tokens): the default,
    silently, as ``ui.state`` adapts a bound widget's value."""
    return value if value in allowed else default


def steps_data(steps: am.AttentionSteps, tokens: list[str], source: str) -> dict:
    """What the browser needs for steps 3-6 and the hand calculation, sent once per input."""
    return {
        "view": "steps",
        "knobs": lessons.knob_specs({"sa_scale": state.get("sa_scale"), "sa_mask": state.get("sa_mask"),
                                     "sa_query": fitted(state.get("sa_query"), range(len(tokens)), 0)}),
        "tokens": tokens, "q": steps.q.tolist(), "k": steps.k.tolist(), "v": steps.v.tolist(),
        "scores": steps.scores.tolist(), "words": raw_toy_words(), "seeds_source": source == "seeds",
        "labels": lessons.labels(STEPS_LABELS),
    }


# --- 2. softmax lab ------------------------------------------------------------------------


LAB_LABELS = {
    "case": "self_attention.lab.case", "scores": "self_attention.lab.scores",
    "scores_help": "self_attention.lab.scores.help", "problem": "self_attention.problem",
    **{f"problem_{code}": f"self_attention.problem.{code}" for code in (
        "empty", "not_a_number", "not_finite", "too_large", "too_many", "ragged", "shape", "all_masked",
        "not_a_vector")},
    "softmax_head": "self_attention.lab.softmax_head", "plain_head": "self_attention.lab.plain_head",
    "col_score": "self_attention.lab.col.score", "col_exp": "self_attention.lab.col.exp",
    "col_softmax": "self_attention.lab.col.softmax", "col_plain": "self_attention.lab.col.plain",
    "softmax_sum": "self_attention.lab.softmax_sum", "softmax_sum_plain": "self_attention.lab.softmax_sum_plain",
    "plain_sum": "self_attention.lab.plain_sum", "plain_division_by_zero": "self_attention.lab.plain.division_by_zero",
    "plain_masked": "self_attention.lab.plain.masked", "plain_negative": "self_attention.lab.plain.negative",
    "chart": "self_attention.lab.chart", "axis_weight": "self_attention.axis.weight", "method": "self_attention.lab.method",
}


def softmax_lab() -> None:
    """Softmax against plain normalising on scores the student types (in the browser: every
    keystroke recomputes there), then the seeds' cases."""
    st.markdown(t("self_attention.lab.intro"))
    words = raw_toy_words()
    cases = [{"name": name, "label": t(f"self_attention.lab.case.{name}", **words),
              "scores": ", ".join(num(s) for s in scores)} for name, scores, _ in am.SEED_SOFTMAX_CASES]
    # Untouched, the lab shows the first case's scores (and the link leaves them out).
    defaults = {"sa_lab_scores": cases[0]["scores"]}
    knobs = {"sa_lab_case": state.get("sa_lab_case"), "sa_lab_scores": state.get("sa_lab_scores", default=defaults["sa_lab_scores"])}
    state.show_notes()
    lessons.attention({"view": "lab", "knobs": lessons.knob_specs(knobs, defaults),
                       "cases": cases, "labels": lessons.labels(LAB_LABELS)}, key="sa_lab")
    _lab_cases()


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


MH_LABELS = {
    "heads": "self_attention.mh.heads", "scale": "self_attention.scale", "mask": "self_attention.mask",
    "x": "self_attention.mh.x", "split": "self_attention.mh.split", "slice": "self_attention.mh.slice",
    "head_weights": "self_attention.mh.head_weights", "seeds_note": "self_attention.mh.seeds_note",
    "big_head": "self_attention.mh.big_head", "big_weights": "self_attention.mh.big_weights",
    "favourite": "self_attention.mh.favourite", "sep": "self_attention.mh.sep",
    "compare_line": "self_attention.mh.compare_line", "concat": "self_attention.mh.concat",
    "concat_chart": "self_attention.mh.concat_chart", "w_o": "self_attention.mh.w_o", "output": "self_attention.mh.output",
    "w_o_note": "self_attention.mh.w_o_note", "axis_token": "self_attention.axis.token", "axis_dim": "self_attention.axis.dim",
    "axis_value": "self_attention.axis.value", "axis_key": "self_attention.axis.key", "axis_query": "self_attention.axis.query",
    "axis_weight": "self_attention.axis.weight", "axis_in_dim": "self_attention.axis.in_dim",
    "axis_out_dim": "self_attention.axis.out_dim", "numbers": "self_attention.browser.numbers",
}


def multi_head(seed: int) -> None:
    """The seeds' 3-token example split into heads, against one big head, then Concat · W_O:
    the head count and both toggles answer in the browser (``ui.components.lessons``)."""
    tokens = example_tokens()
    st.markdown(t("self_attention.mh.intro", **dict(zip("abc", tokens))))
    x = am.SEED_MULTIHEAD_X
    counts = am.head_counts(x.shape[1])
    default = counts[min(1, len(counts) - 1)]
    knobs = {"sa_mh_heads": fitted(state.get("sa_mh_heads", default=default), counts, default),
             "sa_mh_scale": state.get("sa_mh_scale"), "sa_mh_mask": state.get("sa_mh_mask")}
    state.show_notes()  # a crafted value fell back: say so in the page's language
    lessons.attention({
        "view": "mh", "knobs": lessons.knob_specs(knobs, {"sa_mh_heads": default}), "x": x.tolist(), "w_o": am.random_w_o(x.shape[1], seed).tolist(),
        "counts": counts, "tokens": tokens, "words": dict(zip("abc", tokens)), "labels": lessons.labels(MH_LABELS),
    }, key="sa_mh")


# --- the page's frame ----------------------------------------------------------------------


def prepare() -> dict[str, str]:
    """Before the title: translated option labels follow a language switch, an untouched example
    follows it too; returns the intro's words ({a}, {b}, {c})."""
    relabel_after_language_switch("sa_lang_seen", ("sa_source",))
    follow_language()
    return toy_words()


def tabs() -> list:
    """Step by step, the softmax lab, why ÷√d_k, multi-head."""
    return durable_tabs("sa_tab", {tab: t(f"self_attention.tab.{tab}") for tab in ("steps", "lab", "dk", "mh")})
