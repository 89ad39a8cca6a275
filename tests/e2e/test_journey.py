"""In real Chromium: the Overview's journey picture (ui/components/journey).

It shows the live prompt's tokens and the Logits page's top token; hovering a bar shows its
value; the temperature knob redraws the bars in the browser (no message to the server);
clicking the attention stage opens Multi-head attention in the same session; ▶ reaches the
output. Screenshots: desktop, phone, dark, Chinese.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

import core
from core.engine.sampling import sampling_steps
from tests.e2e.helpers import wait_for_app
from ui.charts.output import token_labels
from ui.i18n import load_strings
from ui.tokens import display_token

JOURNEY = ".tj[data-ready='1']"  # Playwright's CSS engine reaches into the component's shadow root


def assert_no_error(page: Page) -> None:
    """No exception; none of this picture's labels missing (other pages' keys are their tests' business)."""
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    body = page.inner_text("body")
    assert "Traceback" not in body and "⟦journey." not in body


def _wait(page: Page) -> None:
    """Like helpers.wait_for_app, but a phone's sidebar is collapsed (attached, not visible)."""
    page.wait_for_selector('[data-testid="stSidebar"]', state="attached", timeout=60_000)
    page.wait_for_selector('[data-testid="stMain"]', timeout=60_000)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    page.wait_for_timeout(300)


def _open(page: Page, url: str) -> None:
    page.goto(url)
    _wait(page)
    expect(page.locator(JOURNEY)).to_be_visible(timeout=60_000)
    assert_no_error(page)


def _expected(model: str, prompt: str) -> tuple[list[str], str, np.ndarray, list[int]]:
    loaded = core.load_builtin(model)
    ids = loaded.tokenizer.encode(prompt)
    logits = loaded.model.logits(ids)[-1].astype(np.float64)
    top = int(np.argmax(logits))
    tokens = [display_token(loaded.tokenizer.decode([i])) for i in ids]
    return tokens, token_labels(loaded.tokenizer, [top])[0], logits, ids


def _count_frames(page: Page) -> list[int]:
    """Messages the browser sends to the server (each rerun request is one)."""
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _bar_probs(page: Page) -> list[float]:
    return [float(v) for v in page.locator(".tj-bar").evaluate_all("els => els.map(e => e.dataset.p)")]


def test_tokens_and_top_token_match_the_logits_page(page: Page, app_url: str, screenshot_dir: Path) -> None:
    prompt = "The capital of France is"
    _open(page, f"{app_url}/?prompt={quote(prompt)}")
    tokens, top_label, _, ids = _expected("classic", prompt)
    assert page.locator(".tj-chip-text").all_inner_texts() == tokens
    assert page.locator(".tj-chip-id").all_inner_texts() == [str(i) for i in ids]
    assert page.locator(".tj-bar-label").first.inner_text() == top_label
    page.locator(".st-key-journey").screenshot(path=str(screenshot_dir / "journey.desktop.en.png"))
    # The probabilities stage opens the Logits page; its logit-lens caption names the top token.
    page.locator(".tj-stage[data-stage='probs'] .tj-stage-title").click()
    page.wait_for_url(re.compile(r"/logits_sampling"), timeout=60_000)
    wait_for_app(page)
    template = load_strings("en")["logits_sampling.lens.caption"]  # "{token} is the top token from …"
    words = template.split("{token}", 1)[1].split("{stage}")[0].strip().rstrip("“\"")
    caption = page.get_by_text(words, exact=False).first
    expect(caption).to_be_visible(timeout=60_000)
    # Its text, not its rendered text: off screen, the page's content-visibility rule leaves it
    # unrendered, and innerText is then empty until the browser draws it.
    text = caption.text_content() or ""
    assert text.startswith(top_label + " "), (text, top_label)


