"""In real Chromium: nothing a student sets is lost, and every view is a link (ui/state).

One server for the module (the session fixture); each test reuses one page for all its steps.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.helpers import wait_for_app
from ui.i18n import load_strings

PROMPT = "The capital of Japan is"
SIDEBAR = '[data-testid="stSidebar"]'


def assert_no_error(page: Page) -> None:
    """No exception on the page (missing translations are each page's own tests' job)."""
    errors = page.locator('[data-testid="stException"]')
    if errors.count():
        raise AssertionError(f"{page.url}: {errors.first.inner_text()[:300]}")
    assert "Traceback" not in page.inner_text("body")


def _go(page: Page, page_id: str, lang: str = "en") -> None:
    """Navigate inside the session through our sidebar link."""
    page.locator(SIDEBAR).get_by_role("link", name=load_strings(lang)[f"nav.{page_id}"]).first.click()
    wait_for_app(page)
    assert_no_error(page)


def _set_prompt(page: Page, text: str) -> None:
    box = page.locator(f"{SIDEBAR} .st-key-w_prompt textarea")
    box.fill(text)
    box.press("Control+Enter")
    wait_for_app(page)


def _pick(page: Page, key: str, option: str) -> None:
    choice = page.get_by_role("option", name=re.compile(re.escape(option))).first
    for _ in range(4):  # a rerun that lands during the click closes the list: open it again
        page.locator(f".st-key-{key} [data-testid='stSelectbox']").click()
        try:
            choice.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            wait_for_app(page)
    choice.click()
    wait_for_app(page)


def _selected(page: Page, key: str) -> str:
    return page.locator(f".st-key-{key} [role='combobox']").input_value()


def _control(key: str, inner: str = "") -> str:
    """A Streamlit widget by its key, or a knob drawn in the browser (ui.components.lessons) by
    its name; ``inner``: an element inside it."""
    return f".st-key-{key} {inner}, [data-knob='{key}'] {inner}".replace(" ,", ",").strip()


def _slider(page: Page, key: str) -> str:
    return page.locator(_control(key, "input[type='range']")).first.input_value()


def _nudge(page: Page, key: str, presses: int = 1) -> None:
    thumb = page.locator(_control(key, "input[type='range']")).first
    thumb.focus()
    for _ in range(presses):
        thumb.press("ArrowRight")
    thumb.blur()
    wait_for_app(page)


def _toggle(page: Page, key: str) -> None:
    page.locator(_control(key, "label")).first.click()
    wait_for_app(page)


def _checked(page: Page, key: str) -> bool:
    return page.locator(_control(key, "input")).first.is_checked()


def test_diagram_boxes_keep_the_session(page: Page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    _set_prompt(page, PROMPT)
    _pick(page, "w_model", "modern")
    expect(page.locator(".st-key-overview_diagram svg").first).to_be_visible(timeout=30_000)
    boxes = page.locator(".st-key-overview_diagram svg a")
    count = boxes.count()
    assert count >= 8, count
    for i in range(count):
        target = (boxes.nth(i).get_attribute("xlink:href") or boxes.nth(i).get_attribute("href") or "")
        page_name = target.removeprefix("./").split("?")[0]
        page.evaluate("window.__sameSession = true")  # a full reload (a new session) would forget this
        boxes.nth(i).click()
        page.wait_for_url(re.compile(rf"/{page_name}(\?|$)"), timeout=30_000)
        wait_for_app(page)
        assert_no_error(page)
        assert page.evaluate("window.__sameSession === true"), f"box {i} ({page_name}) reloaded the app"
        assert page.locator(f"{SIDEBAR} .st-key-w_prompt textarea").input_value() == PROMPT
        assert "modern" in _selected(page, "w_model")
        _go(page, "overview")
        boxes = page.locator(".st-key-overview_diagram svg a")
        expect(boxes.first).to_be_visible(timeout=30_000)


def test_each_page_keeps_its_controls(page: Page, app_url: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    changes = (
        ("positional_encoding", "slider", "pe_d_model"),
        ("self_attention", "toggle", "sa_scale"),
        ("embeddings", "toggle", "embeddings_lab_normalise"),
        ("generation", "slider", "generation_max_new"),
    )  # the merge step answers in the browser: tests/e2e/test_tokenization.py checks it survives;
    # so do Logits' top-N (test_sampling_knobs.py) and Multi-head's switches (test_multi_head_attention.py)
    for page_id, kind, key in changes:
        _go(page, page_id)
        page.locator(_control(key)).first.scroll_into_view_if_needed()
        if kind == "slider":
            before = _slider(page, key)
            _nudge(page, key)
            after = _slider(page, key)
        else:
            before = str(_checked(page, key))
            _toggle(page, key)
            after = str(_checked(page, key))
        assert after != before, key
        _go(page, "overview")
        _go(page, page_id)
        kept = _slider(page, key) if kind == "slider" else str(_checked(page, key))
        assert kept == after, f"{page_id}: {key} was {after}, came back as {kept}"


def test_a_copied_link_opens_the_same_view(page: Page, browser: Browser, app_url: str) -> None:
    page.goto(app_url)
    wait_for_app(page)
    _pick(page, "w_lang", "简体中文")
    _set_prompt(page, "日本的首都是")
    _pick(page, "w_model", "modern")
    _go(page, "positional_encoding", "zh")
    _nudge(page, "pe_d_model", 2)
    d_model = _slider(page, "pe_d_model")
    page.locator(SIDEBAR).get_by_text(load_strings("zh")["state.link"]).click()
    box = page.frame_locator(f"{SIDEBAR} iframe").first.locator("#link")
    expect(box).to_have_value(re.compile(r"pe_d_model="), timeout=10_000)
    page.frame_locator(f"{SIDEBAR} iframe").first.locator("#copy").click()
    link = box.input_value()
    assert link == page.url
    assert urlparse(link).path.endswith("/positional_encoding"), link
    query = parse_qs(urlparse(link).query)
    assert query["model"] == ["modern"] and query["pe_d_model"] == [d_model], query
    assert query["prompt"] == ["日本的首都是"] and query["lang"] == ["zh"], query
    assert "seed" not in query  # defaults stay out of the link

    fresh = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="en-US")
    other = fresh.new_page()
    other.goto(link)
    wait_for_app(other)
    assert_no_error(other)
    assert urlparse(other.url).path.endswith("/positional_encoding")
    expect(other.locator(f"{SIDEBAR} .st-key-w_prompt textarea")).to_have_value("日本的首都是", timeout=30_000)
    expect(other.locator(_control("pe_d_model", "input[type='range']")).first).to_have_value(d_model, timeout=30_000)
    assert "modern" in _selected(other, "w_model")
    assert "简体中文" in _selected(other, "w_lang")
    assert _slider(other, "pe_d_model") == d_model
    other.reload()  # a reload keeps the view
    wait_for_app(other)
    expect(other.locator(_control("pe_d_model", "input[type='range']")).first).to_have_value(d_model, timeout=30_000)
    assert "简体中文" in _selected(other, "w_lang")

    tampered = link.replace("model=modern", "model=..%2F..%2Fetc").replace(f"pe_d_model={d_model}", "pe_d_model=7")
    other.goto(tampered)
    expect(other.locator('[data-testid="stToast"]').first).to_be_visible(timeout=30_000)  # the note
    wait_for_app(other)
    assert_no_error(other)
    expect(other.locator(_control("pe_d_model", "input[type='range']")).first).to_have_value("8", timeout=30_000)
    assert "classic" in _selected(other, "w_model")
    fresh.close()


def test_a_chinese_browser_gets_the_chinese_prompt(browser: Browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000}, locale="zh-CN")
    page = context.new_page()
    page.goto(app_url)
    wait_for_app(page)
    assert_no_error(page)
    expect(page.locator(f"{SIDEBAR} .st-key-w_prompt textarea")).to_have_value("法国的首都是", timeout=30_000)
    assert "prompt=" not in page.url and "lang=zh" in page.url
    context.close()
