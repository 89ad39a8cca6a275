"""In real Chromium: the Embeddings page in both languages and the dark theme; rotate the 3-D map."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app

pytestmark = pytest.mark.e2e

TALL = {"width": 1440, "height": 7200}  # Streamlit scrolls inside a container: a tall viewport shows it all
MAP = ".st-key-embeddings_map_chart"


def open_page(browser: Browser, app_url: str, *, locale: str, scheme: str, viewport: dict) -> Page:
    context = browser.new_context(locale=locale, color_scheme=scheme, viewport=viewport)
    page = context.new_page()
    page.goto(f"{app_url}/embeddings")
    wait_for_app(page)
    # The first visit can take seconds (model load, PCA); the last heading means the page is complete.
    expect(page.get_by_role("heading", name=re.compile(r"^(Try this|试一试)$"))).to_be_visible(timeout=90_000)
    wait_for_app(page)
    assert_no_error(page)
    return page


def camera_eye(page: Page) -> dict:
    """The 3-D scene's camera position as Plotly holds it (changes when the student drags)."""
    return page.evaluate(
        """(selector) => {
            const plot = document.querySelector(selector + ' .js-plotly-plot');
            const eye = plot._fullLayout.scene._scene.getCamera().eye;
            return {x: eye.x, y: eye.y, z: eye.z};
        }""",
        MAP,
    )


@pytest.mark.parametrize(("locale", "scheme", "name"), [("en-US", "light", "en"), ("zh-CN", "dark", "zh.dark"),
                                                        ("en-US", "dark", "en.dark")])
def test_whole_page(browser: Browser, app_url: str, screenshot_dir: Path, locale: str, scheme: str, name: str) -> None:
    page = open_page(browser, app_url, locale=locale, scheme=scheme, viewport=TALL)
    title = "Embeddings: from token ids to vectors" if locale.startswith("en") else "嵌入：从词元 ID 到向量"
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    # The seeds' worked numbers are on screen in the similarity lab.
    lab = page.locator(".st-key-embeddings_lab_table")
    for number in ("0.99", "0.34", "0.14", "1.16"):
        expect(lab).to_contain_text(number, timeout=30_000)
    expect(page.locator(f"{MAP} .js-plotly-plot")).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1500)  # let WebGL draw
    page.screenshot(path=str(screenshot_dir / f"embeddings.{name}.png"))
    page.context.close()


def test_drag_rotates_the_map(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1000})
    chart = page.locator(MAP)
    chart.scroll_into_view_if_needed()
    expect(chart.locator(".js-plotly-plot")).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1500)
    before = camera_eye(page)
    chart.screenshot(path=str(screenshot_dir / "embeddings.map.before.png"))
    # Plotly's .gl-container can measure 0 px high: aim at the drawn plot itself, left of the
    # legend, below the title.
    box = chart.locator(".js-plotly-plot").bounding_box()
    assert box is not None and box["height"] > 100, box
    x, y = box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.55
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 11):  # a slow drag, as a hand would do it
        page.mouse.move(x + 25 * step, y + 8 * step)
        page.wait_for_timeout(30)
    page.mouse.up()
    page.wait_for_timeout(800)
    after = camera_eye(page)
    moved = sum((after[a] - before[a]) ** 2 for a in "xyz") ** 0.5
    assert moved > 0.1, (before, after)
    chart.screenshot(path=str(screenshot_dir / "embeddings.map.rotated.png"))
    # Rotating is purely in the browser: no rerun, no error.
    assert_no_error(page)
    page.context.close()


def test_normalise_toggle_in_the_browser(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1600})
    toggle = page.locator(".st-key-embeddings_lab_normalise")
    toggle.scroll_into_view_if_needed()
    toggle.locator("label").click()
    wait_for_app(page)
    expect(page.locator(".st-key-embeddings_lab_table")).to_contain_text("√(2 − 2·cos)")
    page.locator(".st-key-embeddings_lab_arrows").scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    page.screenshot(path=str(screenshot_dir / "embeddings.lab.normalised.png"))
    assert_no_error(page)
    page.context.close()
