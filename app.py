"""Token Journey — entry point and Overview page: the whole journey on one diagram."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.presenter import presenter_on
from ui.components.journey import journey
from ui.diagram import DEFAULT_WORDS, DIAGRAM_PX, PRESENTER_DIAGRAM_PX, PipelineValues, pipeline_svg
from ui import nav
from ui.i18n import t
from ui.page import OVERVIEW_DIAGRAM_KEY, in_app_links, setup, view_query
from ui.resources import first_page_drawn, get_model, run_prompt_or_stop
from ui.tokens import display_token

ctx = setup("overview")

st.title(t("overview.title"))
st.markdown(t("overview.intro"))

run = run_prompt_or_stop(ctx.model_name, ctx.prompt)
loaded = get_model(ctx.model_name)
cfg = loaded.config

# The journey in one picture (ui/components/journey): the live model, clickable and animated.
st.subheader(t("journey.title"))
st.caption(t("journey.caption"))
journey(run, loaded, lang=ctx.lang, seed=ctx.seed, presenter=presenter_on())

last_logits = run.logits[-1]
probs = np.exp(last_logits - last_logits.max())
probs /= probs.sum()
top = int(np.argmax(probs))

values = PipelineValues(
    text=run.text,
    tokens=[display_token(tok) for tok in run.tokens],
    ids=run.ids,
    n_layer=cfg.n_layer,
    n_head=cfg.n_head,
    d_model=cfg.d_model,
    d_mlp=cfg.d_mlp,
    vocab_size=cfg.vocab_size,
    positional=cfg.positional,
    norm=cfg.norm,
    mlp=cfg.mlp,
    top_token=display_token(loaded.tokenizer.decode([top])),
    top_prob=float(probs[top]),
)
labels = {key: t(f"overview.node.{key}") for key in (
    "text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1", "attn", "resid1",
    "ln2", "mlp", "resid2", "ln_final", "lm_head", "logits", "softmax", "sample", "append", "add_rope",
)}
words = {key: t(f"overview.word.{key}") for key in DEFAULT_WORDS}
kinds = {key: t(f"overview.kind.{key}") for key in (
    "learned", "sinusoidal", "rope", "layernorm", "rmsnorm", "gelu", "gelu_tanh", "swiglu")}
# Each box opens its page inside this session (``in_app_links``); without JavaScript the link
# itself carries the view (language, prompt, model, seed), so a new session starts from it.
view = view_query("overview")
links = {p.page_id: p.path.removeprefix("pages/").removesuffix(".py") + view for _, ps in nav.SECTIONS for p in ps}
with st.container(key=OVERVIEW_DIAGRAM_KEY):  # laid out here: the browser only paints the SVG
    # st.html would strip the SVG (its sanitiser keeps HTML only); every text in it is escaped.
    # Presenter: larger letters that shrink little (scrolling sideways on a narrow projector).
    presenting = presenter_on()
    st.markdown(pipeline_svg(values, labels, links, words=words, kinds=kinds,
                             font_size=PRESENTER_DIAGRAM_PX if presenting else DIAGRAM_PX,
                             min_scale=0.95 if presenting else 0.75),
                unsafe_allow_html=True)
in_app_links()
st.caption(t("overview.diagram_caption"))

st.subheader(t("overview.stations"))
sections = [s for s in nav.existing_sections() if s[0] is not None]
columns = st.columns(max(1, len(sections)))
for column, (section, pages) in zip(columns, sections):
    with column:
        st.markdown(f"**{t(f'nav.section.{section}')}**")
        for page in pages:
            st.page_link(page.path, label=t(f"nav.{page.page_id}"), icon=page.icon)
            st.caption(t(f"overview.blurb.{page.page_id}"))

st.subheader(t("overview.try_title"))
st.markdown(t("overview.try_list"))

first_page_drawn()  # the server held its start-up work back until this first Overview was drawn
