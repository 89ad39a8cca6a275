"""The browser warm-up names modules the pinned Streamlit really has, and its script is inert text."""

from __future__ import annotations

import json
import re

from ui import browser_warmup


def test_every_element_module_exists_in_the_installed_streamlit() -> None:
    files = browser_warmup.module_files()
    stems = [re.sub(r"\.[A-Za-z0-9_-]{6,12}\.js$", "", name) for name in files]
    assert stems == list(browser_warmup.ELEMENT_MODULES)  # a Streamlit upgrade that renames one fails here
    for name in files:
        assert (browser_warmup.static_js_folder() / name).is_file()


def test_the_script_lists_exactly_those_files() -> None:
    script = browser_warmup.script()
    listed = json.loads(re.search(r"const files = (\[.*?\]);", script).group(1))
    assert listed == list(browser_warmup.module_files())
    assert script.count("<script>") == 1 and script.count("</script>") == 1


def test_a_missing_module_is_skipped(monkeypatch, tmp_path) -> None:
    (tmp_path / "Slider.AbCdEf12.js").write_text("")
    (tmp_path / "index.html").write_text("")
    monkeypatch.setattr(browser_warmup, "static_js_folder", lambda: tmp_path)
    browser_warmup.module_files.cache_clear()
    try:
        assert browser_warmup.module_files() == ("Slider.AbCdEf12.js",)
    finally:
        browser_warmup.module_files.cache_clear()
