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
    frequency_chart,
    matrix_chart,
)
from ui.components import lessons
from ui.i18n import t
from ui import state
from ui.page import Page
from ui.tokens import display_token

BASES = (100, 1000, 10000, 100000, 500000, 1000000)  # 10000: the 2017 paper; 500000: Llama 3's RoPE
MAX_POSITIONS = 256  # rows of the heatmap: enough to see the slowest waves start to move
MAX_SHOWN_POSITION = 100_000
MAX_OFFSET = 1000
MAX_MATRIX_SHOWN = 32  # M_k is drawn in full up to 32 × 32; beyond, its top-left corner
MAX_PAIRS_DRAWN = 4  # 2-D pictures side by side before they get too small to read
OFFSET_QUERY_POSITIONS = (20, 50, 100)  # three very different absolute positions, one curve
TABLE_ROWS_SHOWN = 10  # a longer table scrolls inside a box of about this many rows


def token_labels(page: Page) -> list[str]:
    """Axis labels "3·首都": position and visible token."""
    return [f"{i}·{display_token(tok)}" for i, tok in enumerate(page.run.tokens)]


# --- 1-3. the sinusoidal table, one position, the relative property ---------------------------
# Drawn in the browser (ui.components.lessons): the sizes, the base, the pairs, the position and
# the offset recompute there with zero websocket messages; the three views share the knobs, so
# d_model redraws the table, the vector and M_k together. Headings and formulas stay here.

SIN_LABELS = {  # short name in the browser -> i18n key
    "d_model": "positional_encoding.sin.d_model", "d_model_help": "positional_encoding.sin.d_model_help",
    "positions": "positional_encoding.sin.positions", "base": "positional_encoding.sin.base",
    "base_help": "positional_encoding.sin.base_help", "heatmap_title": "positional_encoding.sin.heatmap_title",
    "heatmap_caption": "positional_encoding.sin.heatmap_caption", "pairs": "positional_encoding.sin.pairs",
    "pair_option": "positional_encoding.sin.pair_option", "waves_title": "positional_encoding.sin.waves_title",
    "series": "positional_encoding.sin.series", "series_label": "positional_encoding.sin.series_label",
    "period": "positional_encoding.sin.period", "frequencies": "positional_encoding.sin.frequencies",
    "axis_dimension": "positional_encoding.axis.dimension", "axis_position": "positional_encoding.axis.position",
    "axis_value": "positional_encoding.axis.value", "numbers": "positional_encoding.browser.numbers",
    "invalid": "positional_encoding.browser.invalid",
}
VECTOR_LABELS = {
    "position": "positional_encoding.vec.position", "col_dim": "positional_encoding.vec.col_dim",
    "col_pair": "positional_encoding.vec.col_pair", "col_formula": "positional_encoding.vec.col_formula",
    "col_value": "positional_encoding.vec.col_value", "row": "positional_encoding.vec.row",
    "invalid": "positional_encoding.browser.invalid",
}
RELATIVE_LABELS = {
    "offset": "positional_encoding.rel.offset", "negative": "positional_encoding.rel.negative",
    "matrix_title": "positional_encoding.rel.matrix_title", "matrix_title_part": "positional_encoding.rel.matrix_title_part",
    "input_dim": "positional_encoding.rel.input_dim", "output_dim": "positional_encoding.rel.output_dim",
    "error": "positional_encoding.rel.error", "caption": "positional_encoding.rel.caption",
    "col_dim": "positional_encoding.vec.col_dim", "axis_value": "positional_encoding.axis.value",
    "numbers": "positional_encoding.browser.numbers", "invalid": "positional_encoding.browser.invalid",
}
SIN_KNOBS = ("pe_d_model", "pe_positions", "pe_base", "pe_pairs", "pe_position", "pe_offset")