def test_hover_a_bar_shows_its_value(page: Page, app_url: str) -> None:
    _open(page, app_url)
    row = page.locator(".tj-bar-row").first
    row.hover()
    tip = page.locator(".tj-tip")
    expect(tip).to_be_visible()
    shown = float(row.locator(".tj-bar-value").inner_text())
    match = re.search(r"p = ([0-9.e-]+)", tip.inner_text())
    assert match, tip.inner_text()
    assert abs(float(match.group(1)) - shown) <= 6e-4
    # an attention weight, too (the query's weight on itself: a dot whose centre is on it)
    page.mouse.move(0, 0)
    expect(tip).to_be_hidden()
    page.locator(".tj-stage[data-stage='layer-0'] .tj-arc.self").first.hover(force=True)
    expect(tip).to_be_visible()
    assert "looks at" in tip.inner_text(), tip.inner_text()
    weight = float(re.search(r"weight ([0-9.e-]+)", tip.inner_text()).group(1))
    assert 0 < weight <= 1


def test_temperature_redraws_the_bars_in_the_browser(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    prompt = "The capital of France is"
    _open(page, f"{app_url}/?prompt={quote(prompt)}")
    page.wait_for_timeout(1500)
    before_frames = sent[0]
    before = _bar_probs(page)
    result = page.locator(".tj-knob[data-knob='temperature'] input").evaluate(
        """input => {
            const t0 = performance.now();
            input.value = '0.3';
            input.dispatchEvent(new Event('input', { bubbles: true }));
            const ms = performance.now() - t0;
            return { ms, widths: [...input.getRootNode().querySelectorAll('.tj-bar')].map(b => b.style.width) };
        }""")
    after = _bar_probs(page)
    assert result["ms"] < 100, result
    assert after != before and result["widths"][1] != "", result
    # The same numbers as core.engine.sampling at T = 0.3 (top-k off, top-p off).
    _, _, logits, _ = _expected("classic", prompt)
    final = sampling_steps(logits, 0.3, None, 1.0).final_probs
    top = np.lexsort((np.arange(logits.size), -logits))[:10]
    np.testing.assert_allclose(after, final[top], rtol=1e-3, atol=1e-6)
    assert after[0] > before[0]  # colder: the favourite gains
    page.wait_for_timeout(1500)
    assert sent[0] == before_frames, "moving the knob sent a message to the server (a rerun)"
    expect(page.locator(".tj-knob[data-knob='temperature'] output")).to_have_text("0.30")


def test_attention_stage_opens_multi_head_in_the_same_session(page: Page, app_url: str) -> None:
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    prompt = "The capital of Japan is"
    _open(page, f"{app_url}/?prompt={quote(prompt)}&model=modern")
    tokens, _, _, _ = _expected("modern", prompt)
    assert page.locator(".tj-chip-text").all_inner_texts() == tokens
    expect(page.locator(".tj-stage[data-stage='pos'] .tj-rope")).to_be_visible()  # RoPE adds nothing
    page.locator(".tj-stage[data-stage='layer-1'] .tj-stage-title").click()
    page.wait_for_url(re.compile(r"/multi_head_attention"), timeout=60_000)
    wait_for_app(page)
    assert_no_error(page)
    expect(page.get_by_role("heading", name=load_strings("en")["multi_head_attention.title"])).to_be_visible()
    assert page.locator('[data-testid="stSidebar"] textarea').first.input_value() == prompt
    boxes = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').evaluate_all(
        "els => els.map(e => e.innerText + ' ' + [...e.querySelectorAll('input')].map(i => i.value).join(' '))")
    assert any("modern" in box for box in boxes), boxes
    assert len(sockets) == 1, f"a new session was started: {sockets}"


def test_keyboard_enter_on_a_stage_opens_its_page(page: Page, app_url: str) -> None:
    _open(page, app_url)
    page.locator(".tj-stage[data-stage='tokens'] .tj-open").focus()  # the stage's title is its button
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/tokenization"), timeout=60_000)


