"""Every page starts with ``page = open_page(PAGE)``: browser title, wide layout, sidebar, the
page's title and intro, and one context object with the sidebar's choices.

The sidebar is the same on every page: our translated navigation (the default page list
is hidden in ``.streamlit/config.toml``), language, prompt with presets, model, seed and
the device in use. Durable choices live in ``ui.state`` so they survive page changes.

Example::

    page = open_page("embeddings")      # sidebar, title, intro, the prompt's run
    embeddings.lookup_section(page)     # then the page's named sections (ui.sections.embeddings)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from html import escape
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from ui import nav, state, theme
from ui.i18n import LANGUAGES, t, translate
from ui.presets import PROMPT_PRESETS

CUSTOM_PRESET = "__custom__"


@dataclass(frozen=True)
class Page:
    """What a page needs from the sidebar, read once per run.

    ``run`` (the prompt through the model), ``loaded`` and ``config`` are computed on first use:
    a page without a prompt run (Self-attention, Tokenization, Training) never pays for them.
    """

    page_id: str
    lang: str
    prompt: str
    model_name: str
    seed: int

    @cached_property
    def run(self) -> Any:
        """The prompt's run (``ui.resources.PromptRun``); bad input shows a message and stops the page."""
        from ui.resources import run_prompt_or_stop

        return run_prompt_or_stop(self.model_name, self.prompt)

    @cached_property
    def loaded(self) -> Any:
        """The shared, read-only model with its tokenizer and config."""
        from ui.resources import get_model

        return get_model(self.model_name)

    @cached_property
    def config(self) -> Any:
        """The model's config (``n_layer``, ``n_head``, ``d_model``, ...)."""
        return self.loaded.config


def open_page(
    page_id: str,
    *,
    runs_prompt: bool = True,
    before_title: Callable[[], Mapping[str, Any] | None] | None = None,
) -> Page:
    """Draw the sidebar, the page's title and intro (``<page_id>.title`` / ``.intro``) and return
    the page's context.

    ``runs_prompt``: run the prompt right after the intro (where its "prompt too long" note and a
    bad prompt's message belong). ``before_title``: settles session values before anything is
    drawn on the main area and returns the intro's format arguments (or None).

    Example: ``page = open_page("generation")`` then ``page.run.ids``, ``page.config.n_ctx``.
    """
    page = _setup(page_id)
    intro_args = (before_title() if before_title is not None else None) or {}
    st.title(t(f"{page_id}.title"))
    st.markdown(t(f"{page_id}.intro", **intro_args))
    if runs_prompt:
        _ = page.run
    return page


def _setup(page_id: str) -> Page:
    """Configure the page and draw the shared sidebar (``open_page`` calls it first)."""
    from ui.resources import start_once  # the server's start, once per process (serving.startup)

    start_once()
    state.read_url(page_id)  # once per session: a shared link's values (checked) come first
    state.init()
    entry = nav.page_by_id(page_id)
    st.set_page_config(
        page_title=f"Token Journey · {t('nav.' + page_id)}",
        page_icon=entry.icon,
        layout="wide",
    )
    with st.sidebar:
        _navigation()
        st.divider()
        _controls()
        _link(page_id)
    _layout_css()
    theme.apply(state.get(state.LANG))  # contrast fixes and <html lang> (ui.theme)
    state.show_notes()
    state.sync_url()
    from ui.resources import require_model_or_stop  # a teacher's checkpoint: load it or say why not

    require_model_or_stop(state.get(state.MODEL))
    return Page(
        page_id=page_id,
        lang=state.get(state.LANG),
        prompt=state.get(state.PROMPT),
        model_name=state.get(state.MODEL),
        seed=int(state.get(state.SEED)),
    )


def try_this(title_key: str, list_key: str, *, as_header: bool = False, **fmt: Any) -> None:
    """The page's closing "try this" list: a subheader (or a header) and its Markdown list."""
    (st.header if as_header else st.subheader)(t(title_key))
    st.markdown(t(list_key, **fmt))


def relabel_after_language_switch(seen_key: str, widget_keys: tuple[str, ...]) -> None:
    """Hand each choice back to its widget after a language switch, so the browser shows it under
    its new (translated) label; a keyed widget keeps its identity. ``seen_key`` remembers the
    language the widgets were last drawn in."""
    lang = state.get(state.LANG)
    if st.session_state.get(seen_key) != lang:
        for widget_key in widget_keys:
            if widget_key in st.session_state:
                st.session_state[widget_key] = st.session_state[widget_key]
        st.session_state[seen_key] = lang


