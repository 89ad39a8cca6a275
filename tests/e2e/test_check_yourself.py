"""The "check yourself" card in real Chromium, in 中文, with the keyboard only: move to the
question's radio group, pick with the arrow keys, Tab to "揭晓答案", press Enter; the result is
announced (role=status) and the options say in words which one is right."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from serving.classroom.bank import bank
from tests.e2e.axe_scan import BLOCKING_IMPACTS, scan
from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings

PAGE = "whole_model"


def test_keyboard_pick_and_reveal_in_chinese(page: Page, app_url: str) -> None:
    strings = load_strings("zh")
    question = bank("zh").for_station(PAGE)[0]
    page.goto(f"{app_url}/{PAGE}?lang=zh")
    wait_for_app(page)
    assert_no_error(page)
    card = page.locator(f".st-key-cy_{PAGE}_card")
    expect(card).to_be_visible(timeout=30_000)
    group = card.get_by_role("radiogroup", name=question.text)
    expect(group).to_be_visible()
    reveal = card.get_by_role("button", name=strings["check_yourself.reveal"])
    expect(reveal).to_be_disabled()  # predict first

    # Keyboard only: focus lands on the group's first option; Space picks it, ↓ moves the pick.
    group.get_by_role("radio").first.focus()
    page.keyboard.press("Space")
    for _ in range(question.correct):
        page.keyboard.press("ArrowDown")
    expect(group.get_by_role("radio").nth(question.correct)).to_be_checked(timeout=10_000)
    expect(reveal).to_be_enabled(timeout=10_000)
    page.keyboard.press("Tab")
    expect(reveal).to_be_focused()
    page.keyboard.press("Enter")

    status = card.get_by_role("status")
    expect(status).to_contain_text(strings["check_yourself.correct"], timeout=10_000)
    expect(status).to_contain_text(question.explanation)
    expect(group).to_have_count(0)  # revealed: the options are now a list saying which is right
    expect(card.get_by_role("listitem").nth(question.correct)).to_contain_text(strings["check_yourself.mark.correct"])
    assert_no_error(page)


def test_a_revealed_card_passes_axe_on_a_dark_phone(browser: Browser, app_url: str, screenshot_dir: Path) -> None:
    """The "not quite" result (a warning alert) on a 390 px dark screen, scanned by axe."""
    context = browser.new_context(color_scheme="dark", viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    question = bank("zh").for_station(PAGE)[0]
    page.goto(f"{app_url}/{PAGE}?lang=zh")
    card = page.locator(f".st-key-cy_{PAGE}_card")  # a phone's sidebar is folded: wait for the card itself
    expect(card).to_be_attached(timeout=60_000)
    card.scroll_into_view_if_needed(timeout=30_000)
    wrong = (question.correct + 1) % len(question.options)
    card.get_by_role("radio").nth(wrong).check(force=True)  # BaseWeb draws its own circle over the input
    reveal = card.get_by_role("button", name=load_strings("zh")["check_yourself.reveal"])
    expect(reveal).to_be_enabled(timeout=10_000)
    reveal.click()
    expect(card.get_by_role("alert")).to_contain_text(question.options[question.correct], timeout=10_000)
    blocking = [f for f in scan(page, "revealed card", f".st-key-cy_{PAGE}_card") if f.impact in BLOCKING_IMPACTS]
    assert not blocking, [(f.rule, f.nodes[0]["target"]) for f in blocking]
    card.screenshot(path=str(screenshot_dir / "check_yourself.zh-dark-phone.png"))
    context.close()
