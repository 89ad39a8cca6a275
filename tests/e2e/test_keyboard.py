"""Keyboard only (issue 44): a student who cannot use a mouse walks every page with Tab, Shift+Tab,
the arrow keys, Enter and Space, and changes each page's main control.

What is checked, in real Chromium:
- from page load the first Tab stop is the skip link, and the prompt comes at most
  ``PROMPT_WITHIN`` Tab stops after it;
- after a page change focus is on the new page's title (h1), and the page's main control is at
  most ``MAIN_WITHIN`` Tab stops after it; the keyboard changes it and the page answers;
- every Tab stop on the way is visible (no 1-px frame, nothing of zero size) and shows a focus
  ring; a focused sidebar link looks different from the current page's link;
- on a phone a chart wider than the screen is a Tab stop that the arrow keys scroll.

Run: ``pytest -q tests/e2e/test_keyboard.py`` (about 2 minutes on 2 cores).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, Page

from tests.e2e.helpers import APP_READY_TIMEOUT_MS, assert_no_error, wait_for_app
from tests.e2e.test_screens import wait_for_app as wait_for_phone  # a phone's sidebar starts folded
from ui import nav
from ui.i18n import load_strings

PROMPT_WITHIN = 3  # Tab stops after the skip link
MAIN_WITHIN = 5  # Tab stops after the page's title
NAV_SEARCH = 45  # most Tab / Shift+Tab presses spent looking for a sidebar link


@dataclass(frozen=True)
class MainControl:
    """A page's main control: the ``st-key-`` class of its box and the keys that change it."""

    key: str
    keys: tuple[str, ...]


# The control a student comes to each page for (the first thing after the title and intro).
OPEN_NEXT = ("ArrowDown", "ArrowDown", "Enter")  # a select box: open it, the next option, take it
MAIN_CONTROLS: dict[str, MainControl] = {
    "overview": MainControl("journey", ("Tab", "Tab", "ArrowDown")),  # the journey: its layer picker
    "tokenization": MainControl("tok_tab", ("ArrowRight", "Enter")),  # Part 2 (a durable tab, in the link)
    "embeddings": MainControl("embeddings_lab_normalise", ("Space",)),
    "positional_encoding": MainControl("pe_d_model", ("ArrowRight",)),
    "self_attention": MainControl("sa_tab", ("ArrowRight", "Enter")),
    "multi_head_attention": MainControl("mha_heads", ("ArrowRight",)),  # the layer × head radio group (browser)
    "transformer_block": MainControl("tb_layer", OPEN_NEXT),
    "whole_model": MainControl("wm_preset", OPEN_NEXT),
    "logits_sampling": MainControl("temperature", ("ArrowLeft",)),  # the sampling knobs (browser)
    "generation": MainControl("temperature", ("ArrowLeft",)),
    "training": MainControl("train_p", ("ArrowLeft",)),
}
MAIN_WITHIN_EXCEPTIONS: dict[str, int] = {}  # a page whose main control may stand further away

