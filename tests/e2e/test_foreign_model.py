"""In real Chromium: a teacher's checkpoint (TOKEN_JOURNEY_MODELS) picked from the sidebar, every page.

The server is started with two foreign entries: a tiny random Qwen2 (grouped-query attention)
and a folder with only a pickle ``.bin``; the first must work on every page, the second must
give its translated message while the built-in models keep working.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import _free_port, serve, streamlit_command
from tests.e2e.helpers import assert_no_error, wait_for_app
from tests.hf_fixtures import build_checkpoint
from ui import nav
from ui.i18n import load_strings

MODEL = "tiny-qwen"
BROKEN = "pickle-only"


@pytest.fixture(scope="module")
def foreign_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = build_checkpoint(tmp_path_factory.mktemp("qwen"), "qwen2")
    pickle_only = tmp_path_factory.mktemp("bin")
    shutil.copy(folder / "config.json", pickle_only / "config.json")
    (pickle_only / "pytorch_model.bin").write_bytes(b"never opened")
    port = _free_port()
    models = {"TOKEN_JOURNEY_MODELS": f"{MODEL}={folder},{BROKEN}={pickle_only}"}
    with serve(streamlit_command(port), port, "server_foreign.log", models) as url:
        yield url


def _pick_model(page: Page, name: str) -> None:
    label = load_strings("en")["sidebar.model"]
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text=label)
    option = page.get_by_role("option", name=name, exact=True)
    for _ in range(3):  # a rerun that lands just then closes the list: open it again
        box.click()
        try:
            option.click(timeout=5_000)
            break
        except Exception:
            wait_for_app(page)
    wait_for_app(page)


def test_pick_foreign_model_and_visit_every_page(page: Page, foreign_url: str) -> None:
    page.goto(foreign_url)
    wait_for_app(page)
    _pick_model(page, MODEL)
    assert_no_error(page)
    strings = load_strings("en")
    for info in [p for _, ps in nav.existing_sections() for p in ps]:
        page.locator('[data-testid="stSidebar"]').get_by_role("link", name=strings[f"nav.{info.page_id}"]).first.click()
        wait_for_app(page)
        assert_no_error(page)
        chosen = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text=strings["sidebar.model"])
        assert MODEL in (chosen.inner_text() + " " + " ".join(
            chosen.locator("input").evaluate_all("els => els.map(e => e.value)"))), info.page_id


def test_pickle_only_model_is_explained_and_builtins_keep_working(page: Page, foreign_url: str) -> None:
    page.goto(foreign_url)
    wait_for_app(page)
    _pick_model(page, BROKEN)
    body = page.inner_text("body")
    assert ".bin" in body and "safe_serialization=True" in body
    assert_no_error(page)
    _pick_model(page, load_strings("en")["sidebar.model.classic"])
    assert_no_error(page)
    assert "safe_serialization" not in page.inner_text("body")
