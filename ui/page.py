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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
import json
from html import escape
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from core.engine.prompt import MAX_PROMPT_CHARS as PROMPT_BOX_CHARS
from ui import browser_warmup, classroom, nav, state, theme
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
    # No anchor link: it was one more Tab stop before every page's controls. The title is where
    # focus lands after a page change (``_focus_script``).
    st.title(t(f"{page_id}.title"), anchor=False)
    st.markdown(t(f"{page_id}.intro", **intro_args))
    if runs_prompt:
        _ = page.run
    return page


def _setup(page_id: str) -> Page:
    """Configure the page and draw the shared sidebar (``open_page`` calls it first)."""
    from ui.resources import start_once  # the server's start, once per process (serving.startup)

    start_once()
    classroom.read_link()  # class mode: the teacher key (dropped from the address) or the class code
    state.read_url(page_id)  # once per session: a shared link's values (checked) come first
    state.init()
    classroom.follow(page_id)  # a following student takes the teacher's view before anything is drawn
    entry = nav.page_by_id(page_id)
    presenting = bool(state.get(state.PRESENTER))
    st.set_page_config(
        page_title=f"Token Journey · {t('nav.' + page_id)}",
        page_icon=entry.icon,
        layout="wide",
        # Presenter mode: the sidebar folds away when the switch is turned on (the projector needs
        # its 300 px); the arrow in the corner still opens it. Streamlit applies a *change* of this
        # value, unless this browser's student folded or opened the sidebar by hand before.
        initial_sidebar_state="collapsed" if presenting else "auto",
    )
    with st.sidebar:
        # The prompt comes first: from page load it is 3 Tab stops after the skip link
        # (language, the prompt's help, the prompt), before the examples and the station links.
        st.markdown(f"### 🚂 {t('app.name')}")
        lang = state.get(state.LANG)
        _language_select()
        _prompt_inputs(lang)
        st.divider()
        _navigation()
        st.divider()
        _model_seed_presenter(lang)
        _device_caption()
        _link(page_id)
        classroom.sidebar(page_id)
        _page_script(page_id, t(f"{page_id}.title"))
    _layout_css(page_id, presenting)
    theme.apply(state.get(state.LANG))  # contrast fixes and <html lang> (ui.theme)
    state.show_notes()
    state.sync_url()
    from ui.resources import require_model_or_stop  # a teacher's checkpoint: load it or say why not

    require_model_or_stop(state.get(state.MODEL))
    classroom.main_area(page_id)
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


def durable_tabs(name: str, labels: Mapping[str, str]) -> Sequence[Any]:
    """``st.tabs`` whose chosen tab survives a page change and travels in the view's link.

    ``name`` is a ``ui.state`` choice over the tab ids; ``labels`` maps each id to its (translated,
    unique) label in display order. The tab widget holds a label; the durable value is the id, so
    a language switch keeps the tab. Example: ``a, b = durable_tabs("tok_tab", {"bpe": ..., "model": ...})``.
    """
    chosen = state.get(name)
    widget = state.widget_key(name)
    st.session_state[widget] = labels.get(chosen, next(iter(labels.values())))

    def _save() -> None:
        picked = st.session_state.get(widget)
        for tab_id, label in labels.items():
            if label == picked:
                state.put(name, tab_id)
                return
        state.note(state.SPECS[name].label)  # a label no tab has: a crafted message

    return st.tabs(list(labels.values()), key=widget, on_change=_save)


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


# Only on the Transformer block, and never around a control: elements far outside the window are
# neither laid out nor painted until they come near it (the browser's own skipping; their text
# stays searchable), and its layer pick redraws a long fragment, Chromium 605 / 706 -> 377 / 437 ms
# (bench/browser_latency.py). ``content-visibility`` also clips what overflows the element's box:
# on every element it cut a focused slider's min/max labels and chart titles in half.
_SKIP_FAR_CSS = """
[data-testid="stMain"] [data-testid="stElementContainer"]:has([data-testid="stVegaLiteChart"], [data-testid="stPlotlyChart"]):not(:has(input, textarea, [role="slider"], button)) { content-visibility: auto; contain-intrinsic-size: auto 120px; }
"""
SKIP_FAR_PAGES = frozenset({"transformer_block"})