# Reads the focused element (through open shadow roots: the components draw in them).
_FOCUSED = """() => {
    let e = document.activeElement;
    while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
    if (!e || e === document.body) return null;
    const r = e.getBoundingClientRect();
    const style = getComputedStyle(e);
    let host = e;
    while (host && !(host.classList && [...host.classList].some(c => c.startsWith('st-key-')))) {
        host = host.parentElement || (host.getRootNode && host.getRootNode().host) || null;
    }
    const keys = host ? [...host.classList].filter(c => c.startsWith('st-key-')).map(c => c.slice(7)) : [];
    let hidden = false;
    const ownInput = e.tagName === 'INPUT' && ['checkbox', 'radio', 'range'].includes(e.type);
    const start = ownInput ? (e.closest('label') || (e.type === 'range' && e.closest('[data-rac]')) || e.parentElement) : e;
    for (let n = start; n && n.nodeType === 1; n = n.parentElement || (n.getRootNode && n.getRootNode().host)) {
        const s = getComputedStyle(n);
        if (s.visibility === 'hidden' || s.display === 'none' || parseFloat(s.opacity) === 0) { hidden = true; break; }
    }
    // Switches, checkboxes, radio options and sliders: the visible thing is their label or track.
    const own = e.tagName === 'INPUT' && ['checkbox', 'radio', 'range'].includes(e.type);
    const seen = own ? (e.closest('label') || (e.type === 'range' && e.closest('[data-rac]')) || e.parentElement) : e;
    const ring = getComputedStyle(seen);
    const box = seen.getBoundingClientRect();
    return {
        tag: e.tagName.toLowerCase(), type: e.type || '', testid: e.getAttribute('data-testid') || '', role: e.getAttribute('role') || '',
        label: e.getAttribute('aria-label') || '', text: (e.innerText || e.value || '').trim().slice(0, 200),
        current: e.getAttribute('aria-current') || '', keys, w: box.width, h: box.height, hidden,
        inSidebar: !!e.closest('[data-testid="stSidebar"]'), href: e.getAttribute('href') || '',
        outline: parseFloat(ring.outlineWidth) * (ring.outlineStyle === 'none' ? 0 : 1),
        shadow: ring.boxShadow, scrolls: e.getAttribute('data-tj-scrolls') === '1',
        knob: (e.closest && e.closest('[data-knob]')?.getAttribute('data-knob')) || '',
    };
}"""

_VIEW = """() => [location.search, document.querySelector('[data-testid="stMain"]')?.innerText.length || 0,
    (() => { let e = document.activeElement; while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
             return e ? [e.getAttribute('aria-valuenow'), e.getAttribute('aria-checked'), e.getAttribute('aria-selected'),
                         e.value, e.checked, e.getAttribute('aria-label'), (e.innerText || '').slice(0, 40)].join('|') : ''; })()]"""


def _focused(page: Page) -> dict | None:
    return page.evaluate(_FOCUSED)


def _tab(page: Page, key: str = "Tab") -> dict | None:
    page.keyboard.press(key)
    page.wait_for_timeout(60)
    return _focused(page)


def _visible_stop(stop: dict | None, where: str) -> None:
    """A Tab stop a sighted student can see: not of zero size, not hidden, with a focus ring
    (text fields show theirs as a coloured border, drawn by Streamlit)."""
    assert stop is not None, f"{where}: focus fell off the page"
    assert stop["w"] >= 4 and stop["h"] >= 4 and not stop["hidden"], f"{where}: an invisible Tab stop {stop}"
    if stop["tag"] == "textarea" or stop["tag"] == "input" and stop["type"] not in ("checkbox", "radio", "range"):
        return
    assert stop["outline"] >= 2 or stop["shadow"] not in ("", "none"), f"{where}: no visible focus {stop}"


def _is_prompt(stop: dict | None) -> bool:
    return bool(stop) and stop["tag"] == "textarea" and "w_prompt" in stop["keys"]


def _find_nav_link(page: Page, label: str, key: str) -> dict:
    for _ in range(NAV_SEARCH):
        stop = _tab(page, key)
        _visible_stop(stop, f"looking for {label!r}")
        if stop and stop["testid"] == "stPageLink-NavLink" and stop["inSidebar"] and label in stop["text"]:
            return stop
    raise AssertionError(f"the sidebar link {label!r} is not reachable with {key}")