def sinusoidal_limits() -> dict[str, object]:
    """What each knob may be (``ui.state`` declares the same ranges; the browser checks again)."""
    return {
        "d_model": [4, 512, 2], "positions": [2, MAX_POSITIONS], "bases": list(BASES),
        "position": [0, MAX_SHOWN_POSITION], "offset": [-MAX_OFFSET, MAX_OFFSET], "max_pairs": 4,
        "matrix_shown": MAX_MATRIX_SHOWN, "table_rows": TABLE_ROWS_SHOWN,
    }


def default_pairs(count: int) -> list[int]:
    """The pairs drawn until the student picks: the fastest, a middle one and the slowest."""
    return sorted({0, count // 4, count - 1})


def rope_default_pairs(count: int) -> list[int]:
    return sorted({0, count // 4, count // 2, count - 1})[:MAX_PAIRS_DRAWN]


def chosen_pairs(name: str, default: list[int]) -> list[int] | None:
    """A durable pair choice (checked by ``ui.state``), or None while it is the default: the
    browser then follows the default for whatever width it draws."""
    value = state.get(name, default=default)
    return None if value == default else value


def sinusoidal_knobs() -> dict[str, object]:
    """The durable values (checked by ``ui.state``); ``pe_pairs`` None: the default pairs."""
    knobs = {name: state.get(name) for name in SIN_KNOBS if name != "pe_pairs"}
    knobs["pe_pairs"] = chosen_pairs("pe_pairs", default_pairs(int(knobs["pe_d_model"]) // 2))
    state.show_notes()  # a crafted value fell back: say so in the page's language
    return knobs


def _sin_view(view: str, mapping: dict[str, str]) -> None:
    knobs = sinusoidal_knobs()
    defaults = {"pe_pairs": default_pairs(int(knobs["pe_d_model"]) // 2)}
    lessons.positional({"view": view, "knobs": lessons.knob_specs(knobs, defaults), "limits": sinusoidal_limits(),
                        "labels": lessons.labels(mapping)}, key=f"pe_{view}")


def sinusoidal_sections() -> None:
    """The table for any size and base, its waves, one position and the relative property."""
    st.header(t("positional_encoding.sin.header"))
    st.markdown(t("positional_encoding.sin.explain"))
    st.latex(r"PE_{(pos,\,2k)} = \sin\!\left(\frac{pos}{\text{base}^{2k/d}}\right),\qquad "
             r"PE_{(pos,\,2k+1)} = \cos\!\left(\frac{pos}{\text{base}^{2k/d}}\right)")
    _sin_view("table", SIN_LABELS)
    st.header(t("positional_encoding.vec.header"))
    _sin_view("vector", VECTOR_LABELS)
    st.header(t("positional_encoding.rel.header"))
    st.markdown(t("positional_encoding.rel.explain"))
    st.latex(r"\begin{pmatrix}\sin((pos+k)\,\omega_j)\\ \cos((pos+k)\,\omega_j)\end{pmatrix} ="
             r"\begin{pmatrix}\cos k\omega_j & \sin k\omega_j\\ -\sin k\omega_j & \cos k\omega_j\end{pmatrix}"
             r"\begin{pmatrix}\sin(pos\,\omega_j)\\ \cos(pos\,\omega_j)\end{pmatrix}")
    _sin_view("relative", RELATIVE_LABELS)


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


ROPE_LABELS = {
    "layer": "positional_encoding.rope.layer", "head": "positional_encoding.rope.head",
    "real_qk": "positional_encoding.rope.real_qk", "random_qk": "positional_encoding.rope.random_qk",
    "m": "positional_encoding.rope.m", "n": "positional_encoding.rope.n", "pairs": "positional_encoding.rope.pairs",
    "panel": "positional_encoding.rope.panel", "rotation_title": "positional_encoding.rope.rotation_title",
    "q_before": "positional_encoding.rope.q_before", "k_before": "positional_encoding.rope.k_before",
    "q_after": "positional_encoding.rope.q_after", "k_after": "positional_encoding.rope.k_after",
    "axis_even": "positional_encoding.rope.axis_even", "axis_odd": "positional_encoding.rope.axis_odd",
    "angle_note": "positional_encoding.rope.angle_note", "offset_title": "positional_encoding.rope.offset_title",
    "offset_axis": "positional_encoding.rope.offset_axis", "score": "positional_encoding.rope.score",
    "series": "positional_encoding.rope.series", "series_label": "positional_encoding.rope.series_label",
    "offset_caption": "positional_encoding.rope.offset_caption",
}
ROPE_KNOBS = ("pe_rope_layer", "pe_rope_head", "pe_rope_m", "pe_rope_n", "pe_rope_pairs")
MAX_SENT_QK_NUMBERS = 60_000  # every head's q and k up to this many numbers (a large model: the server picks)


def rope_demo(page: Page, theta: np.ndarray) -> None:
    """A query and a key rotated by their positions: q·k depends only on the offset. Every
    knob answers in the browser; for a RoPE model every layer's and head's q and k are sent once
    (a very large model: the layer and head are picked here, the rest in the browser)."""
    st.subheader(t("positional_encoding.rope.demo_header"))
    run, cfg, labels = page.run, page.config, token_labels(page)
    knobs = {name: state.get(name) for name in ROPE_KNOBS if name != "pe_rope_pairs"}
    for name in ("pe_rope_m", "pe_rope_n"):  # a position past this model's context: its last one
        knobs[name] = min(int(knobs[name]), cfg.n_ctx - 1)
    for name, count in (("pe_rope_layer", cfg.n_layer), ("pe_rope_head", cfg.n_head)):
        knobs[name] = knobs[name] if knobs[name] < count else 0
    knobs["pe_rope_pairs"] = chosen_pairs("pe_rope_pairs", rope_default_pairs(theta.size))
    state.show_notes()
    layers = heads = 0
    if cfg.positional == "rope":
        last = len(run.ids) - 1
        pairs = [(layer, head) for layer in range(cfg.n_layer) for head in range(cfg.n_head)]
        if len(pairs) * cfg.d_head * 2 <= MAX_SENT_QK_NUMBERS:
            layers, heads = cfg.n_layer, cfg.n_head
        else:
            pick = st.columns(2)
            layer = pick[0].selectbox(t("positional_encoding.rope.layer"), range(cfg.n_layer),
                                      **state.bind("pe_rope_layer", options=range(cfg.n_layer)))
            head = pick[1].selectbox(t("positional_encoding.rope.head"), range(cfg.n_head),
                                     **state.bind("pe_rope_head", options=range(cfg.n_head)))
            pairs = [(layer, head)]
        qk = {}
        for layer, head in pairs:
            q_all = run.trace[names.act_name("q", layer=layer)]  # (pos, head, d_head), before rotation
            k_all = run.trace[names.act_name("k", layer=layer)]
            q_vec = q_all[-1, head].astype(np.float64)
            k_vec = k_all[0, head * k_all.shape[1] // cfg.n_head].astype(np.float64)  # GQA: the K head this query head reads
            model_rotated = run.trace[names.act_name("rot_q", layer=layer)][last, head]
            diff = float(np.max(np.abs(positional.rope_rotate(q_vec, last, theta) - model_rotated)))
            qk[f"{layer},{head}"] = {"q": q_vec.tolist(), "k": k_vec.tolist(), "diff": diff}
    else:
        q_vec, k_vec = positional.demo_query_key(cfg.d_head, seed=page.seed)
        qk = {"0,0": {"q": q_vec.tolist(), "k": k_vec.tolist(), "diff": None}}
    lessons.positional({
        "view": "rope", "knobs": lessons.knob_specs(knobs, {"pe_rope_pairs": rope_default_pairs(theta.size)}),
        "theta": theta.tolist(), "n_ctx": cfg.n_ctx, "qk": qk, "layers": layers,
        "heads": heads, "query_label": labels[-1], "key_label": labels[0], "seed": page.seed,
        "query_positions": list(OFFSET_QUERY_POSITIONS), "max_pairs": MAX_PAIRS_DRAWN, "max_offset": 40,
        "labels": lessons.labels(ROPE_LABELS),
    }, key="pe_rope")
