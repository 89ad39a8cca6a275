"""In real Chromium: overview, language switch, every page through our navigation."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui import nav
from ui.i18n import load_strings


def _pages() -> list[nav.PageInfo]:
    return [p for _, ps in nav.existing_sections() for p in ps]


def test_visit_every_page_in_both_languages(page: Page, app_url: str, screenshot_dir: Path) -> None:
    page.goto(app_url)
    wait_for_app(page)
    assert_no_error(page)
    expect(page.locator(".st-key-overview_diagram svg").first).to_be_visible(timeout=30_000)
    for lang in ("en", "zh"):
        if lang == "zh":
            # Switch language through the sidebar select box, like a student would.
            page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
            page.get_by_role("option", name="简体中文").click()
            wait_for_app(page)
        strings = load_strings(lang)
        for info in _pages():
            label = strings[f"nav.{info.page_id}"]
            page.locator('[data-testid="stSidebar"]').get_by_role("link", name=label).first.click()
            wait_for_app(page)
            assert_no_error(page)
            assert page.title().startswith("Token Journey · "), page.title()
            page.screenshot(path=str(screenshot_dir / f"{info.page_id}.{lang}.png"))


def test_direct_page_url_shows_the_sidebar(page: Page, app_url: str) -> None:
    others = [p for p in _pages() if p.path != "app.py"]
    target = others[0].path.removeprefix("pages/").removesuffix(".py") if others else ""
    page.goto(f"{app_url}/{target}")
    wait_for_app(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_be_visible()
    expect(page.locator('[data-testid="stSidebar"] textarea')).to_be_visible()
    assert_no_error(page)


def test_dark_theme_overview(browser, app_url: str, screenshot_dir: Path) -> None:
    context = browser.new_context(color_scheme="dark", viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.goto(app_url)
    wait_for_app(page)
    assert_no_error(page)
    background = page.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
    assert background not in ("rgb(255, 255, 255)",), background
    page.screenshot(path=str(screenshot_dir / "overview.dark.png"))
    context.close()
