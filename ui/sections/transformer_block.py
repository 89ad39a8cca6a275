"""The transformer block's sections: one layer drawn, the residual stream and its attribution, live ablation,
the normalisation lab, the FFN (activations, neurons, key-value memory) and a toy MoE router.

All maths is in ``core.lessons.block`` and ``core.engine.model`` (ablation: ``run_with_trace(ids, ablate=...)``);
these sections pick values, draw charts and explain. Each interactive section is a fragment.

The layer and token pickers feed sections 1, 2 (writes, attribution), 4 (live norm), 5 (FFN,
neuron memory) and 6 (router). They and those parts are one fragment (``picked_sections``,
called at the end of the page), drawn into slots the sections leave for them: a picker reruns
them, not the sidebar, the prompt-only charts or the other labs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import ui.charts.block as charts
from core.lessons import block
from core.engine import names
from core.engine.model import Ablation, GPTConfig
from core.lessons.param_count import TEXTBOOK_MOE, count_parameters, spec_from_config
from ui.block_diagram import DEFAULT_FONT_PX, PRESENTER_FONT_PX, layer_svg, pre_post_svg
from ui.charts.common import presenter_on, vega
from ui.charts.output import token_labels
from ui import state
from ui.i18n import t, translate
from ui.page import Page
from ui.resources import PromptRun, get_model, memo, run_prompt, shared
from ui.text import markdown_table
from ui.tokens import display_token

MAX_X_VALUES = 16
MAX_ABS_X = 1e6
HEATMAP_NEURONS = 24
N_EXPERTS, TOP_K = 8, 2
ANCHORS = {"x": "tb-residual", "ln1": "tb-norm", "attn": "tb-residual", "add1": "tb-ablation", "ln2": "tb-norm",
           "ffn": "tb-ffn", "add2": "tb-ablation", "y": "tb-moe"}


@memo(maxsize=256)
def ablated_logits(model_name: str, ids: tuple[int, ...], ablation: Ablation) -> np.ndarray:
    """Last-position logits of one ablated run (shared; the model itself is never changed)."""
    logits, _ = get_model(model_name).model.run_with_trace(list(ids), ablate=ablation)
    return logits[-1]


@memo(maxsize=64)
def head_effects(model_name: str, ids: tuple[int, ...]) -> tuple[int, np.ndarray, np.ndarray]:
    """Every head ablated on its own (one forward pass each), shared per (model, prompt)."""
    return block.single_head_effects(get_model(model_name).model, ids)


@memo(maxsize=128)
def prompt_norms(model_name: str, text: str) -> block.ResidualNorms:
    """Residual-stream norms of one prompt, shared: a full rerun of this page reads them again."""
    return block.residual_norms(run_prompt(model_name, text).trace)


@memo(maxsize=128)
def attribution(model_name: str, text: str, token_id: int, position: int) -> block.Attribution:
    run = run_prompt(model_name, text)
    return block.direct_logit_attribution(get_model(model_name).model, run.trace, token_id, position)


@memo(maxsize=256)
def neuron_tokens(model_name: str, layer: int, neuron: int) -> block.NeuronTokens:
    """The tokens one neuron writes toward (a product with the whole unembedding), shared per choice."""
    return block.neuron_output_tokens(get_model(model_name).model, layer, neuron, k=10)


def neuron_index(model_name: str) -> block.NeuronIndex:
    """Top-firing corpus positions of every neuron, computed once per model and shared."""
    def compute(loaded) -> block.NeuronIndex:
        small = loaded.config.n_layer * loaded.config.d_mlp <= 8192  # our models: ~1 s; a GPT-2-sized one gets fewer texts
        return block.build_neuron_index(loaded.model, loaded.tokenizer, block.corpus_documents(240 if small else 40))

    return shared(model_name, "block.neuron_index", compute)


@memo(maxsize=4)
def textbook_tables(lang: str) -> dict[str, str]:
    """The page's fixed tables (the textbook's normalisation samples, LayerNorm vs BatchNorm,
    the MoE models) as Markdown, built once per language: as data frames they cost every full
    rerun an Arrow conversion each."""
    def tr(key: str, **fmt) -> str:
        return translate(f"transformer_block.{key}", lang, **fmt)

    samples = block.TEXTBOOK_SAMPLES
    sample_names = [tr("norm.batch.sample", i=i + 1) for i in range(len(samples))]
    dims = [tr("norm.batch.dim", i=j) for j in range(len(samples[0]))]
    rows_ln, means_ln, stds_ln = block.normalize_table(samples, "sample")
    rows_bn, means_bn, stds_bn = block.normalize_table(samples, "feature")

    def num(v: float) -> str:
        return f"{float(v):.3f}"

    compare_rows = ["direction", "scope", "batch", "train_infer", "length"]
    return {
        "raw": markdown_table(["", *dims], [[name, *(f"{v:g}" for v in row)] for name, row in zip(sample_names, samples)]),
        "ln": markdown_table(["", *dims, "μ", "σ"],
                             [[name, *map(num, row), num(m), num(sd)]
                              for name, row, m, sd in zip(sample_names, rows_ln, means_ln, stds_ln)]),
        "bn": markdown_table(["", *dims], [[name, *map(num, row)] for name, row in zip(sample_names, rows_bn)]
                             + [["μ", *map(num, means_bn)], ["σ", *map(num, stds_bn)]]),
        "compare": markdown_table(["", "LayerNorm", "BatchNorm"],
                                  [[tr(f"norm.cmp.{r}"), tr(f"norm.cmp.{r}.ln"), tr(f"norm.cmp.{r}.bn")] for r in compare_rows]),
        "moe": markdown_table(
            [tr("moe.col.model"), tr("moe.col.total"), tr("moe.col.experts"), tr("moe.col.per_token"), tr("moe.col.active"),
             tr("moe.col.share")],
            [[name, f"{total / 1e9:,.0f} B", experts, per_token, f"~{active / 1e9:,.0f} B", f"{100 * active / total:.1f} %"]
             for name, total, experts, per_token, active in TEXTBOOK_MOE]),
    }


def parse_numbers(text: str) -> list[float] | None:
    """Comma- or space-separated numbers; None when anything is not a plain finite number."""
    parts = [p for p in text.replace("，", ",").replace(",", " ").split() if p]
    if not 2 <= len(parts) <= MAX_X_VALUES:
        return None
    try:
        values = [float(p.replace("−", "-")) for p in parts]
    except ValueError:
        return None
    if not all(math.isfinite(v) and abs(v) <= MAX_ABS_X for v in values):
        return None
    return values


def kind_name(kind: str, lang: str) -> str:
    """The Overview's name of a norm/activation kind ("层归一化 LayerNorm"); an unknown kind as it is."""
    text = translate(f"overview.kind.{kind}", lang)
    return kind if text.startswith("⟦") else text