@pytest.fixture()
def keyboard_page(browser: Browser, app_url: str) -> Page:
    context = browser.new_context(locale="en-US", viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(APP_READY_TIMEOUT_MS)
    page.goto(app_url)
    wait_for_app(page)
    page.wait_for_timeout(800)
    yield page
    context.close()


@pytest.mark.e2e
def test_the_prompt_comes_right_after_the_skip_link(keyboard_page: Page) -> None:
    page = keyboard_page
    first = _tab(page)
    assert first and first["testid"] == "stSkipToContent", f"the first Tab stop is not the skip link: {first}"
    _visible_stop(first, "skip link")
    for n in range(1, PROMPT_WITHIN + 1):
        stop = _tab(page)
        _visible_stop(stop, f"Tab {n} after the skip link")
        if _is_prompt(stop):
            return
    raise AssertionError(f"the prompt is more than {PROMPT_WITHIN} Tab stops after the skip link")


@pytest.mark.e2e
def test_every_page_by_keyboard_only(keyboard_page: Page) -> None:
    page = keyboard_page
    strings = load_strings("en")
    for _ in range(PROMPT_WITHIN + 1):  # to the prompt, the start of every walk below
        if _is_prompt(_tab(page)):
            break
    pages = [p for _, ps in nav.existing_sections() for p in ps]
    pages = pages[1:] + pages[:1]  # the app opens on the Overview: it comes last, after a real page change
    problems: list[str] = []
    for info in pages:
        label = strings[f"nav.{info.page_id}"]
        # Forward from the prompt, or backward from the last page's control: both reach the links.
        link = _find_nav_link(page, label, "Tab" if info is pages[0] else "Shift+Tab")
        assert link["outline"] >= 2, f"a focused sidebar link shows no ring: {link}"
        page.keyboard.press("Enter")
        wait_for_app(page)
        page.wait_for_timeout(1200)
        assert_no_error(page)
        title = strings[f"{info.page_id}.title"]
        landed = _focused(page)
        if not landed or landed["tag"] != "h1" or landed["text"] != title.replace("**", ""):
            problems.append(f"{info.page_id}: after the page change focus is on {landed}, not the title")
            page.locator('[data-testid="stMain"] h1').first.focus()
        current = page.locator('[data-testid="stSidebar"] a[aria-current="page"]')
        if current.count() != 1 or label not in current.first.inner_text():
            problems.append(f"{info.page_id}: the sidebar does not mark the current page")
        control = MAIN_CONTROLS.get(info.page_id)
        if control is None:
            continue
        within = MAIN_WITHIN_EXCEPTIONS.get(info.page_id, MAIN_WITHIN)
        for n in range(1, within + 1):
            stop = _tab(page)
            _visible_stop(stop, f"{info.page_id}, Tab {n} after the title")
            # A Streamlit widget's st-key, or a knob drawn inside a lesson component (data-knob).
            on_control = control.key in stop["keys"] or stop["knob"] == control.key
            if on_control and not stop["label"].startswith("Help for"):  # not its "?" button
                break
        else:
            problems.append(f"{info.page_id}: the main control {control.key} is more than {within} Tab stops "
                            f"after the title (stopped at {stop})")
            continue
        before = page.evaluate(_VIEW)
        for key in control.keys:
            page.keyboard.press(key)
            page.wait_for_timeout(120)
        wait_for_app(page)
        page.wait_for_timeout(600)
        assert_no_error(page)
        after = page.evaluate(_VIEW)
        if after == before:
            problems.append(f"{info.page_id}: {'+'.join(control.keys)} on {control.key} changed nothing")
    assert not problems, "\n".join(problems)


@pytest.mark.e2e
def test_a_wide_chart_scrolls_by_keyboard_on_a_phone(browser: Browser, app_url: str) -> None:
    context = browser.new_context(locale="en-US", viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(APP_READY_TIMEOUT_MS)
    try:
        page.goto(f"{app_url}/multi_head_attention")
        wait_for_phone(page)
        page.wait_for_timeout(2500)
        regions = page.locator('[data-tj-scrolls="1"]')
        assert regions.count() >= 1, "no chart is marked as scrolling sideways on a phone"
        page.locator('[data-testid="stMain"] h1').first.focus()
        for _ in range(60):
            stop = _tab(page)
            if stop and stop["scrolls"]:
                break
        else:
            raise AssertionError("no scrolling chart is reachable with Tab")
        assert stop["role"] == "region" and stop["label"], stop
        _visible_stop(stop, "the scrolling chart")
        before = page.evaluate("() => document.activeElement.scrollLeft")
        for _ in range(4):
            page.keyboard.press("ArrowRight")
        page.wait_for_timeout(300)
        assert page.evaluate("() => document.activeElement.scrollLeft") > before, "the arrow keys did not scroll it"
    finally:
        context.close()