# Keyboard and layout (issue 44; colours live in their own block). Static CSS, no user text.
_KEYBOARD_CSS = """
/* Focus is always visible, in the text's own colour (which has contrast in both themes), and
   differs from "current page" in the sidebar: the current page has a bar on its left and bold
   text (aria-current is set by _PAGE_SCRIPT), a focused link a ring around it. */
[data-testid="stApp"] :is(a, button, summary, [role="tab"], [role="radio"], [role="region"], [tabindex]):focus-visible {
  outline: 3px solid currentColor !important; outline-offset: 2px; }
/* Switches, checkboxes, radio options and sliders draw their own look; the ring goes around the
   whole option (its label) or the slider. */
[data-testid="stApp"] label:has(input:is([type="checkbox"], [type="radio"]):focus-visible) {
  outline: 3px solid currentColor; outline-offset: 2px; border-radius: 4px; }
[data-testid="stApp"] [data-testid="stSlider"] [data-rac]:has(input[type="range"]:focus-visible) {
  outline: 3px solid currentColor; outline-offset: 3px; border-radius: 50%; }
[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]:focus-visible { outline-offset: -3px; }
[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"][aria-current="page"] {
  box-shadow: inset 5px 0 0 currentColor; padding-left: 14px; }
[data-testid="stMain"] h1[tabindex="-1"]:focus { outline: none; }
[data-testid="stMain"] h1[tabindex="-1"]:focus-visible { outline: 3px solid currentColor; outline-offset: 4px; }
/* Tabs wrap onto a second row instead of hiding the last ones past a phone's edge. */
[data-testid="stMain"] [data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; }
/* The hidden holder of the page's script (it draws nothing). */
.st-key-tj_page_script, .st-key-tj_in_app_links { display: none; }
/* A chart wider than its column scrolls sideways: _PAGE_SCRIPT makes it a focusable region
   (arrow keys scroll it) and marks it; the mark shows a scroll bar and a fading right edge. */
[data-tj-scrolls="1"] { scrollbar-width: auto; scrollbar-color: currentColor transparent; padding-bottom: 4px;
  background: linear-gradient(to left, rgba(128, 128, 128, 0.45), transparent) right / 24px 100% no-repeat scroll; }
/* The Overview and Transformer-block drawings keep their light colours on a dark page: dark mode
   turns their lightness around (hues kept), so they match the page. */
html[data-tj-theme="dark"] .st-key-overview_diagram svg,
html[data-tj-theme="dark"] [class*="st-key-tb_diagrams"] svg { filter: invert(0.9) hue-rotate(180deg); }
"""

# Presenter mode scales all text, captions included: Streamlit sizes its text in rem, so a larger
# root size grows every caption, label and heading; charts grow through ui.charts' own theme.
_PRESENTER_CSS = """
html { font-size: 20px !important; }
/* The folded sidebar's room goes to the page, not to wider margins (5rem each side at 20 px). */
[data-testid="stMainBlockContainer"] { padding-left: 2rem; padding-right: 2rem; max-width: none; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] p { font-size: 0.95rem; }
"""


def _layout_css(page_id: str, presenting: bool) -> None:
    css = _PHONE_CSS + _KEYBOARD_CSS + (_ZH_UPLOADER_CSS if state.get(state.LANG) == "zh" else "")
    if page_id in SKIP_FAR_PAGES:
        css += _SKIP_FAR_CSS
    if presenting:
        css += _PRESENTER_CSS
    st.html(f"<style>{css}</style>")


