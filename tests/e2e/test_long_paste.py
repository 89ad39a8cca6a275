"""In real Chromium: a paste longer than any limit gets the right message ([W3-F] #47 item 3).

Before: more than 20,000 characters pasted into the sidebar prompt (or Tokenization's "Text to
tokenize") reset it to the default with the "not allowed here (from a link or a changed page)"
note. Now the text is kept (cut at the 20,000 characters the session stores) and the page says,
in its language, that a prompt holds at most 2,000 characters — as for a shorter long paste.
(Streamlit's max_chars would make the box ignore such a paste as a whole, without a word.)
"""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app

PASTE = "The capital of France is Paris. " * 800  # 25,600 characters
TOO_LONG = "2,000 characters at most"
RESET_NOTE = "not allowed here"


def _paste(page: Page, box: str) -> None:
    area = page.locator(box)
    area.click()
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.insert_text(PASTE)  # what a paste does: one input of the whole text
    page.keyboard.press("ControlOrMeta+Enter")  # apply (as the box's help says)
    wait_for_app(page)


def test_a_25k_paste_into_the_sidebar_prompt_is_cut_with_a_message(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/logits_sampling")  # a page that runs the prompt through the model
    wait_for_app(page)
    _paste(page, ".st-key-w_prompt textarea")
    expect(page.get_by_text(TOO_LONG).first).to_be_visible()
    assert len(page.locator(".st-key-w_prompt textarea").input_value()) == 20_000
    assert RESET_NOTE not in page.inner_text("body")
    assert_no_error(page)


def test_a_25k_paste_into_text_to_tokenize_is_cut_with_a_message(page: Page, app_url: str) -> None:
    page.goto(f"{app_url}/tokenization")
    wait_for_app(page)
    page.get_by_role("tab", name="② The model's tokenizer").click()
    wait_for_app(page)
    _paste(page, ".st-key-tok_model_text textarea")
    expect(page.get_by_text(TOO_LONG).first).to_be_visible()
    assert RESET_NOTE not in page.inner_text("body")
    assert_no_error(page)
