"""The whole model's sections: a parameter calculator tied to a config, the layer stack read through the
logit lens, and where the parameters sit (the FFN's ~2/3).

Counting is ``core.lessons.param_count``; the lens grid is ``core.lessons.logit_lens.logit_lens_grid``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui.charts.block as charts
from core import BUILTIN_PRESETS
from core.lessons import logit_lens
from core.lessons.param_count import (
    COMPONENTS,
    HAND_COUNT_WAN,
    PRESETS,
    TEXTBOOK_TABLE,
    ArchSpec,
    ParamCount,
    count_parameters,
    hand_count_gpt2_small,
    reported_in_english,
    spec_from_config,
)
from ui.charts.common import vega
from ui.text import markdown_table
from ui.charts.output import token_labels
from ui import state
from ui.i18n import t, translate
from ui.page import Page
from ui.resources import get_model, memo, run_prompt
from ui.tokens import display_token

OURS = state.WM_OURS
FIELDS = ("vocab", "d_model", "n_layer", "n_ctx", "n_head", "n_kv_head", "d_ff", "positional", "norm", "ffn",
          "tied", "bias", "n_experts", "n_active")  # the calculator's inputs, durable as "wm_<field>"
MAX_DIM = 1_000_000
MAX_LAYERS = 1000
MAX_VOCAB = 10_000_000
MAX_EXPERTS = 4096


@memo(maxsize=64)
def lens_grid(model_name: str, text: str) -> logit_lens.LensGrid:
    run = run_prompt(model_name, text)
    return logit_lens.logit_lens_grid(run.trace, get_model(model_name).model.final_norm_and_unembed)


PRESET_OPTIONS = [OURS] + list(PRESETS)
PART_COLORS = dict(zip(COMPONENTS, charts.SERIES_COLORS))  # one colour per component on every chart


def kind_name(kind: str, lang: str) -> str:
    """The Overview's name of a positional/norm/FFN kind ("旋转位置编码 RoPE"); an unknown kind as it is."""
    text = translate(f"overview.kind.{kind}", lang)
    return kind if text.startswith("⟦") else text


def reported(text: str, lang: str) -> str:
    """A count as the textbook wrote it: 万 in 中文, millions in English."""
    return text if lang == "zh" else reported_in_english(text)


# --- 1. parameter calculator --------------------------------------------------------------------


def calc_section(page: Page) -> None:
    """The calculator (a fragment: its inputs rerun only it), with where the parameters sit."""
    st.header(t("whole_model.calc.header"), anchor="wm-calc")
    st.markdown(t("whole_model.calc.explain"))
    loaded = page.loaded
    calculator(page, spec_from_config(page.config), sum(p.numel() for p in loaded.model.parameters()))


def hand_count(lang: str) -> None:
    """The textbook's hand count of GPT-2 small next to the exact count (static)."""
    def as_written(text: str) -> str:
        return reported(text, lang)

    st.subheader(t("whole_model.hand.header"))
    exact = count_parameters(PRESETS["gpt2-small"].spec)
    h = HAND_COUNT_WAN
    wan = {k: as_written(f"{h[k]:,.1f} 万" if k == "norms" else f"{h[k]:,.0f} 万") for k in h}  # 万 only in 中文
    total_formula = (f"{wan['token_embedding']} + {wan['position_embedding']} + "
                     f"12 × ({wan['attention']} + {wan['ffn']} + {wan['norms']})")
    hand_rows = [
        (t("whole_model.part.token_embedding"), "50,257 × 768", as_written(f"{h['token_embedding']:,.0f} 万"),
         f"{exact.components['token_embedding']:,}"),
        (t("whole_model.part.position_embedding"), "1,024 × 768", as_written(f"{h['position_embedding']:,.0f} 万"),
         f"{exact.components['position_embedding']:,}"),
        (t("whole_model.hand.attn"), "4 × 768 × 768", as_written(f"{h['attention']:,.0f} 万"), f"{exact.per_layer['attention']:,}"),
        (t("whole_model.hand.ffn"), "2 × 768 × 3,072", as_written(f"{h['ffn']:,.0f} 万"), f"{exact.per_layer['ffn']:,}"),
        (t("whole_model.hand.ln"), "2 × 2 × 768", as_written(f"{h['norms']:,.1f} 万"), f"{exact.per_layer['norms']:,}"),
        (t("whole_model.hand.final_ln"), "2 × 768", "—", f"{2 * 768:,}"),
        (t("whole_model.hand.total"), total_formula,
         f"{hand_count_gpt2_small():,.0f}", f"{exact.total:,}"),
    ]
    # Markdown (every cell literal): a data grid here was redrawn by every preset change.
    st.container(key="wm_hand_table").markdown(markdown_table(
        [t("whole_model.col.part"), t("whole_model.col.formula"), t("whole_model.hand.col.hand"),
         t("whole_model.hand.col.exact")], hand_rows))
    st.markdown(t("whole_model.hand.explain", diff=f"{hand_count_gpt2_small() - exact.total:+,.0f}"))