def _navigation() -> None:
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
# matching st.page_link instead, which Streamlit navigates inside the session. It runs in the
# page itself (st.html), not in a 1-px frame, which was an invisible Tab stop.
_IN_APP_LINKS_JS = r"""
<script>
(function () {
  const doc = document;
  // A later visit to the Overview runs this again: replace the old listener.
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
    with st.container(key="tj_in_app_links"):  # hidden (CSS): it draws nothing
        st.html(_IN_APP_LINKS_JS, unsafe_allow_javascript=True)


# The page's own script, in the page (st.html; only static code and our own JSON-encoded labels):
# - after a page change, focus goes to the new page's title (h1, tabindex=-1), not the sidebar's top;
#   the first load keeps the browser's start, so the skip link is the first Tab stop;
# - the sidebar's link to this page gets aria-current="page" (read aloud, and styled apart from focus);
# - <html data-tj-theme> says whether the page is dark (Streamlit's theme has no class of its own);
# - a chart or table wider than its box becomes a named, focusable region (the arrow keys scroll
#   it) with a visible mark; the check repeats while the page changes.
_PAGE_SCRIPT = r"""
<script>
(function () {
  const page = __PAGE__, title = __TITLE__, scrollLabel = __SCROLL__;
  const w = window, doc = document;
  const norm = (x) => (x || "").replace(/\s+/g, " ").trim();
  const changed = w.__tjPage !== undefined && w.__tjPage !== page;
  w.__tjPage = page;
  if (changed) {
    const started = Date.now();
    const look = function () {
      const heads = doc.querySelectorAll('[data-testid="stMain"] h1');
      let found = null;
      for (const h of heads) if (norm(h.textContent) === norm(title)) { found = h; break; }
      if (!found && Date.now() - started > 3000 && heads.length) found = heads[0];
      if (!found) { if (Date.now() - started < 8000) setTimeout(look, 60); return; }
      found.setAttribute("tabindex", "-1");
      found.focus({preventScroll: false});
    };
    look();
  }
  const tidy = function () {
    for (const h of doc.querySelectorAll('[data-testid="stMain"] h1')) {
      if (!h.hasAttribute("tabindex")) h.setAttribute("tabindex", "-1");
    }
    // Tab stops that stood between a student and the controls, each still there for the mouse:
    // the headings' "link to heading" anchors, the charts' and tables' hover toolbars (a chart's
    // numbers are in its own table view), and a data table whose rows all show (nothing to scroll).
    for (const a of doc.querySelectorAll('[data-testid="stMain"] :is(h1, h2, h3, h4, h5, h6) a[href^="#"], '
        + '[data-testid="stMain"] [data-testid="stElementToolbar"] button')) {
      if (a.getAttribute("tabindex") !== "-1") a.setAttribute("tabindex", "-1");
    }
    for (const grid of doc.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]')) {
      const scroller = grid.querySelector(".dvn-scroller");
      const scrolls = scroller && (scroller.scrollHeight > scroller.clientHeight + 2 || scroller.scrollWidth > scroller.clientWidth + 2);
      for (const canvas of grid.querySelectorAll("canvas[data-grid-canvas], [data-testid='data-grid-canvas'], canvas[tabindex]")) {
        const want = scrolls ? "0" : "-1";
        if (canvas.getAttribute("tabindex") !== want) canvas.setAttribute("tabindex", want);
      }
    }
    // The Overview's link is href="" (the app's root): it is current when no other link is.
    const here = doc.location.pathname.replace(/\/$/, "");
    const links = [...doc.querySelectorAll('[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]')];
    const isHere = (a) => a.getAttribute("href") && new URL(a.getAttribute("href"), doc.baseURI).pathname.replace(/\/$/, "") === here;
    const current = links.find(isHere) || links.find((a) => !a.getAttribute("href"));
    for (const a of links) {
      if (a === current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    }
    const app = doc.querySelector('[data-testid="stApp"]');
    if (app) {
      const rgb = (getComputedStyle(app).backgroundColor.match(/\d+(\.\d+)?/g) || [255, 255, 255]).map(Number);
      const dark = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2] < 128;
      doc.documentElement.setAttribute("data-tj-theme", dark ? "dark" : "light");
    }
    const boxes = doc.querySelectorAll('[data-testid="stMain"] :is([data-testid="stVegaLiteChart"], '
      + '.st-key-overview_diagram [data-testid="stMarkdownContainer"], [class*="st-key-tb_diagrams"] [data-testid="stMarkdownContainer"], '
      + '[data-testid="stMarkdownContainer"]:has(> table), [data-testid="stCode"] pre, .katex-display)');
    for (const box of boxes) {
      const scrolls = box.scrollWidth > box.clientWidth + 2 && getComputedStyle(box).overflowX !== "visible";
      if (scrolls && box.getAttribute("data-tj-scrolls") !== "1") {
        box.setAttribute("data-tj-scrolls", "1");
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        const named = box.querySelector("[aria-label]");
        const name = named ? named.getAttribute("aria-label") : "";
        box.setAttribute("aria-label", name && name !== "Vega visualization" ? name + " · " + scrollLabel : scrollLabel);
      } else if (!scrolls && box.getAttribute("data-tj-scrolls") === "1") {
        for (const attr of ["data-tj-scrolls", "tabindex", "role", "aria-label"]) box.removeAttribute(attr);
      }
    }
    // A chart's numbers table (ui.chart_table) is already a named, focusable region: only the cue.
    for (const box of doc.querySelectorAll('[data-testid="stMain"] .tj-table-scroll')) {
      const scrolls = box.scrollWidth > box.clientWidth + 2;
      if (scrolls !== (box.getAttribute("data-tj-scrolls") === "1")) {
        if (scrolls) box.setAttribute("data-tj-scrolls", "1"); else box.removeAttribute("data-tj-scrolls");
      }
    }
  };
  if (w.__tjTidy) clearInterval(w.__tjTidy);
  tidy();
  w.__tjTidy = setInterval(tidy, 700);
})();
</script>
"""


def _page_script(page_id: str, title: str) -> None:
    """Focus, current page, theme and scroll regions (see ``_PAGE_SCRIPT``), and the tab's warm-up
    for pages still to come (``ui.browser_warmup``); draws nothing."""
    script = (_PAGE_SCRIPT.replace("__PAGE__", _js_string(page_id)).replace("__TITLE__", _js_string(title))
              .replace("__SCROLL__", _js_string(t("keyboard.scrolls"))))
    with st.container(key="tj_page_script"):  # hidden (CSS)
        st.html(script + browser_warmup.script(), unsafe_allow_javascript=True)


def _js_string(text: str) -> str:
    """A JavaScript string literal that cannot close the <script> element."""
    return json.dumps(text, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e")


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
    # The prompt, then the examples under it (a keyboard reaches the prompt first). The example box
    # shows which example the current prompt is (or "your own text").
    # No max_chars: Streamlit's box ignores a paste longer than that as a whole, without a word.
    # A longer text is kept (cut at ui.state's storage limit) and the prompt's own check says, in
    # the page's language, that it is too long (core.engine.prompt's limit, named in the help).
    st.text_area(
        t("sidebar.prompt"),
        key=state.bind_widget(state.PROMPT),
        on_change=state.commit(state.PROMPT),
        height=90,
        help=t("sidebar.prompt.help", most=f"{PROMPT_BOX_CHARS:,}"),
    )
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
