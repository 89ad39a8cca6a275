"""The tokenization page in real Chromium: stepping BPE (in the browser: the replay equals
core's, and moving the step sends nothing to the server), uploads, the model's tokenizer,
dark theme, a step that survives a page change and comes back from a link."""

from __future__ import annotations

import random
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect

from core.text.bpe_view import most_frequent_words
from core.text.corpus import cjk_lexicon
from core.text.tokenizer import train_bpe
from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings
from ui.tokens import display_token

pytestmark = pytest.mark.e2e

SEEDS = "low low low low low lower lower newest newest newest widest widest widest"
TALL = {"width": 1440, "height": 2400}  # Streamlit scrolls inside a container: shoot tall


def _open(page: Page, app_url: str, lang: str = "en") -> None:
    page.goto(f"{app_url}/tokenization")
    wait_for_app(page)
    if lang == "zh":
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name="简体中文").click()
        wait_for_app(page)
    assert_no_error(page)


def _main(page: Page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


STEPS = ".bpe[data-testid='bpe-steps']"  # Playwright's CSS engine reaches into the component's shadow root


def _forward(page: Page, times: int) -> None:
    for _ in range(times):
        page.locator(f"{STEPS} button[data-act='forward']").click()


def _count_frames(page: Page) -> list[int]:
    """Messages the browser sends to the server (each rerun request is one)."""
    sent = [0]
    page.on("websocket", lambda ws: ws.on("framesent", lambda _frame: sent.__setitem__(0, sent[0] + 1)))
    return sent


def _set_step(page: Page, step: int) -> dict:
    """Move the slider as a drag does (an input event); returns the redraw's time and what it shows."""
    return page.locator(f"{STEPS} .bpe-slider").evaluate(
        """(input, step) => {
            const t0 = performance.now();
            input.value = String(step);
            input.dispatchEvent(new Event('input', { bubbles: true }));
            const ms = performance.now() - t0;
            const root = input.getRootNode().querySelector('.bpe');
            const words = [...root.querySelectorAll('.bpe-word')].map(w => [
                w.querySelector('.bpe-word-label').textContent,
                [...w.querySelectorAll('.bpe-chip')].map(c => c.textContent)]);
            return { ms, step: Number(root.dataset.step), words,
                     caption: root.querySelector('.bpe-curve-caption').textContent,
                     head: root.querySelector('.bpe-head').textContent };
        }""", step)


def _type_corpus(page: Page, text: str) -> None:
    box = page.locator(".st-key-tok_corpus textarea")
    box.fill(text)
    box.press("Control+Enter")
    wait_for_app(page)


def _charts_ready(page: Page) -> None:
    expect(page.locator('[data-testid="stVegaLiteChart"]').filter(visible=True).first).to_be_visible(timeout=30_000)
    page.wait_for_timeout(800)  # let Vega finish drawing before a screenshot


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_stepping_to_merge_four_shows_the_seeds_merges(browser: Browser, app_url: str, screenshot_dir: Path,
                                                       lang: str) -> None:
    context = browser.new_context(viewport=TALL)
    page = context.new_page()
    _open(page, app_url, lang)
    expect(page.locator('[data-testid="stTextArea"] textarea').nth(1)).to_have_value(SEEDS)
    _forward(page, 4)
    assert_no_error(page)
    text = page.locator(STEPS).inner_text()
    for merge in (r"l\s*\+\s*o\s*→\s*lo\s*\(7\)", r"lo\s*\+\s*w\s*→\s*low\s*\(7\)",
                  r"e\s*\+\s*s\s*→\s*es\s*\(6\)", r"es\s*\+\s*t\s*→\s*est\s*\(6\)"):
        assert re.search(merge, text), merge
    summary = "11 base symbols + 4 merged tokens = 15" if lang == "en" else "11 个基础符号 + 4 个合并 token = 15"
    assert summary in text
    encoded = page.locator(".bpe[data-testid='bpe-encode'] .bpe-word[data-word='lowest'] .bpe-chip")
    expect(encoded).to_have_text(["low", "est", "</w>"])
    page.wait_for_timeout(400)
    page.screenshot(path=str(screenshot_dir / f"tokenization.bpe.{lang}.png"))
    context.close()


def test_play_runs_to_the_last_merge_and_stops(page: Page, app_url: str) -> None:
    _open(page, app_url)
    merges = page.get_by_role("spinbutton", name="Number of merges to learn")
    merges.fill("3")
    merges.press("Enter")
    wait_for_app(page)
    sent = _count_frames(page)
    page.wait_for_timeout(1000)
    before = sent[0]
    page.locator(f"{STEPS} button[data-act='play']").click()
    expect(page.locator(STEPS)).to_have_attribute("data-step", "3", timeout=10_000)
    expect(page.locator(f"{STEPS} button[data-act='play']")).to_have_text(re.compile("Play"))
    expect(page.locator(f"{STEPS} .bpe-head")).to_contain_text("Merge 3 of 3")
    assert sent[0] == before, "Play sent messages to the server"
    assert_no_error(page)


def _upload(page: Page, path: Path) -> None:
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(path))
    wait_for_app(page)


