"""The Overview's sections: the live journey, the pipeline diagram, the stations, "try this".

Nothing here imports a chart library: the first page a student opens stays light.
"""

from __future__ import annotations

import streamlit as st

from core.engine.sampling import softmax
from ui import nav
from ui.components.journey import journey
from ui.diagram import DEFAULT_WORDS, DIAGRAM_PX, PRESENTER_DIAGRAM_PX, PipelineValues, pipeline_svg
from ui.i18n import t
from ui.page import OVERVIEW_DIAGRAM_KEY, Page, in_app_links, view_query
from ui.presenter import presenter_on
from ui.tokens import display_token

NODE_LABELS: tuple[str, ...] = (
    "text", "tokenizer", "ids", "embed", "pos", "add", "block", "ln1", "attn", "resid1",
    "ln2", "mlp", "resid2", "ln_final", "lm_head", "logits", "softmax", "sample", "append", "add_rope",
)
KINDS: tuple[str, ...] = ("learned", "sinusoidal", "rope", "layernorm", "rmsnorm", "gelu", "gelu_tanh", "swiglu")


def journey_section(page: Page) -> None:
    """The journey in one picture (ui/components/journey): the live model, clickable and animated."""
    st.subheader(t("journey.title"))
    st.caption(t("journey.caption"))
    journey(page.run, page.loaded, lang=page.lang, seed=page.seed, presenter=presenter_on())


def pipeline_values(page: Page) -> PipelineValues:
    """The diagram's live values: the prompt, its tokens, the model's shape, the next token."""
    run, cfg = page.run, page.config
    probs = softmax(run.logits[-1])
    top = int(probs.argmax())
    return PipelineValues(
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
        top_token=display_token(page.loaded.tokenizer.decode([top])),
        top_prob=float(probs[top]),
    )


def pipeline_section(page: Page) -> None:
    """The pipeline diagram; each box opens its station."""
    labels = {key: t(f"overview.node.{key}") for key in NODE_LABELS}
    words = {key: t(f"overview.word.{key}") for key in DEFAULT_WORDS}
    kinds = {key: t(f"overview.kind.{key}") for key in KINDS}
    # Each box opens its page inside this session (``in_app_links``); without JavaScript the link
    # itself carries the view (language, prompt, model, seed), so a new session starts from it.
    view = view_query("overview")
    links = {p.page_id: p.path.removeprefix("pages/").removesuffix(".py") + view for _, ps in nav.SECTIONS for p in ps}
    values = pipeline_values(page)
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


def stations_section() -> None:
    """One column per part of the course, each station with a link and a one-line blurb."""
    st.subheader(t("overview.stations"))
    sections = [s for s in nav.existing_sections() if s[0] is not None]
    columns = st.columns(max(1, len(sections)))
    for column, (section, pages) in zip(columns, sections):
        with column:
            st.markdown(f"**{t(f'nav.section.{section}')}**")
            for entry in pages:
                st.page_link(entry.path, label=t(f"nav.{entry.page_id}"), icon=entry.icon)
                st.caption(t(f"overview.blurb.{entry.page_id}"))
