"""In real Chromium: the replay slider moves the step, a live run of a few steps finishes in its
own process, and the trained model is selectable in the sidebar of another page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import assert_no_error, wait_for_app
from ui.i18n import load_strings


def _metric_value(page: Page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_replay_and_a_live_run(page: Page, app_url: str, lang: str) -> None:
    words = load_strings(lang)
    step_label = words["training.metric.step"]
    page.goto(f"{app_url}/training" + ("?lang=zh" if lang == "zh" else ""))
    wait_for_app(page)
    assert_no_error(page)
    assert _metric_value(page, step_label).startswith("0 /")

    thumb = page.locator(".st-key-train_step input[type='range']")  # Streamlit 1.67: a hidden range input
    thumb.scroll_into_view_if_needed()
    thumb.focus()
    thumb.press("End")  # the last snapshot: the trained model
    wait_for_app(page)
    value = page.locator('[data-testid="stMetric"]').filter(has_text=step_label).first.locator('[data-testid="stMetricValue"]')
    expect(value).not_to_have_text(re.compile(r"^0 /"), timeout=20_000)

    steps = page.locator(".st-key-train_steps input")
    steps.scroll_into_view_if_needed()
    steps.fill("5")
    steps.press("Enter")
    wait_for_app(page)
    page.locator(".st-key-training_start button").click()
    done = page.locator('[data-testid="stAlertContentSuccess"]')
    expect(done).to_be_visible(timeout=90_000)  # a spawned worker imports torch, then 5 steps
    name = re.search(r"trained tiny classic #\d+-\w+", done.inner_text()).group(0)
    assert_no_error(page)

    page.locator('[data-testid="stSidebar"] a[href$="logits_sampling"]').click()
    wait_for_app(page)
    expect(page.locator("h1").first).to_contain_text(words["logits_sampling.title"][:6], timeout=30_000)
    model_box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text=words["sidebar.model"])
    option = page.get_by_role("option", name=name)
    for _ in range(3):  # a click that lands during a rerun can be lost: open the list again
        model_box.get_by_role("combobox").click()
        try:
            option.wait_for(timeout=5_000)
            break
        except Exception:
            page.keyboard.press("Escape")
            wait_for_app(page)
    option.click()
    wait_for_app(page)
    assert_no_error(page)
    expect(model_box.get_by_role("combobox")).to_have_value(name)
    expect(page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=30_000)
