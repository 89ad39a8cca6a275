"""The whole model's sections: a parameter calculator tied to a config, the layer stack read through the
logit lens, and where the parameters sit (the FFN's ~2/3).

Counting is ``core.lessons.param_count`` (the calculator runs its port in the browser:
``ui.components.calculators``); the lens grid is ``core.lessons.logit_lens.logit_lens_grid``.
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
    count_parameters,
    hand_count_gpt2_small,
    reported_in_english,
    spec_from_config,
)
from ui.charts.common import vega
from ui.text import markdown_table
from ui.charts.output import token_labels
from ui import state
from ui.components import calculators
from ui.i18n import t, translate
from ui.page import Page
from ui.resources import get_model, memo, run_prompt
from ui.tokens import display_token

OURS = state.WM_OURS
# The calculator's whole-number inputs and their highest values (ui.state declares the same ranges;
# tests/app/test_whole_model.py checks they agree), and its kinds.
LIMITS = {"vocab": 10_000_000, "d_model": 1_000_000, "n_layer": 1000, "n_ctx": 1_000_000, "n_head": 4096,
          "n_kv_head": 4096, "d_ff": 4_000_000, "n_experts": 4096, "n_active": 4096}
KINDS = {"positional": ("learned", "sinusoidal", "rope"), "norm": ("layernorm", "rmsnorm"), "ffn": ("gelu", "swiglu")}


@memo(maxsize=64)
def lens_grid(model_name: str, text: str) -> logit_lens.LensGrid:
    run = run_prompt(model_name, text)
    return logit_lens.logit_lens_grid(run.trace, get_model(model_name).model.final_norm_and_unembed)


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
    """The calculator (in the browser: its inputs send nothing), the hand count, where the parameters sit."""
    st.header(t("whole_model.calc.header"), anchor="wm-calc")
    st.markdown(t("whole_model.calc.explain"))
    presets = preset_choices(page)
    ours_numel = sum(p.numel() for p in page.loaded.model.parameters())
    counter = dict(presets=presets, ours_numel=ours_numel, kinds=kind_names(page.lang), colours=PART_COLORS, limits=LIMITS)
    calculators.param_counter(key="wm_calculator", **counter)
    hand_count(page.lang)
    st.header(t("whole_model.share.header"), anchor="wm-share")  # one layer of the same config, below
    calculators.param_counter(key="wm_layer_share", view="share", **counter)


def preset_choices(page: Page) -> list[calculators.ArchChoice]:
    """This app's model first, then the published architectures, named in the page's language."""
    ours = calculators.ArchChoice(OURS, t("whole_model.calc.ours", name=page.model_name), None, None,
                                  spec_from_config(page.config))
    return [ours] + [calculators.ArchChoice(key, t(f"whole_model.preset.{key}"), p.source, p.published, p.spec)
                     for key, p in PRESETS.items()]


def kind_names(lang: str) -> dict[str, dict[str, str]]:
    """The positional / norm / FFN kinds' names in the page's language (the Overview's)."""
    return {field: {k: kind_name(k, lang) for k in kinds} for field, kinds in KINDS.items()}


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
