"""Multi-head attention's head picker in real Chromium (ui/components/mha_heads): picking a head
by click, touch-sized buttons or arrow keys redraws the heatmap with no websocket frame; what it
shows equals the model's trace at random heads and cells; the pick survives a page change and
comes back from a link; bad link values fall back."""

from __future__ import annotations

import random
import re
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

import core
from core.engine import names
from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

pytestmark = pytest.mark.e2e

HEADS = "[data-testid='mha-heads']"  # the component's root (Playwright's CSS reaches into its shadow root)
PROMPT = "The capital of France is"


def _count_frames(page: Page) -> list[int]:
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _open(page: Page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    expect(page.locator(HEADS)).to_be_visible(timeout=60_000)
    assert_no_error(page)


def _trace(prompt: str) -> dict[str, np.ndarray]:
    loaded = core.load_builtin("classic")
    _, trace = loaded.model.run_with_trace(loaded.tokenizer.encode(prompt))
    return trace


def _numbers(page: Page) -> list[list[str]]:
    """The enlarged head's numbers table (opened on demand), as text, row by row."""
    box = page.locator(f"{HEADS} details.mh-numbers")
    if box.get_attribute("open") is None:
        box.locator("summary").click()
    return box.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent))")


def test_arrow_keys_pick_heads_in_the_browser_and_show_the_trace(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, f"{app_url}/multi_head_attention")
    root = page.locator(HEADS)
    cfg = core.load_builtin("classic").config
    trace = _trace(PROMPT)
    radios = page.locator(f"{HEADS} [role='radio']")
    expect(radios).to_have_count(cfg.n_layer * cfg.n_head)
    assert page.locator(f"{HEADS} [role='radiogroup']").count() == 1
    # one Tab stop: only the checked radio is focusable
    assert radios.evaluate_all("rs => rs.filter(r => r.tabIndex === 0).length") == 1
    page.wait_for_timeout(1500)
    before = sent[0]
    page.locator(f"{HEADS} [role='radio'][aria-checked='true']").focus()
    page.keyboard.press("ArrowRight")
    expect(root).to_have_attribute("data-head", "1")
    page.keyboard.press("ArrowDown")
    expect(root).to_have_attribute("data-layer", "1")
    expect(page.locator(f"{HEADS} [role='radio'][data-layer='1'][data-head='1']")).to_be_focused()
    expect(page.locator(f"{HEADS} .mh-title").first).to_contain_text("Layer 1, head 1")
    rng = random.Random(43)
    timings = []
    for _ in range(6):
        layer, head = rng.randrange(cfg.n_layer), rng.randrange(cfg.n_head)
        ms = page.locator(f"{HEADS} [role='radio'][data-layer='{layer}'][data-head='{head}']").evaluate(
            "b => { const t0 = performance.now(); b.click(); return performance.now() - t0; }")
        timings.append(ms)
        expect(root).to_have_attribute("data-head", str(head))
        expect(root).to_have_attribute("data-layer", str(layer))
        pattern = trace[names.act_name("pattern", layer=layer)][head]
        rows = _numbers(page)
        n = pattern.shape[0]
        assert len(rows) == n
        for q in range(n):
            for k in range(n):
                if k <= q:
                    assert rows[q][k] == f"{pattern[q, k]:.4f}", (layer, head, q, k)
                else:
                    assert rows[q][k] == load_strings("en")["multi_head_attention.masked"]
    # the head view follows the picked layer; its query is picked here too (no frame either)
    layer = int(root.get_attribute("data-layer") or 0)
    page.locator(f"{HEADS} select.mh-query").select_option("2")
    expect(root).to_have_attribute("data-query", "2")
    pattern = trace[names.act_name("pattern", layer=layer)]
    weights = page.locator(f"{HEADS} .mh-link").evaluate_all(
        "ls => ls.map(l => [Number(l.dataset.head), Number(l.dataset.k), l.dataset.w])")
    assert len(weights) == cfg.n_head * 3
    for h, k, w in weights:
        assert w == f"{pattern[h, 2, k]:.4f}", (h, k, w)
    expect(page.locator(f"{HEADS} .mh-view .mh-title")).to_contain_text(f"Layer {layer}")
    # the keyboard's cell cursor shows a cell's exact value in the tooltip
    canvas = page.locator(f"{HEADS} canvas.mh-canvas:not(.mh-grid-canvas)")  # the enlarged head (not the grid)
    canvas.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    tip = page.locator(f"{HEADS} .mh-heat-tip")
    expect(tip).to_be_visible()
    q, k = int(tip.get_attribute("data-q") or -1), int(tip.get_attribute("data-k") or -1)
    layer, head = int(root.get_attribute("data-layer") or 0), int(root.get_attribute("data-head") or 0)
    value = trace[names.act_name("pattern", layer=layer)][head][q, k]
    assert re.search(rf"{value:.4f}", tip.inner_text()), (tip.inner_text(), value)
    page.wait_for_timeout(1000)
    assert sent[0] == before, f"picking heads sent {sent[0] - before} frames"
    print(f"head pick, click -> redrawn (JS): max {max(timings):.1f} ms over {len(timings)} picks")
    # the 50 ms target is bench/browser_latency.py's, on a quiet machine; beside other tests this
    # only checks that each pick redraws promptly
    assert max(timings) < 1000, timings
    assert_no_error(page)