def test_upload_a_200_kb_corpus_and_bad_files(page: Page, app_url: str, tmp_path: Path) -> None:
    rng = random.Random(0)
    syllables = ["ka", "lo", "mi", "ne", "ta", "ri", "so", "ve", "st", "er", "in", "ing"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(3000)]
    corpus = " ".join(rng.choices(words, [1 / (i + 1) for i in range(len(words))], k=40_000))
    big = tmp_path / "corpus.txt"
    big.write_bytes(corpus.encode()[:200 * 1024])
    _open(page, app_url)
    merges = page.get_by_role("spinbutton", name="Number of merges to learn")
    merges.fill("500")
    merges.press("Enter")
    wait_for_app(page)
    _upload(page, big)
    expect(page.get_by_text(re.compile(r"Learned 500 merges"))).to_be_visible(timeout=60_000)
    assert "corpus.txt" in _main(page)
    _forward(page, 2)
    assert_no_error(page)

    binary = tmp_path / "image.txt"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 10)
    page.locator('[data-testid="stFileChipDeleteBtn"] button').first.click()
    wait_for_app(page)
    _upload(page, binary)
    expect(page.locator('[data-testid="stAlertContentWarning"]').first).to_be_visible()
    assert "binary" in _main(page)
    assert_no_error(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_model_tokenizer_quirks(browser: Browser, app_url: str, screenshot_dir: Path, lang: str) -> None:
    context = browser.new_context(viewport=TALL)
    page = context.new_page()
    _open(page, app_url, lang)
    page.get_by_role("tab").nth(1).click()
    wait_for_app(page)
    strawberry = "How many r in strawberry?" if lang == "en" else "strawberry 里有几个 r？"
    page.get_by_role("button", name=strawberry).click()
    wait_for_app(page)
    assert_no_error(page)
    text = _main(page)
    assert "strawberry" in text
    assert re.search(r"\[\d+(, \d+)*\]", text), "the token ids are listed"
    languages = "Same sentence, two languages" if lang == "en" else "同一句话，两种语言"
    page.get_by_role("button", name=languages).click()
    wait_for_app(page)
    _charts_ready(page)
    # Hover the first chip: the tooltip shows the token's id, bytes and merge path.
    chart = page.locator('[data-testid="stVegaLiteChart"]').filter(visible=True).first
    box = chart.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.25, box["y"] + box["height"] * 0.35)
    page.wait_for_timeout(600)
    page.screenshot(path=str(screenshot_dir / f"tokenization.model.{lang}.png"))
    assert_no_error(page)
    context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_dark_theme_is_readable(browser: Browser, app_url: str, screenshot_dir: Path, lang: str) -> None:
    context = browser.new_context(color_scheme="dark", viewport=TALL)
    page = context.new_page()
    _open(page, app_url, lang)
    background = page.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
    assert background != "rgb(255, 255, 255)", background
    page.locator('[data-testid="stSelectbox"]').filter(has_text=re.compile("Example corpus|示例语料")).click()
    page.get_by_role("option", name=re.compile("^中文")).click()
    wait_for_app(page)
    page.get_by_text(re.compile(r"^gpt")).first.click()
    wait_for_app(page)
    _forward(page, 3)
    assert_no_error(page)
    colour = page.locator(f"{STEPS} .bpe-head").evaluate("e => getComputedStyle(e).color")
    assert colour != "rgb(49, 51, 63)", "the component follows the dark theme's text colour"
    page.screenshot(path=str(screenshot_dir / f"tokenization.bpe.dark.{lang}.png"))
    page.get_by_role("tab").nth(1).click()
    wait_for_app(page)
    _charts_ready(page)
    page.screenshot(path=str(screenshot_dir / f"tokenization.model.dark.{lang}.png"))
    context.close()


def _expected_words(result, step: int) -> list[list]:
    shown = most_frequent_words(result.segmentation_at(step), 24)
    return [[f"{display_token(w)}  ×{f}", [display_token(p) for p in pieces]] for w, f, pieces in shown]