def layer_name(layer: int) -> str:
    """Widget option labels stay language-neutral ("L2", "L1·H3"): the same in both languages."""
    return f"L{layer}"


def head_name(layer_head: tuple[int, int]) -> str:
    return f"L{layer_head[0]}·H{layer_head[1]}"


@dataclass(frozen=True)
class BlockView:
    """What every section of this page reads: the page, its token labels and the model's kinds."""

    page: Page
    labels: list[str]  # "3·首都": position and visible token
    norm_name: str  # "层归一化 LayerNorm"
    mlp_name: str
    presenting: bool  # larger letters in the drawings, and the room they need (≈16 px on screen)

    @property
    def run(self) -> PromptRun:
        return self.page.run

    @property
    def cfg(self) -> GPTConfig:
        return self.page.config

    @property
    def n(self) -> int:
        return len(self.page.run.ids)


def block_view(page: Page) -> BlockView:
    cfg = page.config
    return BlockView(page, [f"{i}·{display_token(tok)}" for i, tok in enumerate(page.run.tokens)],
                     kind_name(cfg.norm, page.lang), kind_name(cfg.mlp, page.lang), presenter_on())


# --- 1. one layer, drawn ------------------------------------------------------------------------


def layer_section(view: BlockView) -> DeltaGenerator:
    """The section's header; returns the slot ``picked_sections`` draws the pickers and the layer into."""
    page, run = view.page, view.run
    st.header(t("transformer_block.layer.header"), anchor="tb-layer")
    if st.session_state.get("tb_token_prompt") != (page.model_name, run.text):  # a new prompt starts at its last token
        if "tb_token_prompt" in st.session_state:
            state.put("tb_token", view.n - 1)
        st.session_state["tb_token_prompt"] = (page.model_name, run.text)
    return st.container()