@st.fragment
def calculator(page: Page, ours_spec: ArchSpec, ours_numel: int) -> None:
    """A preset (or this app's model), its inputs, the exact count and its parts."""
    preset, base = _preset(page, ours_spec)
    spec = _spec_inputs(base, page.lang)
    if spec is None:
        return
    count = count_parameters(spec)
    _count_summary(preset, spec, count, ours_spec, ours_numel)
    hand_count(page.lang)
    _share_section(count)


def _preset(page: Page, ours_spec: ArchSpec) -> tuple[str, ArchSpec]:
    """The chosen preset and its spec; a new preset (or model) starts its inputs from its own values."""
    preset_names = {p: t("whole_model.calc.ours", name=page.model_name) if p == OURS else t(f"whole_model.preset.{p}")
                    for p in PRESET_OPTIONS}  # translated in this run, looked up by the widget
    preset = st.selectbox(t("whole_model.calc.preset"), PRESET_OPTIONS, **state.bind("wm_preset"),
                          format_func=preset_names.__getitem__)
    base = ours_spec if preset == OURS else PRESETS[preset].spec
    if preset != OURS:
        st.caption(t("whole_model.calc.source", source=PRESETS[preset].source))
    # A new preset (or model, for "ours") starts its inputs from its own values; a page change or a
    # link keeps them (the first run of a session has nothing to compare with).
    seen = st.session_state.get("wm_fields_for")
    if seen is not None and seen != (preset, page.model_name):
        for field in FIELDS:
            st.session_state.pop(state.durable_key(f"wm_{field}"), None)
    st.session_state["wm_fields_for"] = (preset, page.model_name)
    return preset, base


