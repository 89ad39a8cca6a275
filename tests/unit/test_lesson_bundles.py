"""The lesson components' bundles (ui.components.lessons) load nothing from the network and
write no markup: every string goes in as text (the journey's bundle test, for these two)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BUILD = Path(__file__).resolve().parents[2] / "ui" / "components" / "frontend" / "build"


@pytest.mark.parametrize("name", ["positional", "attention"])
def test_lesson_bundle_is_safe(name: str) -> None:
    js = (BUILD / f"{name}.js").read_text(encoding="utf-8")
    css = (BUILD / "lessons.css").read_text(encoding="utf-8")
    assert js.startswith("//") and "\n" in js  # Streamlit reads a one-line string as a file path
    assert "export default" in js or re.search(r"export\s*\{[^}]*as default", js)
    for text in (js, css):
        urls = [u for u in re.findall(r"https?://[^\s\"'`)]+", text) if u != "http://www.w3.org/2000/svg"]
        assert urls == [], urls
        assert "@import" not in text
    for unsafe in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                   "setStateValue", "setTriggerValue"):
        assert unsafe not in js, unsafe  # the last two: a knob never talks to the server