def layer_part(view: BlockView) -> tuple[int, int]:
    """The pickers and the drawing of the chosen layer; returns (layer, position)."""
    cfg, n, labels, presenting = view.cfg, view.n, view.labels, view.presenting
    norm_name, mlp_name = view.norm_name, view.mlp_name
    pick = st.columns(2)
    layer = pick[0].selectbox(t("transformer_block.pick.layer"), list(range(cfg.n_layer)),
                              **state.bind("tb_layer", options=range(cfg.n_layer)), format_func=layer_name)
    position = pick[1].selectbox(t("transformer_block.pick.token"), list(range(n)),
                                 **state.bind("tb_token", default=n - 1, options=range(n)), format_func=lambda i: labels[i])
    layer, position = int(layer), int(position)
    ffn_shape = (f"{cfg.d_model}→{cfg.d_mlp}→{cfg.d_model}" if cfg.mlp != "swiglu"
                 else f"{cfg.d_model}→2×{cfg.d_mlp}→{cfg.d_model}")
    shapes = {
        "x": f"{n} × {cfg.d_model}", "ln1": norm_name, "attn": t("transformer_block.layer.heads", h=cfg.n_head, n=n),
        "add1": f"{n} × {cfg.d_model}", "ln2": norm_name, "ffn": f"{mlp_name}: {ffn_shape}", "add2": f"{n} × {cfg.d_model}",
        "y": f"{n} × {cfg.d_model}",
    }
    diagram_labels = {k: t(f"transformer_block.layer.node.{k}", layer=layer) for k in shapes} | {
        "skip": t("transformer_block.layer.skip")}
    drawing, words = st.columns([1, 1] if presenting else [2, 3])  # side by side on a wide screen, stacked on a phone
    drawing = drawing.container(key="tb_diagrams")
    # An SVG laid out on the server (sent through Markdown: Streamlit's HTML element strips SVG);
    # only our own translated labels and shapes are in it, escaped all the same.
    drawing.markdown(layer_svg(diagram_labels, shapes, ANCHORS,
                               font_size=PRESENTER_FONT_PX if presenting else DEFAULT_FONT_PX),
                     unsafe_allow_html=True)
    words.caption(t("transformer_block.layer.caption", layer=layer, n=n, d=cfg.d_model, d_mlp=cfg.d_mlp, norm=norm_name,
                    mlp=mlp_name))
    return layer, position


# --- 2. residual stream and direct logit attribution ----------------------------------------------


def residual_section(view: BlockView) -> DeltaGenerator:
    """The residual stream's norm at every stage; returns the slot for the chosen token's parts."""
    cfg, labels = view.cfg, view.labels
    st.header(t("transformer_block.resid.header"), anchor="tb-residual")
    st.markdown(t("transformer_block.resid.explain"))
    norms = prompt_norms(view.page.model_name, view.run.text)
    stage_labels = []
    stage_values = []
    for L in range(cfg.n_layer):
        for kind, values in (("pre", norms.pre), ("mid", norms.mid), ("post", norms.post)):
            if kind == "pre" and L > 0:
                continue  # pre of layer L is post of layer L-1
            stage_labels.append(t(f"transformer_block.resid.stage.{kind}", layer=L))
            stage_values.append(values[L])
    vega(charts.heat(np.stack(stage_values), tuple(stage_labels), tuple(labels),
                     title=t("transformer_block.resid.norm_title"), x_title=t("transformer_block.axis.token"),
                     y_title=t("transformer_block.axis.stage"), value_title=t("transformer_block.axis.norm"),
                     value_format=".2f"), width="stretch")
    return st.container()


def writes_part(view: BlockView, position: int) -> None:
    """What each layer's attention and MLP write at the chosen token, beside the stream they add to."""
    cfg, labels = view.cfg, view.labels
    norms = prompt_norms(view.page.model_name, view.run.text)
    write_series = [t("transformer_block.resid.series.pre"), t("transformer_block.resid.series.attn"),
                    t("transformer_block.resid.series.mlp")]
    writes = np.stack([norms.pre[:, position], norms.attn_out[:, position], norms.mlp_out[:, position]])
    vega(charts.stable(charts.grouped_bars(
        tuple(t("transformer_block.pick.layer_option", n=L) for L in range(cfg.n_layer)), tuple(write_series), writes,
        title=t("transformer_block.resid.write_title", token=labels[position]),
        x_title=t("transformer_block.axis.layer"), y_title=t("transformer_block.axis.norm"),
        series_title=t("transformer_block.axis.vector"))), width="stretch", live=True)


@st.fragment
def dla_section(view: BlockView, position: int) -> None:
    """Direct logit attribution: how much each head and MLP pushes one next token."""
    run, labels, tokenizer = view.run, view.labels, view.page.loaded.tokenizer
    st.subheader(t("transformer_block.dla.header"))
    st.markdown(t("transformer_block.dla.explain", norm=view.norm_name))
    top_ids, _ = block.top_next(run.logits[position], 10)
    options = [int(i) for i in top_ids]
    names_shown = token_labels(tokenizer, options)
    target = st.selectbox(t("transformer_block.dla.target"), options,
                          **state.bind("tb_dla_target", default=options[0], options=options),
                          format_func=lambda i: names_shown[options.index(i)])
    result = attribution(view.page.model_name, run.text, int(target), position)
    part_labels, kinds = [], []
    for kind, L, h in zip(result.kinds, result.layers, result.heads):
        part_labels.append(t(f"transformer_block.dla.part.{kind}", layer=L, head=h))
        kinds.append(t(f"transformer_block.dla.kind.{kind}"))
    cols = st.columns(3)
    cols[0].metric(t("transformer_block.dla.metric.logit"), f"{result.logit:.4f}")
    cols[1].metric(t("transformer_block.dla.metric.sum"), f"{result.total:.4f}")
    cols[2].metric(t("transformer_block.dla.metric.diff"), f"{result.total - result.logit:.1e}")
    vega(charts.stable(charts.bars(
        tuple(part_labels), tuple(result.values.tolist()),
        title=t("transformer_block.dla.chart_title", token=names_shown[options.index(target)], pos=labels[position]),
        value_title=t("transformer_block.axis.logit_share"), label_title=t("transformer_block.axis.part"),
        color_labels=tuple(kinds), color_title=t("transformer_block.axis.kind"),
        colors=tuple(charts.KIND_COLORS[k] for k in dict.fromkeys(result.kinds)))), width="stretch", live=True)
    st.caption(t("transformer_block.dla.caption", scale=f"{result.scale:.4f}"))


