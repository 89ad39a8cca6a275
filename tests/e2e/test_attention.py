"""Both attention pages in real Chromium: the seeds' numbers, the toggles, the live heads,
hover tooltips, a 64-token grid; screenshots in English, Chinese and the dark theme."""

from __future__ import annotations

import time
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

import core

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

COREF_ZH = "小明把苹果放进书包，因为它太甜了。它指的是"


def open_page(page: Page, app_url: str, path: str) -> None:
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    page.wait_for_selector("h1", timeout=60_000)
    assert_no_error(page)


def switch_to_chinese(page: Page) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="简体中文").click()
    wait_for_app(page)


def set_prompt(page: Page, text: str) -> None:
    box = page.locator('[data-testid="stSidebar"] textarea')
    box.fill(text)
    box.press("Control+Enter")
    wait_for_app(page)


def wait_for_charts(page: Page, minimum: int = 1) -> None:
    """Vega charts draw after the script finishes: wait until they have marks."""
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=\"stVegaLiteChart\"] canvas, "
        f"[data-testid=\"stVegaLiteChart\"] svg.marks').length >= {minimum}",
        timeout=30_000,
    )
    page.wait_for_timeout(500)


def click_tab(page: Page, label: str) -> None:
    page.get_by_role("tab", name=label).click()
    page.wait_for_timeout(800)


def test_self_attention_steps_lab_and_toggles(page: Page, app_url: str, screenshot_dir: Path) -> None:
    s = load_strings("en")
    open_page(page, app_url, "self_attention")
    wait_for_charts(page, 5)
    steps = page.locator("[data-testid=sa-steps]")  # steps 3-6 and the hand calculation: drawn in the browser
    expect(steps).to_contain_text("= 0.155")  # the textbook's 15.5 % / 42.2 %
    expect(steps).to_contain_text("= 0.422")
    expect(steps).to_contain_text("Q₀ · K₁ = 1×1 + 0×2 + 2×1 = 3")
    page.screenshot(path=str(screenshot_dir / "self_attention.steps.en.png"))

    page.locator("[data-testid=sa-steps] [data-knob=sa_mask] label").click()  # knobs are found by their name
    expect(steps).to_contain_text("[2, −∞, −∞]")  # row 0 after the mask, in the hand calculation

    click_tab(page, s["self_attention.tab.lab"])
    scores = page.locator("[data-testid=sa-lab] [data-knob=sa_lab_scores] input")
    scores.fill("1, -2, 1")
    expect(page.get_by_text(s["self_attention.lab.plain.division_by_zero"])).to_be_visible()
    assert_no_error(page)
    page.screenshot(path=str(screenshot_dir / "self_attention.lab.en.png"))

    click_tab(page, s["self_attention.tab.dk"])
    page.screenshot(path=str(screenshot_dir / "self_attention.dk.en.png"))
    click_tab(page, s["self_attention.tab.mh"])
    page.screenshot(path=str(screenshot_dir / "self_attention.multihead.en.png"))
    assert_no_error(page)


def test_self_attention_in_chinese_light_and_dark(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    s = load_strings("zh")
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1440, "height": 2400})
        page = context.new_page()
        open_page(page, app_url, "self_attention")
        switch_to_chinese(page)
        wait_for_charts(page, 5)
        assert s["self_attention.step1"] in page.inner_text("body")
        expect(page.locator("[data-testid=sa-steps]")).to_contain_text("= 0.155")
        page.screenshot(path=str(screenshot_dir / f"self_attention.steps.zh.{scheme}.png"))
        click_tab(page, s["self_attention.tab.lab"])
        page.screenshot(path=str(screenshot_dir / f"self_attention.lab.zh.{scheme}.png"))
        if scheme == "dark":
            click_tab(page, s["self_attention.tab.dk"])
            page.screenshot(path=str(screenshot_dir / "self_attention.dk.zh.dark.png"))
            click_tab(page, s["self_attention.tab.mh"])
            page.screenshot(path=str(screenshot_dir / "self_attention.multihead.zh.dark.png"))
        assert_no_error(page)
        context.close()


def test_multi_head_heatmap_tooltip_grid_and_coreference(page: Page, app_url: str, screenshot_dir: Path) -> None:
    s = load_strings("en")
    page.set_viewport_size({"width": 1440, "height": 3200})
    open_page(page, app_url, "multi_head_attention")
    set_prompt(page, COREF_ZH)
    wait_for_charts(page, 1)  # the coreference chart (the heads and their grid: the browser's component)
    expect(page.locator(GRID_CANVAS)).to_have_count(1)  # the all-heads grid: one canvas
    assert page.locator('[data-testid="stPlotlyChart"], .js-plotly-plot').count() == 0  # Plotly never loads
    # Hover the lower left of the enlarged heatmap (drawn in the browser: ui/components/mha_heads):
    # the tooltip shows the exact weight.
    heatmap = page.locator("[data-testid='mha-heads'] .mh-stage > canvas.mh-canvas:not(.mh-grid-canvas)")
    heatmap.scroll_into_view_if_needed()
    box = heatmap.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.6)
    tooltip = page.locator("[data-testid='mha-heads'] .mh-heat-tip")
    expect(tooltip).to_be_visible(timeout=5_000)
    assert s["multi_head_attention.kind.weights"] in tooltip.inner_text()
    page.screenshot(path=str(screenshot_dir / "multi_head_attention.en.png"))
    assert_no_error(page)


