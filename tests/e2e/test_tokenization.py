"""The tokenization page in real Chromium: stepping BPE, uploads, the model's tokenizer, dark theme."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app

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


def _forward(page: Page, times: int) -> None:
    for _ in range(times):
        page.get_by_role("button", name="▶", exact=True).click()
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
    text = _main(page)
    for merge in (r"l\s*\+\s*o\s*→\s*lo\s*\(7\)", r"lo\s*\+\s*w\s*→\s*low\s*\(7\)",
                  r"e\s*\+\s*s\s*→\s*es\s*\(6\)", r"es\s*\+\s*t\s*→\s*est\s*\(6\)"):
        assert re.search(merge, text), merge
    summary = "11 base symbols + 4 merged tokens = 15" if lang == "en" else "11 个基础符号 + 4 个合并 token = 15"
    assert summary in text
    assert re.search(r"lowest\s*→\s*low\s*\+\s*est\s*\+\s*</w>", text)
    _charts_ready(page)
    page.screenshot(path=str(screenshot_dir / f"tokenization.bpe.{lang}.png"))
    context.close()


def test_play_runs_to_the_last_merge_and_stops(page: Page, app_url: str) -> None:
    _open(page, app_url)
    merges = page.get_by_role("spinbutton", name="Number of merges to learn")
    merges.fill("3")
    merges.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name=re.compile("Play")).click()
    expect(page.get_by_text(re.compile(r"Merge 3 of 3"))).to_be_visible(timeout=30_000)
    wait_for_app(page)
    expect(page.get_by_role("button", name=re.compile("Play"))).to_be_visible()
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
    _charts_ready(page)
    assert_no_error(page)
    page.screenshot(path=str(screenshot_dir / f"tokenization.bpe.dark.{lang}.png"))
    page.get_by_role("tab").nth(1).click()
    wait_for_app(page)
    _charts_ready(page)
    page.screenshot(path=str(screenshot_dir / f"tokenization.model.dark.{lang}.png"))
    context.close()