def _grid_tip(page: Page, layer: int, head: int, q: int, k: int) -> str:
    """Hover the grid's cell (query q, key k) of a head; return the tooltip's text."""
    canvas = page.locator(f"{HEADS} .mh-grid-canvas")
    canvas.scroll_into_view_if_needed()
    x, y = canvas.evaluate("""(c, [l, h, q, k]) => {
        // the component's layout (mha_heads.ts drawGrid): read back from the canvas's size
        const g = c.closest('.mh').tjGrid;
        const n = g.n, box = c.getBoundingClientRect();
        return [box.left + g.left + h * (g.panel + g.gap) + (k + 0.5) * g.panel / n,
                box.top + g.top + l * (g.panel + g.labelH + g.gap) + g.labelH + (q + 0.5) * g.panel / n];
    }""", [layer, head, q, k])
    page.mouse.move(x, y)
    tip = page.locator(f"{HEADS} .mh-grid-tip")
    expect(tip).to_be_visible()
    assert (tip.get_attribute("data-q"), tip.get_attribute("data-k")) == (str(q), str(k))
    return tip.inner_text()


def test_the_switches_answer_in_the_browser_with_the_trace_values(page: Page, app_url: str) -> None:
    """The scores switch and the grid switch (mouse, keyboard, touch-sized): no frame; the enlarged
    head's numbers, the grid's cells and its colour bound are the trace's (random cells)."""
    sent = _count_frames(page)
    _open(page, f"{app_url}/multi_head_attention?mha_layer=2&mha_head=3")
    root = page.locator(HEADS)
    expect(root).to_have_attribute("data-layer", "2")
    page.wait_for_timeout(1000)
    before = sent[0]
    trace = _trace(PROMPT)
    cfg = core.load_builtin("classic").config
    expect(root).to_have_attribute("data-grid", "1")
    page.locator(f"{HEADS} .mh-switch[data-knob='scores'] label").click()  # mouse, on its label
    expect(root).to_have_attribute("data-scores", "1")
    expect(root).to_have_attribute("data-head", "3")
    scores = trace[names.act_name("attn_scores", layer=2)][3]
    rows = _numbers(page)
    for q in range(len(rows)):
        for k in range(q + 1):
            assert rows[q][k] == f"{scores[q, k]:.4f}", (q, k)
        assert all(cell == "-inf" for cell in rows[q][q + 1:])
    # the grid: one colour scale over ± the largest visible |score| of every head (as the server's)
    all_scores = np.stack([trace[names.act_name("attn_scores", layer=layer)] for layer in range(cfg.n_layer)])
    n = all_scores.shape[-1]
    visible = all_scores[:, :, np.tril(np.ones((n, n), dtype=bool))]
    bound = float(page.locator(f"{HEADS} .mh-grid-canvas").get_attribute("data-bound") or 0)
    assert bound == pytest.approx(float(np.abs(visible[np.isfinite(visible)]).max()), rel=1e-6)
    rng = random.Random(43)
    for _ in range(6):
        layer, head = rng.randrange(cfg.n_layer), rng.randrange(cfg.n_head)
        q = rng.randrange(n)
        k = rng.randrange(q + 1)
        assert f"{all_scores[layer, head, q, k]:.4f}" in _grid_tip(page, layer, head, q, k), (layer, head, q, k)
    # keyboard: Space on the focused switch turns the scores off again; the grid shows weights
    page.locator(f"{HEADS} #mh-scores").focus()
    page.keyboard.press("Space")
    expect(root).to_have_attribute("data-scores", "0")
    patterns = np.stack([trace[names.act_name("pattern", layer=layer)] for layer in range(cfg.n_layer)])
    assert f"{patterns[1, 2, 3, 1]:.4f}" in _grid_tip(page, 1, 2, 3, 1)
    # a click on a grid panel picks that head
    _grid_tip(page, 0, 1, 2, 0)
    page.mouse.down()
    page.mouse.up()
    expect(root).to_have_attribute("data-layer", "0")
    expect(root).to_have_attribute("data-head", "1")
    # the grid switch hides and shows the grid
    grid_switch = page.locator(f"{HEADS} #mh-grid")
    grid_switch.focus()
    page.keyboard.press("Space")
    expect(root).to_have_attribute("data-grid", "0")
    expect(page.locator(f"{HEADS} .mh-grid-canvas")).to_be_hidden()
    assert parse_qs(urlparse(page.url).query).get("mha_grid") == ["0"]
    page.locator(f"{HEADS} .mh-switch[data-knob='grid'] label").click()
    expect(root).to_have_attribute("data-grid", "1")
    expect(page.get_by_label(load_strings("en")["multi_head_attention.show_scores"])).to_have_count(1)
    page.wait_for_timeout(1000)
    assert sent[0] == before, f"the switches sent {sent[0] - before} frames"
    assert_no_error(page)


