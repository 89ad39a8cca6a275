"""In real Chromium: the sampling knobs redraw the bars; generation steps one token per click.

The knobs are a component now (ui/components/sampling_lab): its numbers against core, the
websocket frames and the link are tests/e2e/test_sampling_knobs.py's business.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

LOGITS_LAB = ".st-key-logits_sampling_knobs .sl"  # Playwright's CSS reaches into the shadow root
GEN_LAB = ".st-key-generation_knobs .sl"
TALL = {"width": 1440, "height": 4600}  # Streamlit scrolls inside an inner box: tall viewport, not full_page


def _open(page: Page, url: str, lang: str) -> None:
    page.goto(url)
    wait_for_app(page)
    if lang == "zh":
        # Switch language through the sidebar select box, like a student would.
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name="简体中文").click()
        wait_for_app(page)
    assert_no_error(page)


def _move_knob(page: Page, knob: str, target: str, direction: str = "ArrowLeft", max_presses: int = 80) -> None:
    """Press arrow keys on a knob of the Logits page until it shows ``target`` (in the browser)."""
    thumb = page.locator(f"{LOGITS_LAB} .knob[data-knob='{knob}'] input")
    thumb.scroll_into_view_if_needed()
    thumb.focus()
    for _ in range(max_presses):
        if thumb.get_attribute("aria-valuetext") == target:
            break
        thumb.press(direction)
    expect(thumb).to_have_attribute("aria-valuetext", target)


def _bars(page: Page) -> list[str]:
    return page.locator(f"{LOGITS_LAB} .sl-row[data-id]").evaluate_all("rows => rows.map(r => r.dataset.after)")


def _shoot(page: Page, path: Path) -> None:
    size = page.viewport_size
    page.set_viewport_size(TALL)
    # Charts draw asynchronously (and only once on screen): wait until every one has drawn.
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
        ".every(e => e.querySelector('canvas, svg'))",
        timeout=60_000,
    )
    page.wait_for_timeout(800)
    page.screenshot(path=str(path))
    if size:
        page.set_viewport_size(size)


def test_temperature_and_top_p_redraw_the_distribution(page: Page, app_url: str, screenshot_dir: Path) -> None:
    _open(page, f"{app_url}/logits_sampling", "en")
    expect(page.locator(LOGITS_LAB)).to_be_visible(timeout=60_000)
    before = _bars(page)
    _move_knob(page, "temperature", "0.50")
    colder = _bars(page)
    assert colder != before, "the bars did not change when the temperature moved"
    _move_knob(page, "top_p", "0.50")
    assert _bars(page) != colder, "the bars did not change when top-p moved"
    expect(page.get_by_text("then removed", exact=False)).to_be_visible()
    _move_knob(page, "temperature", "0.00")  # greedy, said in words
    expect(page.get_by_text("T = 0 is greedy decoding", exact=False)).to_be_visible()
    assert_no_error(page)
    _shoot(page, screenshot_dir / "logits_sampling.knobs.en.png")


def test_generation_steps_five_times(page: Page, app_url: str, screenshot_dir: Path) -> None:
    _open(page, f"{app_url}/generation", "en")
    next_button = page.locator(f"{GEN_LAB} button[data-action='next']")
    for step in range(1, 6):
        if next_button.is_disabled():  # the model wrote end-of-text early: generation is over
            break
        next_button.click()
        wait_for_app(page)
        expect(page.get_by_text(f"({step} tokens generated)", exact=False)).to_be_visible()
        assert_no_error(page)
    expect(page.get_by_text("Timeline:", exact=False).first).to_be_attached()  # the title wraps into lines
    expect(page.get_by_text("40.96 MB").first).to_be_visible()
    expect(page.get_by_text("1.97 GB").first).to_be_visible()
    _shoot(page, screenshot_dir / "generation.steps.en.png")


def test_output_pages_in_chinese(page: Page, app_url: str, screenshot_dir: Path) -> None:
    strings = load_strings("zh")
    _open(page, f"{app_url}/logits_sampling", "zh")
    expect(page.get_by_text(strings["logits_sampling.head.lens"])).to_be_visible()
    _shoot(page, screenshot_dir / "logits_sampling.zh.png")
    page.locator('[data-testid="stSidebar"]').get_by_role("link", name=strings["nav.generation"]).first.click()
    wait_for_app(page)
    for _ in range(3):
        page.locator(f"{GEN_LAB} button[data-action='next']").click()
        wait_for_app(page)
    assert_no_error(page)
    expect(page.get_by_text(strings["generation.head.memory"])).to_be_visible()
    _shoot(page, screenshot_dir / "generation.zh.png")


def test_output_pages_in_dark_theme(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    context = browser.new_context(color_scheme="dark", viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    try:
        _open(page, f"{app_url}/logits_sampling", "en")
        background = page.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
        assert background != "rgb(255, 255, 255)", background
        _shoot(page, screenshot_dir / "logits_sampling.dark.png")
        page.goto(f"{app_url}/generation")
        wait_for_app(page)
        page.locator(f"{GEN_LAB} button[data-action='run']").click()
        expect(page.get_by_text("Stopped:", exact=False).first).to_be_visible(timeout=60_000)
        wait_for_app(page)
        assert_no_error(page)
        _shoot(page, screenshot_dir / "generation.dark.png")
    finally:
        context.close()


def test_a_knob_redraws_in_place(page: Page, app_url: str) -> None:
    """A move redraws inside the component the page already has (no new element, no rerun);
    the chart's title still says the temperature."""
    _open(page, f"{app_url}/logits_sampling", "en")
    lab = page.locator(LOGITS_LAB)
    expect(lab).to_be_visible(timeout=60_000)
    lab.evaluate("el => { window.__tjLab = el; }")
    _move_knob(page, "temperature", "0.50")
    assert_no_error(page)
    assert lab.evaluate("el => el === window.__tjLab"), "the component was rebuilt"
    title = page.locator(f"{LOGITS_LAB} .sl-title").text_content() or ""
    assert "T = 0.50" in title, title
