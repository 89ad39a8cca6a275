"""In real Chromium: the sampling knobs redraw the charts; generation steps one token per click."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

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


def _chart(page: Page, index: int) -> Locator:
    chart = page.locator('[data-testid="stVegaLiteChart"]').nth(index)
    chart.scroll_into_view_if_needed()
    expect(chart).to_be_visible(timeout=30_000)
    page.wait_for_timeout(600)  # vega-embed draws asynchronously after the element appears
    return chart


def _move_slider(page: Page, key: str, target: str, direction: str = "ArrowLeft", max_presses: int = 80) -> None:
    """Press arrow keys on a slider until it shows ``target``, one rerun per press.

    Each press makes Streamlit rerun; presses sent while it reruns can be dropped, so the
    value is read back after every press instead of counting presses.
    """
    container = page.locator(f".st-key-{key}")
    container.scroll_into_view_if_needed()
    thumb = page.locator(f".st-key-{key} input[type='range']")  # Streamlit 1.67: a hidden range input
    for _ in range(max_presses):
        if thumb.get_attribute("aria-valuetext") == target:
            break
        thumb.focus()
        thumb.press(direction)
        wait_for_app(page)
    expect(thumb).to_have_attribute("aria-valuetext", target)
    wait_for_app(page)
    page.wait_for_timeout(400)


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
    compare = 1  # charts: top-N, original vs after, histogram, lens grid, lens line
    before = _chart(page, compare).screenshot()
    _move_slider(page, "logits_sampling_temperature", "0.50")
    assert_no_error(page)
    colder = _chart(page, compare).screenshot()
    assert colder != before, "the chart did not change when the temperature moved"
    _move_slider(page, "logits_sampling_top_p", "0.50")
    assert _chart(page, compare).screenshot() != colder, "the chart did not change when top-p moved"
    expect(page.get_by_text("then removed", exact=False)).to_be_visible()
    _move_slider(page, "logits_sampling_temperature", "0.00")  # greedy, said in words
    expect(page.get_by_text("T = 0 is greedy decoding", exact=False)).to_be_visible()
    assert_no_error(page)
    _shoot(page, screenshot_dir / "logits_sampling.knobs.en.png")


def test_generation_steps_five_times(page: Page, app_url: str, screenshot_dir: Path) -> None:
    _open(page, f"{app_url}/generation", "en")
    next_button = page.locator(".st-key-generation_next button")
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
        page.locator(".st-key-generation_next button").click()
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
        page.locator(".st-key-generation_run button").click()
        expect(page.get_by_text("Stopped:", exact=False).first).to_be_visible(timeout=60_000)
        wait_for_app(page)
        assert_no_error(page)
        _shoot(page, screenshot_dir / "generation.dark.png")
    finally:
        context.close()


def test_a_knob_updates_the_knobs_chart_in_place(page: Page, app_url: str) -> None:
    """The knobs chart is sent "live" (``ui.charts.live``): a move swaps its data into the Vega
    view the browser already has (the same drawing surface, no new chart) and the title, carried
    in the data, still says the temperature."""
    _open(page, f"{app_url}/logits_sampling", "en")
    chart = _chart(page, 1)
    chart.evaluate("el => { window.__tjSurface = el.querySelector('svg, canvas'); }")
    _move_slider(page, "logits_sampling_temperature", "0.50")
    assert_no_error(page)
    chart = _chart(page, 1)
    assert chart.evaluate("el => el.querySelector('svg, canvas') === window.__tjSurface"), "the chart was rebuilt"
    title = chart.evaluate("el => [...el.querySelectorAll('.role-title-text text, .role-title-text tspan')]"
                           ".map(t => t.textContent).join('')")
    assert "T = 0.50" in title, title
