"""In real Chromium: the Embeddings page in both languages and the dark theme; turn the 3-D map,
hide and isolate its groups from the legend, read a point's tooltip; the map's own toggles
(hide uncategorised tokens, the PCA fit) answer in the browser with no websocket frame, survive
a page change and come back from a link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

pytestmark = pytest.mark.e2e

TALL = {"width": 1440, "height": 7200}  # Streamlit scrolls inside a container: a tall viewport shows it all
MAP = ".st-key-embeddings_map_chart"
SPACE = '[data-testid="space3d"]'  # the component's root (Playwright's CSS reaches into its shadow root)


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


def drawn(page: Page) -> int:
    return int(page.locator(f"{MAP} {SPACE}").get_attribute("data-drawn") or -1)


def view(page: Page) -> list[float]:
    return [float(v) for v in (page.locator(f"{MAP} {SPACE}").get_attribute("data-view") or "").split(",")]


def orange_pixels(page: Page) -> list[dict]:
    """Where on screen the map painted the prompt's orange (#ff7f0e: its rings and their labels),
    read from the canvas, bottom-most first (a ring sits below its label)."""
    return page.evaluate("""(selector) => {
        const hosts = [document.querySelector(selector), ...document.querySelectorAll(selector + ' *')];
        const root = hosts.find((h) => h && h.shadowRoot);
        const canvas = root && root.shadowRoot.querySelector('.s3-canvas');
        if (!canvas) return [];
        const ctx = canvas.getContext('2d');
        const {width, height} = canvas;
        const pixels = ctx.getImageData(0, 0, width, height).data;
        const box = canvas.getBoundingClientRect();
        const out = [];
        for (let y = height - 1; y >= 0; y--) for (let x = 0; x < width; x++) {
            const i = 4 * (y * width + x);
            if (Math.abs(pixels[i] - 255) < 6 && Math.abs(pixels[i + 1] - 127) < 6 && Math.abs(pixels[i + 2] - 14) < 6
                && pixels[i + 3] > 250) {
                out.push({x: box.left + x * box.width / width, y: box.top + y * box.height / height});
            }
        }
        return out;
    }""", MAP)


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
    expect(page.locator(f"{MAP} {SPACE} canvas")).to_be_visible(timeout=30_000)
    assert drawn(page) > 500  # about 1,100 tokens drawn
    arrows = page.locator(f".st-key-embeddings_lab_arrows {SPACE}")
    expect(arrows.locator("canvas")).to_be_visible()
    expect(arrows).to_have_attribute("data-drawn", "0")  # arrows only, no points
    assert page.locator(".js-plotly-plot").count() == 0  # no WebGL: Plotly never loads on this page
    page.screenshot(path=str(screenshot_dir / f"embeddings.{name}.png"))
    page.context.close()


def test_drag_turns_the_map_and_a_rerun_keeps_the_view(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1000})
    chart = page.locator(MAP)
    chart.scroll_into_view_if_needed()
    canvas = chart.locator(f"{SPACE} canvas")
    expect(canvas).to_be_visible(timeout=30_000)
    before = view(page)
    chart.screenshot(path=str(screenshot_dir / "embeddings.map.before.png"))
    box = canvas.bounding_box()
    assert box is not None and box["height"] > 300, box
    x, y = box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.55
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 11):  # a slow drag, as a hand would do it
        page.mouse.move(x + 25 * step, y + 8 * step)
        page.wait_for_timeout(30)
    page.mouse.up()
    after = view(page)
    assert abs(after[0] - before[0]) > 1.0 and abs(after[1] - before[1]) > 0.3, (before, after)  # turned and tilted
    chart.screenshot(path=str(screenshot_dir / "embeddings.map.rotated.png"))
    # "+" zooms; the view then survives a redraw of the map (the "only categories" toggle, now in the browser).
    chart.get_by_role("button", name="Zoom in").click()
    zoomed = view(page)
    assert zoomed[2] == pytest.approx(1.25, abs=1e-3)
    count = drawn(page)
    chart.locator(".s3-only input").click()  # "only categories": the grey points go, in the browser
    expect(chart.locator(SPACE)).not_to_have_attribute("data-drawn", str(count), timeout=30_000)
    assert 0 < drawn(page) < count
    assert view(page) == zoomed
    assert_no_error(page)
    page.context.close()


def test_legend_hides_and_isolates_groups_in_the_browser(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1000})
    chart = page.locator(MAP)
    chart.scroll_into_view_if_needed()
    expect(chart.locator(f"{SPACE} canvas")).to_be_visible(timeout=30_000)
    everything = drawn(page)
    other = chart.get_by_role("button", name="other", exact=True)
    other.click()
    expect(other).to_have_attribute("aria-pressed", "false")
    fewer = drawn(page)
    assert 0 < fewer < everything
    fruit = chart.get_by_role("button", name="fruit", exact=True)
    fruit.dblclick()  # fruit alone
    alone = drawn(page)
    assert 0 < alone < fewer
    expect(fruit).to_have_attribute("aria-pressed", "true")
    expect(other).to_have_attribute("aria-pressed", "false")
    chart.screenshot(path=str(screenshot_dir / "embeddings.map.fruit_alone.png"))
    fruit.dblclick()  # every group back
    assert drawn(page) == everything
    assert_no_error(page)
    page.context.close()


def test_pointing_at_a_ringed_token_names_it(browser: Browser, app_url: str) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1000})
    chart = page.locator(MAP)
    chart.scroll_into_view_if_needed()
    expect(chart.locator(f"{SPACE} canvas")).to_be_visible(timeout=30_000)
    page.wait_for_timeout(300)
    candidates = orange_pixels(page)
    assert candidates, "the prompt's rings are not on the map"
    tip = chart.locator(".s3-tip")
    for at in candidates[::7][:40]:  # some are the labels' letters: point until a ring answers
        page.mouse.move(at["x"], at["y"])
        if tip.is_visible() and "your prompt" in (tip.text_content() or ""):
            break
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("your prompt")
    expect(tip).to_contain_text(re.compile(r"token: .+"))
    page.mouse.move(5, 5)
    expect(tip).to_be_hidden()
    page.context.close()


def test_normalise_toggle_in_the_browser(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    page = open_page(browser, app_url, locale="en-US", scheme="light", viewport={"width": 1440, "height": 1600})
    toggle = page.locator(".st-key-embeddings_lab_normalise")
    toggle.scroll_into_view_if_needed()
    toggle.locator("label").click()
    wait_for_app(page)
    expect(page.locator(".st-key-embeddings_lab_table")).to_contain_text("√(2 − 2·cos)")
    arrows = page.locator(".st-key-embeddings_lab_arrows")
    arrows.scroll_into_view_if_needed()
    expect(arrows.locator(".s3-title")).to_contain_text("length 1")
    page.screenshot(path=str(screenshot_dir / "embeddings.lab.normalised.png"))
    assert_no_error(page)
    page.context.close()


def _count_frames(page: Page) -> list[int]:
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _expected_counts() -> tuple[int, int]:
    """(every point drawn, points drawn with only the categories) for the default prompt, from core."""
    import core
    from ui.precompute import embeddings_table

    loaded = core.load_builtin("classic")
    view_ = embeddings_table(loaded)
    prompt = loaded.tokenizer.encode("The capital of France is")
    shown = sorted({*view_.trained, *prompt})
    ring = len(set(prompt))
    categorised = sum(1 for i in shown if view_.categories[i] is not None)
    return len(shown) + ring, categorised + ring


def test_map_toggles_answer_in_the_browser_and_survive(browser: Browser, app_url: str) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    sent = _count_frames(page)
    page.goto(f"{app_url}/embeddings")
    wait_for_app(page)
    chart = page.locator(MAP)
    chart.scroll_into_view_if_needed()
    expect(chart.locator(f"{SPACE} canvas")).to_be_visible(timeout=90_000)
    page.wait_for_timeout(1500)
    before = sent[0]
    every, categorised = _expected_counts()
    assert drawn(page) == every
    only = chart.locator(".s3-only input")
    only.click()
    assert drawn(page) == categorised  # the same points core's categories keep
    expect(chart.get_by_role("button", name="other", exact=True)).to_be_hidden()
    fit = chart.locator(".s3-fit [role='radio'][aria-checked='true']")
    expect(fit).to_have_attribute("data-fit", "0")
    caption = chart.locator(".s3-caption")
    expect(caption).to_contain_text("Explained variance")
    fit.focus()
    page.keyboard.press("ArrowRight")  # a radio group: arrow keys move the choice
    expect(chart.locator(SPACE)).to_have_attribute("data-fit", "1")
    expect(chart.locator(".s3-fit [data-fit='1']")).to_be_focused()
    expect(caption).to_contain_text("category words")
    assert drawn(page) == categorised
    page.wait_for_timeout(1000)
    assert sent[0] == before, "a map toggle sent a message to the server"
    url = page.url
    assert "embeddings_map_only=1" in url and "embeddings_map_fit_categories=1" in url, url
    # Another page and back (same session): the toggles stay.
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("link", name=load_strings("en")["nav.tokenization"]).first.click()
    wait_for_app(page)
    sidebar.get_by_role("link", name=load_strings("en")["nav.embeddings"]).first.click()
    wait_for_app(page)
    expect(page.locator(f"{MAP} {SPACE}")).to_have_attribute("data-fit", "1", timeout=90_000)
    expect(page.locator(f"{MAP} {SPACE}")).to_have_attribute("data-only", "1")
    # A link in a new session restores them; a bad value falls back to the default.
    fresh = browser.new_context().new_page()
    fresh.goto(url)
    wait_for_app(fresh)
    expect(fresh.locator(f"{MAP} {SPACE}")).to_have_attribute("data-fit", "1", timeout=90_000)
    expect(fresh.locator(f"{MAP} {SPACE}")).to_have_attribute("data-only", "1")
    fresh.context.close()
    bad = browser.new_context().new_page()
    bad.goto(f"{app_url}/embeddings?embeddings_map_fit_categories=../../etc&embeddings_map_only=maybe")
    wait_for_app(bad)
    expect(bad.locator(f"{MAP} {SPACE}")).to_have_attribute("data-fit", "0", timeout=90_000)
    expect(bad.locator(f"{MAP} {SPACE}")).to_have_attribute("data-only", "0")
    assert_no_error(bad)
    bad.context.close()
    context.close()