# --- 3. ablation --------------------------------------------------------------------------------


def ablation_and_gradients(view: BlockView) -> None:
    """Switch parts off and watch the next token (a fragment), then why the residual path matters."""
    st.header(t("transformer_block.ablate.header"), anchor="tb-ablation")
    st.markdown(t("transformer_block.ablate.explain"))
    ablation_section(view)
    gradient_section()


@st.fragment
def ablation_section(view: BlockView) -> None:
    """The next token before and after the chosen parts are switched off."""
    _after_ablation(view, _ablation_choice(view.cfg))


def _ablation_choice(cfg: GPTConfig) -> Ablation:
    """Heads, attention layers, MLP layers and residual paths to switch off."""
    stride = state.TB_HEAD_STRIDE  # a head is stored as layer * stride + head
    head_options = [L * stride + h for L in range(cfg.n_layer) for h in range(cfg.n_head)]
    layer_options = list(range(cfg.n_layer))
    c = st.columns(4)
    heads = c[0].multiselect(t("transformer_block.ablate.heads"), head_options,
                             **state.bind("tb_ablate_heads", items=head_options),
                             placeholder=t("transformer_block.ablate.placeholder"),
                             format_func=lambda i: head_name(divmod(i, stride)))
    attn_layers = c[1].multiselect(t("transformer_block.ablate.attn"), layer_options, **state.bind("tb_ablate_attn", items=layer_options),
                                   placeholder=t("transformer_block.ablate.placeholder"),
                                   format_func=layer_name)
    mlp_layers = c[2].multiselect(t("transformer_block.ablate.mlp"), layer_options, **state.bind("tb_ablate_mlp", items=layer_options),
                                  placeholder=t("transformer_block.ablate.placeholder"),
                                  format_func=layer_name)
    no_resid = c[3].multiselect(t("transformer_block.ablate.resid"), layer_options, **state.bind("tb_ablate_resid", items=layer_options),
                                placeholder=t("transformer_block.ablate.placeholder"),
                                format_func=layer_name)
    return Ablation(heads=frozenset(divmod(int(i), stride) for i in heads), attn_layers=frozenset(map(int, attn_layers)),
                    mlp_layers=frozenset(map(int, mlp_layers)), no_residual=frozenset(map(int, no_resid)))


def _after_ablation(view: BlockView, ablation: Ablation) -> None:
    """Before and after, side by side, whether the top token changed, and the strongest single head."""
    run, tokenizer = view.run, view.page.loaded.tokenizer
    before_ids, before_p = block.top_next(run.logits[-1], 5)
    # Nothing switched off is the prompt's own run: no second forward pass (a new prompt's rerun).
    after_logits = run.logits[-1] if ablation.is_empty() else ablated_logits(view.page.model_name, tuple(run.ids), ablation)
    after_ids, after_p = block.top_next(after_logits, 5)
    if ablation.is_empty():
        st.info(t("transformer_block.ablate.none"))
    left, right = st.columns(2)
    for col, ids, probs, key in ((left, before_ids, before_p, "before"), (right, after_ids, after_p, "after")):
        with col:
            vega(charts.bars(tuple(token_labels(tokenizer, [int(i) for i in ids])), tuple(probs.tolist()),
                             title=t(f"transformer_block.ablate.{key}_title"), value_title=t("transformer_block.axis.prob"),
                             label_title=t("transformer_block.axis.next_token")), width="stretch")
    if not ablation.is_empty():
        changed = int(before_ids[0]) != int(after_ids[0])
        top = token_labels(tokenizer, [int(before_ids[0]), int(after_ids[0])])
        st.markdown(t("transformer_block.ablate.changed" if changed else "transformer_block.ablate.same",
                      before=top[0], after=top[1]))
    st.caption(t("transformer_block.ablate.tip"))
    if st.button(t("transformer_block.ablate.find"), key="tb_ablate_find"):
        top, probs, new_top = head_effects(view.page.model_name, tuple(run.ids))
        L, h = (int(v) for v in np.unravel_index(np.argmin(probs), probs.shape))
        shown = token_labels(tokenizer, [top, int(new_top[L, h])])
        p_before = float(block.softmax(run.logits[-1])[top])
        st.markdown(t("transformer_block.ablate.found", head=head_name((L, h)), token=shown[0],
                      before=f"{p_before:.3f}", after=f"{probs[L, h]:.3f}", new=shown[1]))


