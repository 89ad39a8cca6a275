"""In real Chromium: the Positional-encoding page in both languages and the dark theme; change d_model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app

pytestmark = pytest.mark.e2e

TALL = {"width": 1440, "height": 8200}  # Streamlit scrolls inside a container: a tall viewport shows it all
# The sinusoidal table is drawn in the browser (ui.components.lessons) on a canvas.
DRAWN_HEATMAP = "[data-testid=pe-heatmap] canvas"
SEED_ROW = "[0.141, −0.990, 0.296, 0.955, 0.030, 1.000, 0.003, 1.000]"


def open_page(browser: Browser, app_url: str, *, locale: str, scheme: str, viewport: dict) -> Page:
    context = browser.new_context(locale=locale, color_scheme=scheme, viewport=viewport)
    page = context.new_page()
    page.goto(f"{app_url}/positional_encoding")
    wait_for_app(page)
    # The first visit can take seconds (model load, PCA); the last heading means the page is complete.
    expect(page.get_by_role("heading", name=re.compile(r"^(Try this|试一试)$"))).to_be_visible(timeout=90_000)
    wait_for_app(page)
    assert_no_error(page)
    return page


@pytest.mark.parametrize(("locale", "scheme", "name"), [("en-US", "light", "en"), ("zh-CN", "dark", "zh.dark"),
                                                        ("zh-CN", "light", "zh")])
def test_whole_page(browser: Browser, app_url: str, screenshot_dir: Path, locale: str, scheme: str, name: str) -> None:
    page = open_page(browser, app_url, locale=locale, scheme=scheme, viewport=TALL)
    expect(page.get_by_text(SEED_ROW).first).to_be_visible()
    expect(page.locator(DRAWN_HEATMAP).first).to_be_visible(timeout=30_000)
    assert page.locator(".js-plotly-plot").count() == 0  # every default chart is Vega: Plotly never loads
    page.wait_for_timeout(1000)
    page.screenshot(path=str(screenshot_dir / f"positional_encoding.{name}.png"))
    page.context.close()


def test_changing_d_model(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1800})
    slider = page.get_by_role("slider", name=re.compile("d_model")).first
    expect(slider).to_have_value("8")
    slider.focus()
    for _ in range(60):  # step 2: 8 → 128
        page.keyboard.press("ArrowRight")
    expect(slider).to_have_value("128")
    wait_for_app(page)
    page.wait_for_timeout(500)
    wait_for_app(page)
    expect(page.get_by_text("PE(pos = 3) with d = 128")).to_be_visible(timeout=30_000)
    heatmap = page.locator("[data-testid=pe-heatmap]")
    expect(page.locator(DRAWN_HEATMAP).first).to_be_visible()
    assert_no_error(page)
    heatmap.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshot_dir / "positional_encoding.d128.png"))
    page.context.close()