def _spec_inputs(base: ArchSpec, lang: str) -> ArchSpec | None:
    """Every field of the architecture, editable; None (after a warning) when they do not fit."""
    def bound(field: str, high: int | None = None) -> dict:
        """The durable value of one input (``wm_<field>``), starting from the preset's own value."""
        return state.bind(f"wm_{field}", default=getattr(base, field), low=None if high is None else 1, high=high)

    def whole(col, field: str, high: int) -> int:
        return col.number_input(t(f"whole_model.field.{field}"), 1, high, **bound(field, high))

    def kind(col, field: str, options: tuple[str, ...]) -> str:
        return col.selectbox(t(f"whole_model.field.{field}"), options, **bound(field),
                             format_func=lambda v, lang=lang: kind_name(v, lang))  # bound to the language now

    with st.expander(t("whole_model.calc.edit"), expanded=False):
        c = st.columns(4)
        vocab, d_model = whole(c[0], "vocab", MAX_VOCAB), whole(c[1], "d_model", MAX_DIM)
        n_layer, n_ctx = whole(c[2], "n_layer", MAX_LAYERS), whole(c[3], "n_ctx", MAX_DIM)
        c = st.columns(4)
        n_head, n_kv = whole(c[0], "n_head", 4096), whole(c[1], "n_kv_head", 4096)
        d_ff = whole(c[2], "d_ff", 4 * MAX_DIM)
        positional = kind(c[3], "positional", ("learned", "sinusoidal", "rope"))
        c = st.columns(4)
        norm, ffn = kind(c[0], "norm", ("layernorm", "rmsnorm")), kind(c[1], "ffn", ("gelu", "swiglu"))
        tied = c[2].checkbox(t("whole_model.field.tied"), **bound("tied"))
        bias = c[3].checkbox(t("whole_model.field.bias"), **bound("bias"))
        c = st.columns(4)
        n_experts, n_active = whole(c[0], "n_experts", MAX_EXPERTS), whole(c[1], "n_active", MAX_EXPERTS)
    try:
        spec = ArchSpec(vocab=int(vocab), d_model=int(d_model), n_layer=int(n_layer), n_head=int(n_head),
                        n_kv_head=int(n_kv), d_ff=int(d_ff), n_ctx=int(n_ctx), positional=positional, norm=norm,
                        ffn=ffn, tied=bool(tied), bias=bool(bias), n_experts=int(n_experts), n_active=int(n_active))
    except ValueError as problem:
        st.warning(t("whole_model.calc.invalid", detail=str(problem)))
        return None
    return spec


def _count_summary(preset: str, spec: ArchSpec, count: ParamCount, ours_spec: ArchSpec, ours_numel: int) -> None:
    """Total and active counts, a check against the model itself or the published number, the parts."""
    c = st.columns(3)
    c[0].metric(t("whole_model.calc.total"), f"{count.total:,}")
    c[1].metric(t("whole_model.calc.active"), f"{count.active:,}")
    ffn_share = count.components["ffn"] / count.total
    c[2].metric(t("whole_model.calc.ffn_share"), f"{100 * ffn_share:.1f} %")
    if preset == OURS and spec == ours_spec:
        st.success(t("whole_model.calc.matches", numel=f"{ours_numel:,}", ok="✓" if count.total == ours_numel else "✗"))
    elif preset != OURS and spec == PRESETS[preset].spec and PRESETS[preset].published is not None:
        st.success(t("whole_model.calc.published", n=f"{PRESETS[preset].published:,}",
                     ok="✓" if count.total == PRESETS[preset].published else "✗"))
    parts = [p for p in COMPONENTS if count.components[p] > 0]
    part_names = tuple(t(f"whole_model.part.{p}") for p in parts)
    header = [t("whole_model.col.part"), t("whole_model.col.formula"), t("whole_model.col.count"),
              t("whole_model.col.share")]
    rows = [[t(f"whole_model.part.{p}"), t(f"whole_model.formula.{p}"), f"{count.components[p]:,}",
             f"{100 * count.components[p] / count.total:.2f}\u00a0%"] for p in parts]  # "%" stays on its line
    st.container(key="wm_count_table").markdown(markdown_table(header, rows))
    vega(charts.stacked_share(part_names, tuple(count.components[p] for p in parts),
                              colors=tuple(PART_COLORS[p] for p in parts),
                              title=t("whole_model.calc.chart_title", total=f"{count.total:,}"),
                              x_title=t("whole_model.axis.params"), color_title=t("whole_model.axis.part"),
                              bar_label=t("whole_model.axis.model")), width="stretch")