@st.fragment
def gradient_section() -> None:
    """Gradients through many layers: shrinking, growing, or kept by the residual path."""
    st.subheader(t("transformer_block.grad.header"))
    st.markdown(t("transformer_block.grad.explain"))
    depth = st.slider(t("transformer_block.grad.depth"), min_value=4, max_value=96, step=4, **state.bind("tb_grad_depth"))
    paths = block.gradient_paths(int(depth))
    series = {t("transformer_block.grad.series.small"): tuple(paths["0.9"]),
              t("transformer_block.grad.series.large"): tuple(paths["1.1"]),
              t("transformer_block.grad.series.residual"): tuple(paths["residual"])}
    vega(charts.lines(tuple(range(depth + 1)), series, title=t("transformer_block.grad.title", n=depth),
                      x_title=t("transformer_block.grad.axis.depth"), y_title=t("transformer_block.grad.axis.factor"),
                      series_title=t("transformer_block.axis.series"), log_y=True, x_format=".0f"), width="stretch")
    c = st.columns(3)
    c[0].metric("0.9^" + str(depth), f"{paths['0.9'][-1]:.4g}", help=t("transformer_block.grad.small_help",
                                                                        pct=f"{100 * paths['0.9'][-1]:.2g}"))
    c[1].metric("1.1^" + str(depth), f"{paths['1.1'][-1]:.4g}")
    c[2].metric(t("transformer_block.grad.residual_metric"), "≥ 1")


# --- 4. normalisation lab -----------------------------------------------------------------------


def norm_section(view: BlockView) -> DeltaGenerator:
    """The normalisation lab, the textbook's LayerNorm-vs-BatchNorm tables, pre- and post-norm;
    returns the slot for the chosen layer's live norm (between the tables and the drawings)."""
    st.header(t("transformer_block.norm.header"), anchor="tb-norm")
    st.markdown(t("transformer_block.norm.explain"))
    norm_lab()
    _batch_tables(view.page.lang)
    slot = st.container()
    _pre_post(view)
    return slot


@st.fragment
def norm_lab() -> None:
    """LayerNorm and RMSNorm on numbers the student types."""
    raw = st.text_input(t("transformer_block.norm.x"), max_chars=300, **state.bind("tb_norm_x"),
                        help=t("transformer_block.norm.x_help", n=MAX_X_VALUES))
    values = parse_numbers(raw)
    if values is None:
        st.warning(t("transformer_block.norm.bad_x", n=MAX_X_VALUES))
        values = list(block.TEXTBOOK_X)
    try:
        ln = block.layer_norm(values)
        rms = block.rms_norm(values)
    except ValueError:
        st.warning(t("transformer_block.norm.flat"))
        return
    c = st.columns(3)
    c[0].metric("μ", f"{ln.mean:.4g}")
    c[1].metric(t("transformer_block.norm.sigma"), f"{ln.scale:.4g}")
    c[2].metric("RMS", f"{rms.scale:.4g}")
    table = pd.DataFrame({
        "x": [f"{v:g}" for v in values],
        t("transformer_block.norm.col.centred"): [f"{v - ln.mean:.4f}" for v in values],
        "LayerNorm": [f"{v:.4f}" for v in ln.normalized],
        "RMSNorm": [f"{v:.4f}" for v in rms.normalized],
    })
    st.dataframe(table, hide_index=True, width="stretch", key="tb_norm_table")
    if tuple(values) == block.TEXTBOOK_X:
        st.markdown(t("transformer_block.norm.textbook_note", value=f"{ln.normalized[1]:.3f}"))
    idx = tuple(f"x[{i}]" for i in range(len(values)))
    vega(charts.grouped_bars(idx, ("x", "LayerNorm", "RMSNorm"), np.stack([values, ln.normalized, rms.normalized]),
                             title=t("transformer_block.norm.chart_title"), x_title=t("transformer_block.axis.dim"),
                             y_title=t("transformer_block.axis.value"), series_title=t("transformer_block.axis.series"),
                             value_format=".4f"), width="stretch")