def test_the_switches_survive_a_page_change_and_come_back_from_a_link(browser: Browser, app_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    _open(page, f"{app_url}/multi_head_attention")
    page.locator(f"{HEADS} .mh-switch[data-knob='scores'] label").click()
    page.locator(f"{HEADS} .mh-switch[data-knob='grid'] label").click()
    query = parse_qs(urlparse(page.url).query)
    assert query.get("mha_scores") == ["1"] and query.get("mha_grid") == ["0"], page.url
    link = page.url
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("link", name=load_strings("en")["nav.embeddings"]).first.click()
    wait_for_app(page)
    sidebar.get_by_role("link", name=load_strings("en")["nav.multi_head_attention"]).first.click()
    wait_for_app(page)
    expect(page.locator(HEADS)).to_have_attribute("data-scores", "1", timeout=60_000)
    expect(page.locator(HEADS)).to_have_attribute("data-grid", "0")
    fresh = browser.new_context().new_page()
    _open(fresh, link)
    expect(fresh.locator(HEADS)).to_have_attribute("data-scores", "1")
    expect(fresh.locator(HEADS)).to_have_attribute("data-grid", "0")
    fresh.context.close()
    other = browser.new_context().new_page()
    _open(other, f"{app_url}/multi_head_attention?mha_scores=yes&mha_grid=7")
    expect(other.locator(HEADS)).to_have_attribute("data-scores", "0")  # tampered: the defaults
    expect(other.locator(HEADS)).to_have_attribute("data-grid", "1")
    other.context.close()
    context.close()


def test_the_pick_survives_a_page_change_and_comes_back_from_a_link(browser: Browser, app_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    _open(page, f"{app_url}/multi_head_attention")
    page.locator(f"{HEADS} [role='radio'][data-layer='3'][data-head='2']").click()
    query = parse_qs(urlparse(page.url).query)
    assert query.get("mha_layer") == ["3"] and query.get("mha_head") == ["2"], page.url
    link = page.url
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("link", name=load_strings("en")["nav.embeddings"]).first.click()
    wait_for_app(page)
    sidebar.get_by_role("link", name=load_strings("en")["nav.multi_head_attention"]).first.click()
    wait_for_app(page)
    expect(page.locator(HEADS)).to_have_attribute("data-layer", "3", timeout=60_000)
    expect(page.locator(HEADS)).to_have_attribute("data-head", "2")
    fresh = browser.new_context().new_page()
    _open(fresh, link)
    expect(fresh.locator(HEADS)).to_have_attribute("data-layer", "3")
    expect(fresh.locator(HEADS)).to_have_attribute("data-head", "2")
    fresh.context.close()
    for bad in ("mha_layer=-1&mha_head=x", "mha_layer=200&mha_head=9.5"):
        other = browser.new_context().new_page()
        _open(other, f"{app_url}/multi_head_attention?{bad}")
        expect(other.locator(HEADS)).to_have_attribute("data-layer", "0")
        expect(other.locator(HEADS)).to_have_attribute("data-head", "0")
        other.context.close()
    context.close()


def test_phone_and_chinese_dark(browser: Browser, app_url: str, screenshot_dir) -> None:  # noqa: ANN001
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark", locale="zh-CN",
                                  has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(f"{app_url}/multi_head_attention?lang=zh")
    page.wait_for_selector('[data-testid="stSidebar"]', state="attached", timeout=60_000)
    expect(page.locator(HEADS)).to_be_visible(timeout=60_000)
    page.locator(f"{HEADS} [role='radio'][data-layer='1'][data-head='2']").tap()
    expect(page.locator(HEADS)).to_have_attribute("data-head", "2")
    text = page.locator(HEADS).inner_text()
    assert not re.search(r"\b(Layer|head|weights|query|key)\b", text), text  # no English in 中文 mode
    width = page.locator(HEADS).evaluate("e => e.getBoundingClientRect().width")
    assert width <= 390
    page.locator(HEADS).screenshot(path=str(screenshot_dir / "multi_head_attention.heads.phone.zh.dark.png"))
    context.close()