def _share_section(count: ParamCount) -> None:
    """Where the FFN takes ~2/3 (for the chosen preset): one layer's parts."""
    ffn_share = count.components["ffn"] / count.total
    st.header(t("whole_model.share.header"), anchor="wm-share")
    per_layer = count.per_layer
    in_layer = per_layer["attention"] + per_layer["ffn"] + per_layer["router"] + per_layer["norms"]
    st.markdown(t("whole_model.share.explain", attn=f"{per_layer['attention']:,}", ffn=f"{per_layer['ffn']:,}",
                  norms=f"{per_layer['norms']:,}", layer=f"{in_layer:,}",
                  ffn_layer=f"{100 * per_layer['ffn'] / in_layer:.1f}",
                  attn_layer=f"{100 * per_layer['attention'] / in_layer:.1f}",
                  ffn_all=f"{100 * ffn_share:.1f}"))
    layer_parts = [p for p in ("attention", "ffn", "router", "norms") if per_layer[p] > 0]
    vega(charts.stacked_share(tuple(t(f"whole_model.part.{p}") for p in layer_parts),
                              tuple(per_layer[p] for p in layer_parts), colors=tuple(PART_COLORS[p] for p in layer_parts),
                              title=t("whole_model.share.chart_title", total=f"{in_layer:,}"),
                              x_title=t("whole_model.axis.params"), color_title=t("whole_model.axis.part"),
                              bar_label=t("whole_model.axis.one_layer")), width="stretch")



# --- 3. stacking --------------------------------------------------------------------------------


def stack_section(page: Page) -> None:
    """The layer stack read through the logit lens: each stage's top token at each position."""
    run = page.run
    st.header(t("whole_model.stack.header"), anchor="wm-stack")
    st.markdown(t("whole_model.stack.explain", n_layer=page.config.n_layer))
    grid = lens_grid(page.model_name, run.text)
    tokens = [f"{i}·{display_token(tok)}" for i, tok in enumerate(run.tokens)]
    stage_names = tuple(t("whole_model.stack.embedding") if s == "embedding" else t("whole_model.stack.after", layer=s)
                        for s in grid.stages)
    words = [token_labels(page.loaded.tokenizer, [int(i) for i in row]) for row in grid.top_ids]
    vega(charts.heat(grid.top_probs, stage_names, tuple(tokens), title=t("whole_model.stack.grid_title"),
                     x_title=t("whole_model.axis.position"), y_title=t("whole_model.axis.stage"),
                     value_title=t("whole_model.axis.prob"), text=words, text_title=t("whole_model.axis.top1")),
         width="stretch")
    st.caption(t("whole_model.stack.caption"))
    st.page_link("pages/logits_sampling.py", label=t("whole_model.stack.link"), icon="🎲")


def textbook_table_section(page: Page) -> None:
    """The textbook's table of real models, with our own built-in models at the end."""
    lang = page.lang
    st.subheader(t("whole_model.table.header"))
    st.dataframe(pd.DataFrame([{
        t("whole_model.table.model"): r.name, t("whole_model.table.layers"): r.n_layer, t("whole_model.table.width"): r.d_model,
        t("whole_model.table.heads"): r.n_head, t("whole_model.table.kv"): r.n_kv_head,
        t("whole_model.table.total"): reported(r.total, lang), t("whole_model.table.active"): reported(r.active, lang),
        t("whole_model.table.computed"): f"{count_parameters(PRESETS[r.preset].spec).total:,}" if r.preset else "—",
    } for r in TEXTBOOK_TABLE] + [{
        t("whole_model.table.model"): t("whole_model.table.ours", name=name),
        t("whole_model.table.layers"): str(get_model(name).config.n_layer),
        t("whole_model.table.width"): str(get_model(name).config.d_model),
        t("whole_model.table.heads"): str(get_model(name).config.n_head),
        t("whole_model.table.kv"): str(spec_from_config(get_model(name).config).n_kv_head),
        t("whole_model.table.total"): "—", t("whole_model.table.active"): "—",
        t("whole_model.table.computed"): f"{count_parameters(spec_from_config(get_model(name).config)).total:,}",
    } for name in BUILTIN_PRESETS]), hide_index=True, width="stretch", key="wm_textbook_table")
    st.caption(t("whole_model.table.source"))