def _batch_tables(lang: str) -> None:
    """The textbook's samples normalised per sample (LayerNorm) and per feature (BatchNorm)."""
    st.subheader(t("transformer_block.norm.batch.header"))
    st.markdown(t("transformer_block.norm.batch.explain"))
    tables = textbook_tables(lang)
    # Tables of short cells keep each cell on one line and scroll sideways on a phone (as a data
    # frame did) instead of breaking "样本 1" into a column of single characters. Static CSS.
    st.html("<style>[class*='st-key-tb_table'] [data-testid='stMarkdownContainer'] { overflow-x: auto; } "
            "[class*='st-key-tb_table'] th, [class*='st-key-tb_table'] td { white-space: nowrap; }</style>")
    st.markdown(t("transformer_block.norm.batch.raw"))
    st.container(key="tb_table_raw").markdown(tables["raw"])
    side_by_side = st.columns(2)
    with side_by_side[0]:
        st.markdown(t("transformer_block.norm.batch.ln"))
        st.container(key="tb_table_ln").markdown(tables["ln"])
    with side_by_side[1]:
        st.markdown(t("transformer_block.norm.batch.bn"))
        st.container(key="tb_table_bn").markdown(tables["bn"])
    st.markdown(tables["compare"])  # sentences: they wrap


@st.fragment
def live_norm(view: BlockView, layer: int) -> None:
    """The chosen layer's norm on the prompt: statistics before and after, and γ (β)."""
    run, cfg, labels, norm_name = view.run, view.cfg, view.labels, view.norm_name
    model = view.page.loaded.model
    st.subheader(t("transformer_block.norm.live.header", layer=layer))
    which_names = {w: t(f"transformer_block.norm.live.{w}") for w in ("ln1", "ln2")}  # translated in this run
    which = st.radio(t("transformer_block.norm.live.which"), ("ln1", "ln2"), horizontal=True, **state.bind("tb_norm_which"),
                     format_func=which_names.__getitem__)
    s = block.token_norm_stats(model, run.trace, layer, which)
    if cfg.norm == "layernorm":
        series = (t("transformer_block.norm.live.mean_in"), t("transformer_block.norm.live.std_in"),
                  t("transformer_block.norm.live.mean_out"), t("transformer_block.norm.live.std_out"))
        values = np.stack([s.mean_in, s.std_in, s.mean_out, s.std_out])
    else:
        series = (t("transformer_block.norm.live.rms_in"), t("transformer_block.norm.live.rms_out"))
        values = np.stack([s.rms_in, s.rms_out])
    vega(charts.stable(charts.grouped_bars(
        tuple(labels), series, values, title=t("transformer_block.norm.live.title", which=which, layer=layer, norm=norm_name),
        x_title=t("transformer_block.axis.token"), y_title=t("transformer_block.axis.value"),
        series_title=t("transformer_block.axis.series"))), width="stretch", live=True)
    learned = {"γ": tuple(s.gamma.tolist())}
    if s.beta is not None:
        learned["β"] = tuple(s.beta.tolist())
    vega(charts.stable(charts.lines(
        tuple(range(cfg.d_model)), learned, title=t("transformer_block.norm.live.gamma_title", which=which, layer=layer),
        x_title=t("transformer_block.axis.dim"), y_title=t("transformer_block.axis.value"),
        series_title=t("transformer_block.axis.series"), x_format=".0f", height=220)), width="stretch", live=True)
    st.caption(t("transformer_block.norm.live.caption"))


def _pre_post(view: BlockView) -> None:
    """Pre-norm and post-norm, drawn side by side."""
    norm_name, presenting = view.norm_name, view.presenting
    st.subheader(t("transformer_block.norm.prepost.header"))
    ln_labels = {"sublayer": t("transformer_block.norm.prepost.sublayer"), "norm": norm_name if view.cfg.norm else "LN",
                 "skip": t("transformer_block.layer.skip")}
    pp = st.container(key="tb_diagrams_ln").columns(2)
    with pp[0]:
        st.markdown(t("transformer_block.norm.prepost.pre"))
        st.markdown(pre_post_svg("pre", ln_labels, font_size=PRESENTER_FONT_PX if presenting else DEFAULT_FONT_PX),
                    unsafe_allow_html=True)
    with pp[1]:
        st.markdown(t("transformer_block.norm.prepost.post"))
        st.markdown(pre_post_svg("post", ln_labels, font_size=PRESENTER_FONT_PX if presenting else DEFAULT_FONT_PX),
                    unsafe_allow_html=True)
    st.markdown(t("transformer_block.norm.prepost.explain"))


# --- 5. FFN -------------------------------------------------------------------------------------