# Static CSS (no user text ever enters it). Phones: the drawings keep a readable
# size and scroll sideways instead of shrinking their text to ~7 px. Chinese: Streamlit's file
# uploader has English text built in ("Drag and drop…", "… per file", "Upload"); it is
# hidden and the page says the limit itself (the button keeps only its icon).
_PHONE_CSS = """
/* Faceted charts (the head view: one fixed-width panel per head) cannot shrink: on a phone,
   and in presenter mode's larger text, they scroll sideways instead of being cut off. The
   chart box grows to its content's width, so it needs a max-width for the scroll to start. */
[data-testid="stVegaLiteChart"] { overflow-x: auto; max-width: 100%; }
/* The drawings (SVG laid out on the server: ui.diagram) have a smallest width of their own:
   a narrower column scrolls them sideways. */
.st-key-overview_diagram [data-testid="stMarkdownContainer"],
[class*="st-key-tb_diagrams"] [data-testid="stMarkdownContainer"] { overflow-x: auto; }
/* Elements far outside the window are neither laid out nor painted until they come near it
   (the browser's own skipping; their text stays searchable): the Transformer block's layer pick
   redraws a long fragment, Chromium 605 / 706 -> 377 / 437 ms (bench/browser_latency.py). */
[data-testid="stMain"] [data-testid="stElementContainer"] { content-visibility: auto; contain-intrinsic-size: auto 120px; }
/* A Markdown table (ui.text.markdown_table) wider than a phone scrolls inside its own box. */
[data-testid="stMarkdownContainer"]:has(> table) { overflow-x: auto; }
/* A long link to another station wraps instead of being cut at a phone's edge. */
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] span,
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] p { white-space: normal; overflow: visible; text-overflow: clip; }
[data-testid="stMain"] [data-testid="stPageLink-NavLink"] { height: auto; }
"""
_ZH_UPLOADER_CSS = """
[data-testid="stFileUploaderDropzoneInstructions"] { display: none; }
[data-testid="stFileUploaderDropzone"] button p, [data-testid="stFileUploaderDropzone"] button span + span { display: none; }
"""


def _layout_css() -> None:
    css = _PHONE_CSS + (_ZH_UPLOADER_CSS if state.get(state.LANG) == "zh" else "")
    st.html(f"<style>{css}</style>")


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
    choice = st.session_state.get(_preset_widget_key())
    if choice == CUSTOM_PRESET:
        return
    preset = PROMPT_PRESETS.get(choice) if isinstance(choice, str) else None
    if preset is None:  # a value no option offers (a crafted message): keep the prompt, say so
        state.note("sidebar.preset")
        return
    state.put(state.PROMPT, preset.text)


def view_query(page_id: str) -> str:
    """``"?prompt=...&model=modern"`` for this view's non-default values ('' when all are defaults)."""
    query = urlencode(state.view_params(page_id))
    return f"?{query}" if query else ""


# The Overview diagram's boxes are plain SVG links (ui.diagram), which would reload the app and
# start a new session. This script (no user text in it) sends a click on a box to the sidebar's
# matching st.page_link instead, which Streamlit navigates inside the session.
_IN_APP_LINKS_JS = r"""
<script>
(function () {
  const doc = window.parent.document;
  // This frame's functions stop running when the frame goes (another page): replace the old one.
  if (doc.__tokenJourneyDiagramLinks) doc.removeEventListener("click", doc.__tokenJourneyDiagramLinks, true);
  doc.__tokenJourneyDiagramLinks = function (event) {
    const box = event.target.closest && event.target.closest(".st-key-overview_diagram a");
    if (!box) return;
    const href = box.getAttribute("href") || box.getAttribute("xlink:href") || "";
    const page = href.replace(/^\.\//, "").split("?")[0].split("#")[0];
    if (!page) return;
    const links = doc.querySelectorAll('[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]');
    for (const link of links) {
      const path = new URL(link.href, doc.baseURI).pathname.replace(/\/$/, "");
      if (path.endsWith("/" + page)) {
        event.preventDefault();
        event.stopPropagation();
        link.click();
        return;
      }
    }
  };
  doc.addEventListener("click", doc.__tokenJourneyDiagramLinks, true);
})();
</script>
"""


