"""The "check yourself" card in real Chromium, in 中文, with the keyboard only: move to the
question's radio group, pick with the arrow keys, Tab to "揭晓答案", press Enter; the result is
announced (role=status) and the pick is locked."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from serving.classroom.bank import bank
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
    expect(group.get_by_role("radio").nth(question.correct)).to_be_disabled()
    assert_no_error(page)