def ffn_section(view: BlockView) -> DeltaGenerator:
    """The activation lab and the textbook's numbers; returns the slot for the chosen layer's
    neurons (before the SwiGLU sizing note)."""
    cfg = view.cfg
    st.header(t("transformer_block.ffn.header"), anchor="tb-ffn")
    st.markdown(t("transformer_block.ffn.explain", d=cfg.d_model, d_mlp=cfg.d_mlp, n=view.n, mlp=view.mlp_name))
    activation_lab()
    relu_out = block.activation("relu", block.TEXTBOOK_RELU_IN)
    silu = block.activation("silu", [-3.0, 0.0, 3.0])
    st.markdown(t("transformer_block.act.textbook", relu_in=str([int(v) for v in block.TEXTBOOK_RELU_IN]),
                  relu_out=str([int(v) for v in relu_out]), s_neg=f"{silu[0]:.2f}", s_pos=f"{silu[2]:.2f}"))
    slot = st.container()
    st.subheader(t("transformer_block.swiglu.header"))
    raw, llama2 = block.swiglu_hidden(4096)
    _, big = block.swiglu_hidden(4096, multiple_of=1024, ffn_dim_multiplier=1.3)
    st.markdown(t("transformer_block.swiglu.explain", raw=f"{raw:,.2f}", llama2=f"{llama2:,}", big=f"{big:,}",
                  gelu=f"{2 * 4096 * 4 * 4096:,}", swiglu=f"{3 * 4096 * llama2:,}", exact=f"{3 * 4096 * raw:,.0f}"))
    return slot


@st.fragment
def activation_lab() -> None:
    """Activation functions side by side, with a marker at x."""
    st.subheader(t("transformer_block.act.header"))
    c = st.columns(2)
    x0 = c[0].slider(t("transformer_block.act.x"), min_value=-5.0, max_value=5.0, step=0.1, **state.bind("tb_act_x"))
    up = c[1].slider(t("transformer_block.act.up"), min_value=-2.0, max_value=2.0, step=0.1, **state.bind("tb_act_up"),
                     help=t("transformer_block.act.up_help"))
    grid = np.round(np.linspace(-5, 5, 101), 4)
    names_shown = {a: t(f"transformer_block.act.name.{a}") for a in block.ACTIVATIONS}
    series = {names_shown[a]: tuple(block.activation(a, grid, up=float(up)).tolist()) for a in block.ACTIVATIONS}
    vega(charts.lines(tuple(grid.tolist()), series, title=t("transformer_block.act.title"),
                      x_title="x", y_title=t("transformer_block.act.axis.y"), series_title=t("transformer_block.axis.series"),
                      marker_x=float(x0), height=300), width="stretch")
    at_x = {names_shown[a]: f"{float(block.activation(a, [x0], up=float(up))[0]):.4f}" for a in block.ACTIVATIONS}
    st.dataframe(pd.DataFrame([at_x], index=[f"x = {x0:.1f}"]), width="stretch", key="tb_act_values")


def ffn_part(view: BlockView, layer: int, position: int) -> int:
    """The layer's strongest neurons and the token's top ten; returns the token's strongest neuron."""
    run, cfg, labels = view.run, view.cfg, view.labels
    post = block.mlp_activations(run.trace, layer)  # (pos, d_mlp)
    strongest = np.lexsort((np.arange(post.shape[1]), -np.abs(post).max(axis=0)))[:HEATMAP_NEURONS]
    vega(charts.stable(charts.heat(
        post[:, strongest].T, tuple(f"n{int(i)}" for i in strongest), tuple(labels),
        title=t("transformer_block.ffn.heat_title", layer=layer, k=len(strongest), d_mlp=cfg.d_mlp),
        x_title=t("transformer_block.axis.token"), y_title=t("transformer_block.axis.neuron"),
        value_title=t("transformer_block.axis.activation"), diverging=True)), width="stretch", live=True)
    top_ids, top_vals = block.top_neurons(post, position, 10)
    vega(charts.stable(charts.bars(
        tuple(f"n{int(i)}" for i in top_ids), tuple(top_vals.tolist()),
        title=t("transformer_block.ffn.top_title", token=labels[position], layer=layer),
        value_title=t("transformer_block.axis.activation"), label_title=t("transformer_block.axis.neuron"))),
         width="stretch", live=True)
    return int(top_ids[0])


