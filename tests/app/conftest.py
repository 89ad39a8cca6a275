"""AppTest helpers: start from app.py, set durable state, switch to a page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LANGS = ("en", "zh")


def open_page(page: str | None, lang: str = "en", prompt: str | None = None, timeout: float = 60) -> AppTest:
    """Run app.py once, set language (and prompt), then switch to ``pages/<page>.py``.

    Durable values are set through the session state the sidebar reads, exactly as a
    user's choice would be kept across page changes.
    """
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.session_state["lang"] = lang
    if prompt is not None:
        at.session_state["prompt"] = prompt
    at.run()
    if page is not None:
        at.switch_page(f"pages/{page}.py")
        at.run()
    return at


def chart_title(spec: dict) -> str:
    """A Vega-Lite chart's title as one line: the theme wraps long titles for phones
    (``ui.charts.common.wrap_title``), so the "\\n"s it adds are removed before comparing."""
    title = spec.get("title", "")
    title = title.get("text", "") if isinstance(title, dict) else title
    title = "".join(title) if isinstance(title, list) else str(title)
    return title.replace("\n", "")


def assert_clean(at: AppTest) -> None:
    """No exception block and no missing translation key on the page."""
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [m.value for m in at.caption] + [h.value for h in at.title]
    missing = [x for x in texts if "⟦" in str(x)]
    assert not missing, missing


@pytest.fixture(params=LANGS)
def lang(request: pytest.FixtureRequest) -> str:
    return request.param
