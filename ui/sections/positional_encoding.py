"""Positional encoding sections: how a model that reads all tokens at once knows their order.

Sections: the sinusoidal table (any d_model, length and base) with its waves; one
position's vector (the seeds' d = 8, pos = 3 row); the relative-position property
PE(pos + k) = M_k · PE(pos); token embedding + positional encoding = the block input for the
prompt; and RoPE, which rotates q and k instead, so that q·k depends only on the offset.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

import ui.charts.common as draw

from core.engine import names

from core.lessons import positional
from ui.charts.positional import (
    PairPanel,
    RotationText,
    frequency_chart,
    matrix_chart,
    rotation_panels_vega,
    score_by_offset,
    waves,
)
from ui.i18n import t
from ui import state
from ui.page import Page
from ui.resources import memo
from ui.text import markdown_table
from ui.tokens import display_token

BASES = (100, 1000, 10000, 100000, 500000, 1000000)  # 10000: the 2017 paper; 500000: Llama 3's RoPE
MAX_POSITIONS = 256  # rows of the heatmap: enough to see the slowest waves start to move
MAX_SHOWN_POSITION = 100_000
MAX_OFFSET = 1000
MAX_MATRIX_SHOWN = 32  # M_k is drawn in full up to 32 × 32; beyond, its top-left corner
MAX_PAIRS_DRAWN = 4  # 2-D pictures side by side before they get too small to read
OFFSET_QUERY_POSITIONS = (20, 50, 100)  # three very different absolute positions, one curve
TABLE_ROWS_SHOWN = 10  # a longer table scrolls inside a box of about this many rows
ROW_PX = 36


def scrolling_table(header: list[str], rows: list[list[object]]) -> None:
    """A Markdown table (no data-grid module for the browser to load), in a box that scrolls
    when it is taller than ``TABLE_ROWS_SHOWN`` rows (d up to 512)."""
    text = markdown_table(header, rows)
    if len(rows) <= TABLE_ROWS_SHOWN:
        st.markdown(text)
    else:
        with st.container(height=ROW_PX * (TABLE_ROWS_SHOWN + 1) + 16):
            st.markdown(text)


def signed(value: float, digits: int = 3) -> str:
    """A number with a real minus sign (−), as printed in the curriculum.

    Example: signed(-0.98999) -> "−0.990"
    """
    text = f"{value:.{digits}f}"
    if text.startswith("-"):
        text = "−" + text[1:]
    return "0." + "0" * digits if text == "−0." + "0" * digits else text


@memo(maxsize=64)
def table(n_positions: int, d_model: int, base: float) -> np.ndarray:
    return positional.sinusoidal_table(n_positions, d_model, base)


def token_labels(page: Page) -> list[str]:
    """Axis labels "3·首都": position and visible token."""
    return [f"{i}·{display_token(tok)}" for i, tok in enumerate(page.run.tokens)]


# --- 1-3. the sinusoidal table, one position, the relative property ---------------------------
# The size controls sit in the outer fragment; the wave picker and the position/offset inputs
# are nested fragments, so moving one of them reruns only its own small section.
@st.fragment
def sinusoidal_sections() -> None:
    """The table for any size and base, its waves, one position and the relative property."""
    st.header(t("positional_encoding.sin.header"))
    st.markdown(t("positional_encoding.sin.explain"))
    st.latex(r"PE_{(pos,\,2k)} = \sin\!\left(\frac{pos}{\text{base}^{2k/d}}\right),\qquad "
             r"PE_{(pos,\,2k+1)} = \cos\!\left(\frac{pos}{\text{base}^{2k/d}}\right)")
    controls = st.columns(3)
    d_model = controls[0].slider(t("positional_encoding.sin.d_model"), min_value=4, max_value=512, step=2,
                                 **state.bind("pe_d_model"), help=t("positional_encoding.sin.d_model_help"))
    n_positions = controls[1].slider(t("positional_encoding.sin.positions"), min_value=2, max_value=MAX_POSITIONS,
                                     **state.bind("pe_positions"))
    base = controls[2].select_slider(t("positional_encoding.sin.base"), options=BASES, **state.bind("pe_base", options=BASES),
                                     format_func=lambda b: f"{b:,}", help=t("positional_encoding.sin.base_help"))
    pe = table(n_positions, d_model, float(base))
    matrix_chart(  # built once per (size, base, language, theme): shared by every session
        pe, key="pe_heatmap",
        title=t("positional_encoding.sin.heatmap_title", n=n_positions, d=d_model, base=f"{base:,}"),
        x_title=t("positional_encoding.axis.dimension"), y_title=t("positional_encoding.axis.position"),
        value_title=t("positional_encoding.axis.value"), height=min(700, 260 + 4 * n_positions),
    )
    st.caption(t("positional_encoding.sin.heatmap_caption"))
    wave_section(pe, d_model, float(base))
    position_sections(d_model, float(base))


@st.fragment
def wave_section(pe: np.ndarray, d_model: int, base: float) -> None:
    """Chosen dimension pairs as waves over the positions, with their periods."""
    half = d_model // 2
    periods = positional.pair_periods(d_model, base)
    default_pairs = sorted({0, half // 4, half - 1})  # fastest, a middle one, slowest
    pair_labels = [t("positional_encoding.sin.pair_option", k=k, a=2 * k, b=2 * k + 1, period=f"{periods[k]:,.1f}")
                   for k in range(half)]  # translated inside the run, looked up by the widget
    pairs = st.multiselect(t("positional_encoding.sin.pairs"), list(range(half)),
                           **state.bind("pe_pairs", default=default_pairs, items=range(half)),
                           format_func=pair_labels.__getitem__, max_selections=4,
                           placeholder=t("a11y.choose_options"))
    if pairs:
        draw.vega_cached(  # built once per input, shared by every session
            waves, (pe, sorted(pairs), periods),
            dict(title=t("positional_encoding.sin.waves_title"),
                 x_title=t("positional_encoding.axis.position"), y_title=t("positional_encoding.axis.value"),
                 series_title=t("positional_encoding.sin.series"),
                 series_label=t("positional_encoding.sin.series_label"),
                 period_title=t("positional_encoding.sin.period")),
            width="stretch",
        )
    st.markdown(t("positional_encoding.sin.frequencies", fast=f"{periods[0]:.2f}", slow=f"{periods[-1]:,.0f}",
                  last=half - 1))


@st.fragment
def position_sections(d_model: int, base: float) -> None:
    """One position's vector, then PE(pos + k) = M_k · PE(pos) checked at that position."""
    # --- 2. one position ----------------------------------------------------------------------
    st.header(t("positional_encoding.vec.header"))
    pos = st.number_input(t("positional_encoding.vec.position"), min_value=0, max_value=MAX_SHOWN_POSITION,
                          step=1, **state.bind("pe_position"))
    vector = positional.sinusoidal_vector(int(pos), d_model, base)
    divisors = positional.pair_divisors(d_model, base)
    dims = np.arange(d_model)
    scrolling_table(
        [t("positional_encoding.vec.col_dim"), t("positional_encoding.vec.col_pair"),
         t("positional_encoding.vec.col_formula"), t("positional_encoding.vec.col_value")],
        [[int(i), int(i) // 2, f"{'sin' if i % 2 == 0 else 'cos'}({pos} / {divisors[i // 2]:,.4g})", signed(v)]
         for i, v in zip(dims, vector)],
    )
    shown = ", ".join(signed(v) for v in vector[:16]) + (", …" if d_model > 16 else "")
    st.markdown(t("positional_encoding.vec.row", pos=pos, d=d_model, row=f"[{shown}]"))

    # --- 3. relative positions ----------------------------------------------------------------
    st.header(t("positional_encoding.rel.header"))
    st.markdown(t("positional_encoding.rel.explain"))
    st.latex(r"\begin{pmatrix}\sin((pos+k)\,\omega_j)\\ \cos((pos+k)\,\omega_j)\end{pmatrix} ="
             r"\begin{pmatrix}\cos k\omega_j & \sin k\omega_j\\ -\sin k\omega_j & \cos k\omega_j\end{pmatrix}"
             r"\begin{pmatrix}\sin(pos\,\omega_j)\\ \cos(pos\,\omega_j)\end{pmatrix}")
    offset = st.number_input(t("positional_encoding.rel.offset"), min_value=-MAX_OFFSET, max_value=MAX_OFFSET,
                             step=1, **state.bind("pe_offset"))
    if pos + offset < 0:
        st.warning(t("positional_encoding.rel.negative", pos=pos, k=offset))
        return
    check = positional.check_relative_position(int(pos), int(offset), d_model, base)
    shown_dims = min(d_model, MAX_MATRIX_SHOWN)  # beyond this the picture is only diagonal dots
    left, right = st.columns([3, 2])
    with left:
        dim_labels = [str(i) for i in range(shown_dims)]
        title_key = "positional_encoding.rel.matrix_title" if shown_dims == d_model \
            else "positional_encoding.rel.matrix_title_part"
        matrix_chart(
            check.matrix[:shown_dims, :shown_dims], key="pe_matrix",
            title=t(title_key, k=offset, d=d_model, shown=shown_dims),
            x_title=t("positional_encoding.rel.input_dim"), y_title=t("positional_encoding.rel.output_dim"),
            value_title=t("positional_encoding.axis.value"), x_labels=dim_labels, y_labels=dim_labels,
            height=min(640, 200 + 30 * shown_dims), cell_px=max(14, min(36, 320 // shown_dims)),
        )
    with right:
        scrolling_table(
            [t("positional_encoding.vec.col_dim"), f"PE({pos})", f"M_{offset}·PE({pos})", f"PE({pos + offset})"],
            [[int(i), signed(a, 4), signed(b, 4), signed(c, 4)]
             for i, a, b, c in zip(dims, check.pe_position, check.rotated, check.pe_target)],
        )
        st.metric(t("positional_encoding.rel.error"), f"{check.max_abs_error:.1e}")
    st.caption(t("positional_encoding.rel.caption", k=offset))


# --- 4. token embedding + position = block input ------------------------------------------------


def prompt_heatmap(matrix: np.ndarray, title_key: str, token_labels: list[str], bound: float | None = None) -> None:
    matrix_chart(
        matrix, key=f"pe_input_{title_key.rsplit('.', 1)[-1]}",
        title=t(title_key), x_title=t("positional_encoding.axis.dimension"),
        y_title=t("positional_encoding.axis.token"), value_title=t("positional_encoding.axis.value"),
        y_labels=token_labels, height=min(600, 170 + 30 * len(token_labels)), bound=bound,
    )


def input_section(page: Page) -> None:
    """The prompt's token embeddings, position vectors and their sum: the first block's input."""
    run, cfg, labels = page.run, page.config, token_labels(page)
    st.header(t("positional_encoding.input.header"))
    embed = run.trace[names.act_name("embed")]
    block_input = run.trace[names.act_name("resid_pre", layer=0)]
    if cfg.positional == "rope":
        st.info(t("positional_encoding.input.rope", model=page.model_name))
        prompt_heatmap(embed, "positional_encoding.input.embed_title", labels)
        st.caption(t("positional_encoding.input.rope_same", diff=f"{float(np.max(np.abs(block_input - embed))):.1e}"))
        return
    kind = t(f"positional_encoding.input.kind.{cfg.positional}")
    st.markdown(t("positional_encoding.input.explain", kind=kind))
    pos_embed = run.trace[names.act_name("pos_embed")]
    # One colour scale for the three: the same colour is the same number in all of them.
    shared = float(max(np.abs(m).max() for m in (embed, pos_embed, block_input)))
    prompt_heatmap(embed, "positional_encoding.input.embed_title", labels, shared)
    prompt_heatmap(pos_embed, "positional_encoding.input.pos_title", labels, shared)
    prompt_heatmap(block_input, "positional_encoding.input.sum_title", labels, shared)
    st.caption(t("positional_encoding.input.caption"))
    if cfg.scale_embeddings:
        st.caption(t("positional_encoding.input.scaled", d=cfg.d_model, factor=f"{cfg.d_model ** 0.5:.1f}"))


# --- 5. RoPE and this model -----------------------------------------------------------------------


def rope_section(page: Page) -> None:
    """RoPE's formula, what this model does for positions, then the rotation demo (a fragment)."""
    st.header(t("positional_encoding.rope.header"))
    st.markdown(t("positional_encoding.rope.explain"))
    st.latex(r"\text{RoPE}(x, m)_{[2i,\,2i+1]} = \begin{pmatrix}\cos m\theta_i & -\sin m\theta_i\\"
             r" \sin m\theta_i & \cos m\theta_i\end{pmatrix}\begin{pmatrix}x_{2i}\\ x_{2i+1}\end{pmatrix},\quad"
             r"\theta_i = \text{base}^{-2i/d_{head}}")
    theta = _model_positions(page)
    rope_demo(page, theta)


def _model_positions(page: Page) -> np.ndarray:
    """This model's RoPE frequencies, or its position table (learned or sinusoidal); returns the
    frequencies the demo rotates by (the model's own, or a textbook set for its head size)."""
    cfg, loaded = page.config, page.loaded
    model_label = page.model_name  # the preset's short name, as in the sidebar
    if cfg.positional == "rope":
        theta = loaded.model.rope_frequencies().astype(np.float64)
        st.success(t("positional_encoding.rope.model_uses_rope", model=model_label, base=f"{cfg.rope_base:,.0f}",
                     d_head=cfg.d_head, n=theta.size))
        draw.vega_cached(
            frequency_chart, (theta, 2 * math.pi / theta),
            dict(title=t("positional_encoding.rope.freq_title", model=model_label),
                 x_title=t("positional_encoding.rope.pair"), y_title=t("positional_encoding.rope.theta"),
                 period_title=t("positional_encoding.sin.period")),
            width="stretch",
        )
    else:
        theta = positional.rope_frequencies(cfg.d_head)
        st.info(t(f"positional_encoding.rope.model_uses_{cfg.positional}", model=model_label, d=cfg.d_model))
        model_table = loaded.model.positional_table(cfg.n_ctx)
        matrix_chart(
            model_table, key="pe_model_table",
            title=t(f"positional_encoding.rope.table_title_{cfg.positional}", model=model_label, n=cfg.n_ctx,
                    d=cfg.d_model),
            x_title=t("positional_encoding.axis.dimension"), y_title=t("positional_encoding.axis.position"),
            value_title=t("positional_encoding.axis.value"), height=520,
        )
        if cfg.positional == "sinusoidal":
            same = float(np.max(np.abs(model_table - positional.sinusoidal_table(cfg.n_ctx, cfg.d_model))))
            st.caption(t("positional_encoding.rope.table_matches", diff=f"{same:.1e}"))
    return theta


@st.fragment
def rope_demo(page: Page, theta: np.ndarray) -> None:
    """A query and a key rotated by their positions: q·k depends only on the offset."""
    st.subheader(t("positional_encoding.rope.demo_header"))
    run, seed, labels = page.run, page.seed, token_labels(page)
    model_cfg = page.config
    uses_rope = model_cfg.positional == "rope"
    if uses_rope:
        pick = st.columns(2)
        layer = pick[0].selectbox(t("positional_encoding.rope.layer"), range(model_cfg.n_layer),
                                  **state.bind("pe_rope_layer", options=range(model_cfg.n_layer)))
        head = pick[1].selectbox(t("positional_encoding.rope.head"), range(model_cfg.n_head),
                                 **state.bind("pe_rope_head", options=range(model_cfg.n_head)))
        q_all = run.trace[names.act_name("q", layer=layer)]  # (pos, head, d_head), before rotation
        k_all = run.trace[names.act_name("k", layer=layer)]
        q_vec = q_all[-1, head].astype(np.float64)
        k_vec = k_all[0, head * k_all.shape[1] // model_cfg.n_head].astype(np.float64)  # GQA: the K head this query head reads
        last = len(run.ids) - 1
        rotated = positional.rope_rotate(q_vec, last, theta)
        model_rotated = run.trace[names.act_name("rot_q", layer=layer)][last, head]
        st.caption(t("positional_encoding.rope.real_qk", q=labels[-1], k=labels[0], layer=layer, head=head,
                     diff=f"{float(np.max(np.abs(rotated - model_rotated))):.1e}"))
    else:
        q_vec, k_vec = positional.demo_query_key(model_cfg.d_head, seed=seed)
        st.caption(t("positional_encoding.rope.random_qk", d_head=model_cfg.d_head, seed=seed))

    rotation_view(q_vec, k_vec, model_cfg.n_ctx, theta)

    max_offset = min(40, model_cfg.n_ctx - 1)
    query_positions = [p for p in OFFSET_QUERY_POSITIONS if p < model_cfg.n_ctx] or [model_cfg.n_ctx - 1]
    scores = positional.rope_scores_by_offset(q_vec, k_vec, theta, query_positions, max_offset)
    draw.vega_cached(
        score_by_offset, (scores, query_positions),
        dict(title=t("positional_encoding.rope.offset_title"),
             x_title=t("positional_encoding.rope.offset_axis"), y_title=t("positional_encoding.rope.score"),
             series_title=t("positional_encoding.rope.series"),
             series_label=t("positional_encoding.rope.series_label")),
        width="stretch",
    )
    spread = float(np.nanmax(np.nanmax(scores, axis=0) - np.nanmin(scores, axis=0)))
    st.caption(t("positional_encoding.rope.offset_caption", spread=f"{spread:.1e}"))


@st.fragment
def rotation_view(q_vec: np.ndarray, k_vec: np.ndarray, n_ctx: int, theta: np.ndarray) -> None:
    """The 2-D pictures: moving m, n or the pairs reruns only this (the offset chart does not depend on them)."""
    n_pairs = theta.size
    controls = st.columns(3)
    m = controls[0].slider(t("positional_encoding.rope.m"), 0, n_ctx - 1, **state.bind("pe_rope_m", high=n_ctx - 1))
    n = controls[1].slider(t("positional_encoding.rope.n"), 0, n_ctx - 1, **state.bind("pe_rope_n", high=n_ctx - 1))
    default_pairs = sorted({0, n_pairs // 4, n_pairs // 2, n_pairs - 1})[:MAX_PAIRS_DRAWN]
    chosen = controls[2].multiselect(t("positional_encoding.rope.pairs"), list(range(n_pairs)),
                                     **state.bind("pe_rope_pairs", default=default_pairs, items=range(n_pairs)),
                                     max_selections=MAX_PAIRS_DRAWN, placeholder=t("a11y.choose_options"))
    panels = []
    for i in sorted(chosen):
        picture = positional.rope_pair_picture(q_vec[2 * i:2 * i + 2], k_vec[2 * i:2 * i + 2], m, n, float(theta[i]))
        panels.append(PairPanel(
            subtitle=t("positional_encoding.rope.panel", i=i, theta=f"{theta[i]:.3g}",
                       turn=f"{math.degrees((m - n) * theta[i]):.1f}°"),
            q=picture.q, k=picture.k, q_rotated=picture.q_rotated, k_rotated=picture.k_rotated,
        ))
    if panels:
        with st.container(key="pe_rope_panels"):  # a selector for the tests and the bench
            draw.vega_cached(
                rotation_panels_vega, (panels,), dict(text=RotationText(
                    title=t("positional_encoding.rope.rotation_title", m=m, n=n),
                    q_before=t("positional_encoding.rope.q_before"), k_before=t("positional_encoding.rope.k_before"),
                    q_after=t("positional_encoding.rope.q_after", m=m), k_after=t("positional_encoding.rope.k_after", n=n),
                    axis_even=t("positional_encoding.rope.axis_even"), axis_odd=t("positional_encoding.rope.axis_odd"),
                )),
                key="pe_rope_panels_chart",
            )
    st.markdown(t("positional_encoding.rope.angle_note", delta=m - n))