@st.fragment
def memory_section(view: BlockView, layer: int, top_neuron: int) -> None:
    """One neuron as a key-value memory: the tokens it writes toward, the contexts it fires in."""
    cfg, tokenizer, model_name = view.cfg, view.page.loaded.tokenizer, view.page.model_name
    st.subheader(t("transformer_block.kv.header"))
    st.markdown(t("transformer_block.kv.explain"))
    neuron = st.number_input(t("transformer_block.kv.neuron", d_mlp=cfg.d_mlp - 1), min_value=0, max_value=cfg.d_mlp - 1,
                             step=1, **state.bind("tb_kv_neuron", default=top_neuron, low=0, high=cfg.d_mlp - 1))
    out = neuron_tokens(model_name, layer, int(neuron))
    c = st.columns(2)
    for col, ids, vals, key in ((c[0], out.up_ids, out.up_values, "up"), (c[1], out.down_ids, out.down_values, "down")):
        with col:
            vega(charts.stable(charts.bars(
                tuple(token_labels(tokenizer, [int(i) for i in ids])), tuple(vals.tolist()),
                title=t(f"transformer_block.kv.{key}_title", neuron=int(neuron), layer=layer),
                value_title=t("transformer_block.axis.write"), label_title=t("transformer_block.axis.next_token"))),
                width="stretch", live=True)
    index = neuron_index(model_name)
    header = [t(f"transformer_block.kv.col.{c}") for c in ("act", "left", "token", "right")]
    rows = [[f"{a:.3f}", display_token(left), display_token(tok), display_token(right)]
            for a, _, left, tok, right in index.contexts(layer, int(neuron))]
    st.markdown(t("transformer_block.kv.corpus", docs=len(index.tokens)))
    # Five short rows: Markdown (every cell literal), not a data grid, which a pick redrew each time.
    st.container(key="tb_kv_contexts").markdown(markdown_table(header, rows))


# --- 6. MoE -------------------------------------------------------------------------------------


def moe_section(view: BlockView) -> DeltaGenerator:
    """A toy router (the model has none); returns the slot for the chosen token's routing."""
    st.header(t("transformer_block.moe.header"), anchor="tb-moe")
    st.warning(t("transformer_block.moe.toy"))
    slot = st.container()
    st.container(key="tb_table_moe").markdown(textbook_tables(view.page.lang)["moe"])
    st.caption(t("transformer_block.moe.source"))
    return slot


def moe_part(view: BlockView, layer: int, position: int) -> None:
    """The toy router's probabilities for the chosen token, its gates, and what MoE costs here."""
    run, cfg, labels = view.run, view.cfg, view.labels
    hidden = run.trace[names.act_name("ln2", layer)][position]
    router = block.toy_router(cfg.d_model, N_EXPERTS, seed=0)
    routing = block.route(hidden, router, k=TOP_K)
    experts = tuple(t("transformer_block.moe.expert", i=i) for i in range(N_EXPERTS))
    chosen = set(int(i) for i in routing.chosen)
    group = tuple(t("transformer_block.moe.chosen") if i in chosen else t("transformer_block.moe.idle")
                  for i in range(N_EXPERTS))
    # The legend's order fixed (chosen, then idle): another token keeps the chart's spec, only its data.
    vega(charts.stable(charts.bars(
        experts, tuple(routing.probs.tolist()),
        title=t("transformer_block.moe.chart_title", token=labels[position], layer=layer),
        value_title=t("transformer_block.axis.prob"), label_title=t("transformer_block.axis.expert"),
        color_labels=group, color_title=t("transformer_block.axis.kind"),
        color_domain=(t("transformer_block.moe.chosen"), t("transformer_block.moe.idle")), colors=("#2f6fdb", "#adb5bd"))),
        width="stretch", live=True)
    gates = ", ".join(f"{experts[int(i)]}: {g:.3f}" for i, g in zip(routing.chosen, routing.gates))
    st.markdown(t("transformer_block.moe.gates", gates=gates))
    ffn = count_parameters(spec_from_config(cfg)).per_layer["ffn"]
    st.markdown(t("transformer_block.moe.params", ffn=f"{ffn:,}", e=N_EXPERTS, k=TOP_K, total=f"{N_EXPERTS * ffn:,}",
                  active=f"{TOP_K * ffn:,}", router=f"{N_EXPERTS * cfg.d_model:,}"))


@st.fragment
def picked_sections(view: BlockView, slots: dict) -> None:
    """The layer and token pickers and every part they feed, each drawn into its slot above.

    A picker change reruns this fragment only. The parts with controls of their own (the
    attribution target, the live norm's choice, the neuron) are fragments inside it, so their
    controls rerun only themselves. Each inner fragment sits in a keyed box of its own: drawn
    straight into a slot, Streamlit 1.67 left the previous run's copy in place and added the
    new one below it, so every pick stacked another copy (tests/e2e/test_block_pages.py).
    """
    with slots["layer"]:
        layer, position = layer_part(view)
    with slots["resid"]:
        writes_part(view, position)
        with st.container(key="tb_dla_box"):
            dla_section(view, position)
    with slots["live_norm"]:
        with st.container(key="tb_live_norm_box"):
            live_norm(view, layer)
    with slots["ffn"]:
        top_neuron = ffn_part(view, layer, position)
        with st.container(key="tb_memory_box"):
            memory_section(view, layer, top_neuron)
    with slots["moe"]:
        moe_part(view, layer, position)
