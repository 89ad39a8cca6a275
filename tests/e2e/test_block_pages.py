"""In real Chromium: the two block pages in light, dark and at phone width; an ablation reruns its section."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

TALL = 9000  # both pages are long; Streamlit scrolls an inner box, so the viewport must hold the page


def _open(page: Page, url: str, phone: bool = False) -> None:
    page.goto(url)
    if phone:  # at phone width the sidebar starts collapsed: wait for the main column instead
        page.wait_for_selector('[data-testid="stMain"]', timeout=60_000)
        page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
        page.wait_for_selector('[data-testid="stVegaLiteChart"]', timeout=60_000)
        page.wait_for_timeout(500)
    else:
        wait_for_app(page)
    assert_no_error(page)


def _shoot(page: Page, path: Path, width: int) -> None:
    page.set_viewport_size({"width": width, "height": TALL})
    page.evaluate("() => document.querySelectorAll('[data-testid=\"stMain\"], [data-testid=\"stAppScrollToBottomContainer\"]')"
                  ".forEach(e => e.scrollTo(0, 0))")  # the page from its top
    page.wait_for_timeout(500)
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]')]"
        ".every(e => e.querySelector('canvas, svg'))",
        timeout=60_000,
    )
    page.wait_for_function(  # the block drawings (SVG laid out on the server) are on screen
        "() => [...document.querySelectorAll('[class*=\"st-key-tb_diagrams\"] svg')]"
        ".every(svg => svg.getBoundingClientRect().height > 40)",
        timeout=60_000,
    )
    page.wait_for_timeout(1000)
    page.screenshot(path=str(path))


def _no_horizontal_overflow(page: Page) -> None:
    """Nothing in the main column is wider than the window (charts fit, tables scroll inside)."""
    overflow = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m.scrollWidth - m.clientWidth; }")
    assert overflow <= 2, f"the page scrolls sideways by {overflow}px"


def test_transformer_block_light_and_ablation(page: Page, app_url: str, screenshot_dir: Path) -> None:
    _open(page, f"{app_url}/transformer_block")
    strings = load_strings("en")
    expect(page.get_by_text(strings["transformer_block.dla.header"])).to_be_visible()
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    expect(charts.first).to_be_visible(timeout=30_000)
    # The page's charts arrive over the run (the picked sections last): wait for them, then count.
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stVegaLiteChart\"]').length >= 10",
                           timeout=60_000)
    n_charts = charts.count()
    assert n_charts >= 10
    after = page.locator('[data-testid="stVegaLiteChart"]').nth(4)  # heat, writes, DLA, before, after
    after.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    shot_before = after.screenshot()
    box = page.locator(".st-key-tb_ablate_resid")
    box.scroll_into_view_if_needed()
    box.locator("input").click()
    page.get_by_role("option", name="L0").click()
    page.keyboard.press("Escape")
    wait_for_app(page)
    assert_no_error(page)
    expect(page.get_by_text("The top prediction", exact=False)).to_be_visible()
    page.wait_for_timeout(800)
    assert after.screenshot() != shot_before, "the 'after' chart did not change with the ablation"
    _shoot(page, screenshot_dir / "transformer_block.en.png", 1440)
    assert_no_error(page)


def test_whole_model_light(page: Page, app_url: str, screenshot_dir: Path) -> None:
    _open(page, f"{app_url}/whole_model")
    expect(page.get_by_text("124,439,808").first).to_be_attached()
    _shoot(page, screenshot_dir / "whole_model.en.png", 1440)
    assert_no_error(page)


def test_block_pages_dark_and_phone(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    for scheme, width, locale, tag in (("dark", 1440, "zh-CN", "zh.dark"), ("light", 390, "en-US", "phone")):
        context = browser.new_context(color_scheme=scheme, locale=locale, viewport={"width": width, "height": 1000})
        page = context.new_page()
        try:
            for name in ("transformer_block", "whole_model"):
                _open(page, f"{app_url}/{name}", phone=width < 500)
                if scheme == "dark":
                    background = page.evaluate(
                        "getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
                    assert background != "rgb(255, 255, 255)", background
                if width < 500:
                    _no_horizontal_overflow(page)
                    page.wait_for_timeout(3000)  # diagrams settle after their first draw
                    boxes = page.evaluate(
                        "() => [...document.querySelectorAll('[class*=\"st-key-tb_diagrams\"] svg')]"
                        ".map(e => e.getBoundingClientRect().width)")
                    assert all(0 < w <= width for w in boxes), f"a diagram is wider than the phone: {boxes}"
                _shoot(page, screenshot_dir / f"{name}.{tag}.png", width)
                assert_no_error(page)
        finally:
            context.close()


def _counts(page: Page) -> tuple[int, int, int, int]:
    main = '[data-testid="stMain"] '
    return tuple(page.locator(main + sel).count() for sel in (  # type: ignore[return-value]
        '[data-testid="stElementContainer"]', '[data-testid="stVegaLiteChart"]', '[data-testid="stNumberInput"]',
        '[data-testid="stDataFrame"]'))


def _settle(page: Page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(700)


def test_picks_replace_the_sections_they_feed_instead_of_adding_copies(page: Page, app_url: str) -> None:
    """The layer and token pickers rerun one fragment that draws into slots all over the page,
    with fragments of their own inside it (the attribution target, the live norm, the neuron).
    Those inner parts piled up: every pick added another copy of them below the last (5 more
    charts, a number input, a table each time). Each inner part now has a keyed box of its own."""
    page.set_viewport_size({"width": 1366, "height": 900})
    _open(page, f"{app_url}/transformer_block")
    before = _counts(page)
    s = load_strings("en")
    main = page.locator('[data-testid="stMain"]')

    def pick(label: str, option: int) -> None:
        box = main.locator('[data-testid="stSelectbox"]').filter(has=page.get_by_text(label, exact=True)).first
        box.scroll_into_view_if_needed()
        box.click()
        page.get_by_role("option").nth(option).click()
        _settle(page)

    for option in (2, 1, 3):
        pick(s["transformer_block.pick.layer"], option)
        assert _counts(page) == before
    pick(s["transformer_block.pick.token"], 1)
    pick(s["transformer_block.dla.target"], 2)
    neuron = main.locator('[data-testid="stNumberInput"] input').first
    neuron.scroll_into_view_if_needed()
    neuron.fill("7")
    neuron.press("Enter")
    _settle(page)
    pick(s["transformer_block.pick.layer"], 0)
    assert _counts(page) == before
    assert_no_error(page)
