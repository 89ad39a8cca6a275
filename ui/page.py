"""Every page starts with ``setup(page_id)``: browser title, wide layout, sidebar.

The sidebar is the same on every page: our translated navigation (the default page list
is hidden in ``.streamlit/config.toml``), language, prompt with presets, model, seed and
the device in use. Durable choices live in ``ui.state`` so they survive page changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import nav, state
from ui.i18n import LANGUAGES, t, translate
from ui.presets import PROMPT_PRESETS

CUSTOM_PRESET = "__custom__"


@dataclass(frozen=True)
class PageContext:
    """What a page needs from the sidebar."""

    page_id: str
    lang: str
    prompt: str
    model_name: str
    seed: int


def setup(page_id: str) -> PageContext:
    """Configure the page and draw the shared sidebar. Call it before anything else."""
    state.init()
    page = nav.page_by_id(page_id)
    st.set_page_config(
        page_title=f"Token Journey · {t('nav.' + page_id)}",
        page_icon=page.icon,
        layout="wide",
    )
    with st.sidebar:
        _navigation()
        st.divider()
        _controls()
    return PageContext(
        page_id=page_id,
        lang=state.get(state.LANG),
        prompt=state.get(state.PROMPT),
        model_name=state.get(state.MODEL),
        seed=int(state.get(state.SEED)),
    )


def _navigation() -> None:
    st.markdown(f"### 🚂 {t('app.name')}")
    for section, pages in nav.existing_sections():
        if section is not None:
            st.caption(t(f"nav.section.{section}"))
        for page in pages:
            st.page_link(page.path, label=t(f"nav.{page.page_id}"), icon=page.icon)


def _preset_widget_key() -> str:
    # Labels are translated; a per-language key keeps the widget's stored label valid
    # after the language changes.
    return state.widget_key(f"preset_{state.get(state.LANG)}")


def _on_preset_change() -> None:
    choice = st.session_state[_preset_widget_key()]
    if choice != CUSTOM_PRESET:
        state.put(state.PROMPT, PROMPT_PRESETS[choice].text)


def _controls() -> None:
    languages = list(LANGUAGES)
    st.selectbox(
        t("sidebar.language"),
        languages,
        format_func=lambda code: LANGUAGES[code],
        key=state.bind_widget(state.LANG),
        on_change=state.commit(state.LANG),
    )

    lang = state.get(state.LANG)
    # The preset box shows which preset the current prompt is (or "your own text").
    current = state.get(state.PROMPT)
    matching = [k for k, p in PROMPT_PRESETS.items() if p.text == current]
    st.session_state[_preset_widget_key()] = matching[0] if matching else CUSTOM_PRESET
    st.selectbox(
        t("sidebar.preset"),
        [CUSTOM_PRESET, *PROMPT_PRESETS],
        # format functions bind the language now: Streamlit may call them later.
        format_func=lambda k, lang=lang: (
            translate("sidebar.preset.custom", lang) if k == CUSTOM_PRESET else PROMPT_PRESETS[k].label(lang)
        ),
        key=_preset_widget_key(),
        on_change=_on_preset_change,
    )
    st.text_area(
        t("sidebar.prompt"),
        key=state.bind_widget(state.PROMPT),
        on_change=state.commit(state.PROMPT),
        height=90,
        help=t("sidebar.prompt.help"),
    )
    st.selectbox(
        t("sidebar.model"),
        list(state.BUILTIN_MODELS),
        format_func=lambda name, lang=lang: translate(f"sidebar.model.{name}", lang),
        key=state.bind_widget(state.MODEL),
        on_change=state.commit(state.MODEL),
    )
    st.number_input(
        t("sidebar.seed"),
        min_value=0,
        max_value=state.MAX_SEED,
        step=1,
        key=state.bind_widget(state.SEED),
        on_change=state.commit(state.SEED),
        help=t("sidebar.seed.help"),
    )
    st.caption(t("sidebar.device", device=_device_name()))


@st.cache_resource(show_spinner=False)
def _device_name() -> str:
    """The device the shared model runs on, e.g. "cpu — CPU (2 threads)"."""
    from core.device import describe, pick
    from ui.resources import limit_cpu_threads

    limit_cpu_threads()  # before describe(), so the thread count shown is the one used
    device = pick()
    return f"{device} — {describe(device)}"