def test_the_browser_replays_core_at_every_step_and_sends_nothing(page: Page, app_url: str) -> None:
    """Random corpora (classic and GPT mode): at every step the words drawn, the headline and
    the "from N tokens to M" line equal core.text.tokenizer's; no frame goes to the server."""
    rng = random.Random(43)
    syllables = ["lo", "w", "er", "est", "ne", "wi", "d", "a", "an", "th", "e", " ", "首", "都", "的"]
    sent = _count_frames(page)
    _open(page, app_url)
    timings: list[float] = []
    for case, mode in enumerate(("classic", "gpt", "classic")):
        words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))).strip() or "a" for _ in range(40)]
        corpus = " ".join(rng.choices(words, k=rng.randint(30, 120)))
        if mode == "gpt" and case == 1:
            page.get_by_text(re.compile(r"^gpt")).first.click()
            wait_for_app(page)
        if case == 2:
            page.get_by_text(re.compile(r"^classic")).first.click()
            wait_for_app(page)
        merges = page.get_by_role("spinbutton", name="Number of merges to learn")
        merges.fill("40")
        merges.press("Enter")
        wait_for_app(page)
        _type_corpus(page, corpus)
        assert_no_error(page)
        result = train_bpe(corpus, 40, mode, cjk_lexicon=cjk_lexicon())
        curve = result.token_count_curve().tokens
        last = len(result.merges)
        page.wait_for_timeout(1000)
        before = sent[0]
        for step in [*rng.sample(range(last + 1), min(12, last + 1)), 0, last]:
            shown = _set_step(page, step)
            timings.append(shown["ms"])
            assert shown["step"] == step
            assert shown["words"] == _expected_words(result, step), (mode, step)
            if step:
                assert f"from {curve[0]} tokens to {curve[step]} " in shown["caption"], (step, shown["caption"])
            else:  # before any merge: no "from 74 tokens to 74"
                assert f"Before any merge the text is {curve[0]} tokens" in shown["caption"], shown["caption"]
            if step:
                m = result.merges[step - 1]
                assert f"Merge {step} of {last}" in shown["head"] and f"({m.count} times)" in shown["head"]
        page.wait_for_timeout(1000)
        assert sent[0] == before, f"moving the step sent {sent[0] - before} frames ({mode})"
    timings.sort()
    p50, p95 = timings[len(timings) // 2], timings[int(0.95 * (len(timings) - 1))]
    print(f"BPE merge step, input event -> redrawn (JS): p50 {p50:.1f} ms, p95 {p95:.1f} ms, n={len(timings)}")
    assert p95 < 50, timings


def test_keyboard_moves_the_step_and_html_stays_text(page: Page, app_url: str) -> None:
    sent = _count_frames(page)
    _open(page, app_url)
    _type_corpus(page, "<b>bold</b> <b>bold</b> <script>x</script> low low")
    page.wait_for_timeout(1000)
    before = sent[0]
    slider = page.locator(f"{STEPS} .bpe-slider")
    slider.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    expect(page.locator(STEPS)).to_have_attribute("data-step", "3")
    page.keyboard.press("ArrowLeft")
    expect(page.locator(STEPS)).to_have_attribute("data-step", "2")
    assert page.locator(f"{STEPS} b, {STEPS} script").count() == 0  # user text never becomes markup
    assert "<b>bold</b>" in page.locator(STEPS).inner_text()
    page.wait_for_timeout(800)
    assert sent[0] == before


def test_the_step_survives_a_page_change_and_comes_back_from_a_link(browser: Browser, app_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    _open(page, app_url)
    _set_step(page, 6)
    query = parse_qs(urlparse(page.url).query)
    assert query.get("tok_merge_step") == ["6"], page.url  # the address bar (and so the link) carries it
    link = page.url
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("link", name=load_strings("en")["nav.embeddings"]).first.click()
    wait_for_app(page)
    sidebar.get_by_role("link", name=load_strings("en")["nav.tokenization"]).first.click()
    wait_for_app(page)
    expect(page.locator(STEPS)).to_have_attribute("data-step", "6")
    expect(page.locator(f"{STEPS} .bpe-head")).to_contain_text("Merge 6 of 10")
    # A copied link, opened in a new tab (a new session): the server reads the step from it.
    fresh = context.new_page()
    fresh.goto(link)
    wait_for_app(fresh)
    expect(fresh.locator(STEPS)).to_have_attribute("data-step", "6")
    # Bad values fall back cleanly: out of range is clamped to the training, nonsense is 0.
    for bad, shown in (("99999", "0"), ("abc", "0"), ("-3", "0")):
        other = browser.new_context().new_page()
        other.goto(f"{app_url}/tokenization?tok_merge_step={bad}")
        wait_for_app(other)
        expect(other.locator(STEPS)).to_have_attribute("data-step", shown)
        assert_no_error(other)
        other.context.close()
    context.close()