def test_multi_head_in_chinese_light_and_dark(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    s = load_strings("zh")
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 1440, "height": 3200})
        page = context.new_page()
        open_page(page, app_url, "multi_head_attention")
        switch_to_chinese(page)
        set_prompt(page, COREF_ZH)
        wait_for_charts(page, 1)
        body = page.inner_text("body")
        assert s["multi_head_attention.grid.title"] in page.locator(HEADS).inner_text() and "苹果" in body
        page.screenshot(path=str(screenshot_dir / f"multi_head_attention.zh.{scheme}.png"))
        assert_no_error(page)
        context.close()


def test_grid_of_a_64_token_prompt(page: Page, app_url: str, screenshot_dir: Path) -> None:
    """The all-heads grid of a 64-token prompt draws completely (time printed; see bench/)."""
    loaded = core.load_builtin("classic")
    config = loaded.config
    assert len(loaded.tokenizer.encode(LONG_PROMPT)) == 64
    n_heads = config.n_layer * config.n_head
    page.set_viewport_size({"width": 1440, "height": 2200})
    open_page(page, app_url, "multi_head_attention")
    set_prompt(page, LONG_PROMPT)
    toggle = page.locator(f"{HEADS} .mh-switch[data-knob='grid'] label")  # the browser's switch
    toggle.click()  # hide the grid …
    expect(page.locator(GRID_CANVAS)).to_be_hidden()
    start = time.perf_counter()
    toggle.click()  # … and time how long it takes to come back, fully drawn
    page.locator(GRID_CANVAS).scroll_into_view_if_needed()
    # Drawn: every head's visible triangle; at least a third of the triangles' area in blue (the
    # weights' colours) on the canvas (found through the component's shadow root).
    page.wait_for_function(f"""() => {{
        const roots = [document, ...[...document.querySelectorAll('*')].map(e => e.shadowRoot).filter(Boolean)];
        const c = roots.map(r => r.querySelector('.mh-grid-canvas')).find(Boolean);
        if (!c || !c.width) return false;
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 200 && d[i + 2] > d[i] + 40) blue++;
        const scale = c.width / c.getBoundingClientRect().width;
        return blue > {n_heads} * 64 * 65 / 2 / 3 * scale * scale;
    }}""", timeout=30_000)
    elapsed = time.perf_counter() - start
    print(f"64-token grid: toggle click → {n_heads} heads drawn in {elapsed:.2f} s")
    page.screenshot(path=str(screenshot_dir / "multi_head_attention.grid64.en.png"))
    assert_no_error(page)


def test_the_grid_tells_each_cells_head_and_tokens_on_hover(page: Page, app_url: str) -> None:
    """The grid (the browser's canvas): hovering a cell names its head, its query and key tokens
    and the weight."""
    s = load_strings("en")
    page.set_viewport_size({"width": 1440, "height": 1600})
    open_page(page, app_url, "multi_head_attention")
    grid = page.locator(GRID_CANVAS)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    tooltip = page.locator(f"{HEADS} .mh-grid-tip")
    # The first panel's bottom-left cell (the last query, the first key): from the drawn layout.
    g = grid.evaluate("c => c.closest('.mh').tjGrid")
    page.mouse.move(box["x"] + g["left"] + g["panel"] / g["n"] / 2,
                    box["y"] + g["top"] + g["labelH"] + g["panel"] - g["panel"] / g["n"] / 2)
    expect(tooltip).to_be_visible(timeout=5_000)
    text = tooltip.inner_text()
    assert "L0 H0" in text
    assert s["multi_head_attention.axis.query"] in text and s["multi_head_attention.axis.key"] in text
    assert s["multi_head_attention.kind.weights"] in text


HEADS = "[data-testid='mha-heads']"
GRID_CANVAS = f"{HEADS} .mh-grid-canvas"  # the all-heads grid, drawn by the browser's component

# 64 tokens of corpus-style text in both languages (the count is checked in the test).
LONG_PROMPT = (
    "小明把苹果放进书包，因为它太甜了。它指的是苹果。Tom put the apple in the bag because it was too small. "
    "It means the bag. 小红把葡萄留在篮子里，因为它太满了。它指的是篮子。Anna left the grape in the basket "
    "because it was too full"
)


def test_head_view_scrolls_sideways_on_a_phone(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    """On a 390 px phone the head view (one fixed-width panel per head) is wider than the
    screen: its own box scrolls sideways to the other heads; the page itself does not."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(f"{app_url}/multi_head_attention")
    page.wait_for_selector("h1", timeout=60_000)
    wait_for_charts(page, 1)  # the grid of every head is drawn by mha_heads now
    page.wait_for_timeout(1500)
    found = page.evaluate("""() => {
        for (const box of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
            if (box.scrollWidth <= box.clientWidth + 40) continue;
            const before = box.scrollLeft;
            box.scrollLeft = box.scrollWidth;
            return {overflow: getComputedStyle(box).overflowX, moved: box.scrollLeft - before,
                    wide: box.scrollWidth, shown: box.clientWidth};
        }
        return null;
    }""")
    assert found is not None, "no chart wider than the phone screen (the head view should be)"
    assert found["overflow"] == "auto" and found["moved"] > 100, found
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390 + 2  # the page does not scroll
    page.screenshot(path=str(screenshot_dir / "multi_head_attention.phone.scrolled.png"))
    assert_no_error(page)
    context.close()