OVERVIEW_DIAGRAM_KEY = "overview_diagram"  # its container's class (st-key-…) is named in the CSS and JS above


def in_app_links() -> None:
    """Make the diagram's box links navigate inside the session (see ``_IN_APP_LINKS_JS``)."""
    # 1 px: the frame only runs the script; "content" left an empty band under the diagram.
    st.iframe(theme.frame_document(_IN_APP_LINKS_JS, state.get(state.LANG), t("overview.title")), height=1)


def _model_label(name: str, lang: str) -> str:
    label = translate(f"sidebar.model.{name}", lang)
    return name if label.startswith("⟦") else label  # a foreign model is shown by its own name


# The link box reads the browser's address, which ``state.sync_url`` keeps equal to the view
# (also after a fragment's rerun, which does not redraw the sidebar). Only our own translated
# labels go into this HTML, escaped; no user text.
_LINK_HTML = """
<div style="font-family: sans-serif; font-size: 14px; color-scheme: light dark;">
  <input id="link" readonly aria-label="{label}" style="width: 100%; box-sizing: border-box; font-size: 12px;
         padding: 4px; border: 1px solid #9aa7bf; border-radius: 4px; background: transparent; color: inherit;">
  <button id="copy" type="button" style="margin-top: 6px; padding: 4px 10px; border: 1px solid #9aa7bf;
          border-radius: 6px; background: transparent; color: inherit; cursor: pointer;">{copy}</button>
  <span id="done" style="margin-left: 6px;"></span>
</div>
<script>
(function () {{
  const box = document.getElementById("link");
  const show = function () {{ box.value = window.parent.location.href; }};
  show();
  setInterval(show, 400);
  document.getElementById("copy").addEventListener("click", async function () {{
    show();
    box.select();
    let ok = false;
    try {{ await navigator.clipboard.writeText(box.value); ok = true; }} catch (e) {{ ok = document.execCommand("copy"); }}
    document.getElementById("done").textContent = ok ? "{done}" : "";
  }});
}})();
</script>
"""


def _link(page_id: str) -> None:
    """A "copy link to this view" control (the browser's address, kept by ``state.sync_url``)."""
    with st.expander(t("state.link")):
        link_html = _LINK_HTML.format(label=escape(t("state.link")), copy=escape(t("state.link.copy")),
                                      done=escape(t("state.link.copied")))
        st.iframe(theme.frame_document(link_html, state.get(state.LANG), t("state.link")), height="content")
        st.caption(t("state.link.help"))


def _controls() -> None:
    """Language, prompt (with its presets), model, seed, presenter mode and the device in use."""
    _language_select()
    lang = state.get(state.LANG)
    _prompt_inputs(lang)
    _model_seed_presenter(lang)
    _device_caption()


def _language_select() -> None:
    languages = list(LANGUAGES)
    st.selectbox(
        t("sidebar.language"),
        languages,
        format_func=lambda code: LANGUAGES[code],
        key=state.bind_widget(state.LANG),
        on_change=state.commit(state.LANG),
    )


def _prompt_inputs(lang: str) -> None:
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


def _model_seed_presenter(lang: str) -> None:
    st.selectbox(
        t("sidebar.model"),
        list(state.available_model_names()),
        format_func=lambda name, lang=lang: _model_label(name, lang),
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
    st.toggle(
        t("sidebar.presenter"),
        key=state.bind_widget(state.PRESENTER),
        on_change=state.commit(state.PRESENTER),
        help=t("sidebar.presenter.help"),
    )


def _device_caption() -> None:
    device, description = _device_name()
    if device == "cpu":  # "CPU (1 thread)" in the page's language, with a correct plural
        import torch

        threads = torch.get_num_threads()
        description = t("sidebar.device.cpu_one" if threads == 1 else "sidebar.device.cpu", n=threads)
    st.caption(t("sidebar.device", device=description))


@st.cache_resource(show_spinner=False)
def _device_name() -> tuple[str, str]:
    """The device the shared model runs on and its description, e.g. ("cpu", "CPU (2 threads)")."""
    from core.engine.device import describe, pick
    from ui.resources import limit_cpu_threads

    limit_cpu_threads()  # before describe(), so the thread count shown is the one used
    device = pick()
    return device, describe(device)