def test_animate_walks_to_the_output_and_generate_appends(page: Page, app_url: str) -> None:
    prompt = "The capital of France is"
    _open(page, f"{app_url}/?prompt={quote(prompt)}")
    page.locator(".tj-animate").click()
    expect(page.locator(".tj[data-anim='running']")).to_be_visible(timeout=5_000)
    expect(page.locator(".tj[data-anim='done']")).to_be_visible(timeout=30_000)
    expect(page.locator(".tj-stage[data-stage='output'].active")).to_be_visible()
    stages = page.locator(".tj-stage").count()
    expect(page.locator(".tj-stage.passed")).to_have_count(stages - 1)  # it went through every stage
    # step: back to the first stage
    page.locator(".tj-step").click()
    expect(page.locator(".tj-stage[data-stage='tokens'].active")).to_be_visible()
    token = page.locator(".tj-out-chip").inner_text()
    n = page.locator(".tj-chip").count()
    page.locator(".tj-generate").click()
    expect(page.locator(".tj-chip")).to_have_count(n + 1, timeout=60_000)
    wait_for_app(page)
    assert page.locator(".tj-chip-text").last.inner_text() == token
    expect(page.locator(".tj[data-anim]")).to_be_visible(timeout=10_000)  # it replays


@pytest.mark.parametrize("name,viewport,scheme,lang", [
    ("phone.en", {"width": 390, "height": 844}, "light", "en"),
    ("desktop.dark.en", {"width": 1440, "height": 2400}, "dark", "en"),
    ("desktop.zh", {"width": 1440, "height": 2400}, "light", "zh"),
    ("presenter.1366.en", {"width": 1366, "height": 2400}, "light", "en"),
    ("phone.dark.zh", {"width": 390, "height": 844}, "dark", "zh"),
])
def test_screenshots(browser: Browser, app_url: str, screenshot_dir: Path, name: str, viewport: dict,
                     scheme: str, lang: str) -> None:
    context = browser.new_context(viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    try:
        prompt = "小明把苹果放进书包，因为它太甜了。它指的是" if lang == "zh" else "The capital of France is"
        presenter = "&presenter=1" if name.startswith("presenter") else ""
        _open(page, f"{app_url}/?lang={lang}&prompt={quote(prompt)}{presenter}")
        root = page.locator(".tj")
        if viewport["width"] < 600:
            expect(root).to_have_class(re.compile(r"\bnarrow\b"))
            boxes = [page.locator(f".tj-stage[data-stage='{s}']").bounding_box() for s in ("tokens", "embed", "output")]
            assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"], "stages are not stacked on a phone"
            assert all(b["x"] + b["width"] <= viewport["width"] + 1 for b in boxes)
        if scheme == "dark":
            expect(root).to_have_class(re.compile(r"\bdark\b"))
        if presenter:
            expect(root).to_have_class(re.compile(r"\bpresenter\b"))
            size = page.locator(".tj-stage-title").first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert size >= 18, size
        if lang == "zh":
            expect(page.locator(".tj-animate")).to_contain_text(load_strings("zh")["journey.animate"])
        if viewport["width"] < 600:
            # Streamlit scrolls an inner box: shoot the screen at the top and at the output stage.
            page.locator(".tj-toolbar").scroll_into_view_if_needed()
            page.screenshot(path=str(screenshot_dir / f"journey.{name}.top.png"))
            page.locator(".tj-stage[data-stage='layer-0']").scroll_into_view_if_needed()
            page.screenshot(path=str(screenshot_dir / f"journey.{name}.blocks.png"))
            page.locator(".tj-stage[data-stage='output']").scroll_into_view_if_needed()
            page.screenshot(path=str(screenshot_dir / f"journey.{name}.output.png"))
        else:
            page.locator(".st-key-journey").screenshot(path=str(screenshot_dir / f"journey.{name}.png"))
    finally:
        context.close()
