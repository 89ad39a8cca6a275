"""Every namespace has the same keys in English and Chinese, and placeholders match."""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parents[2] / "assets" / "i18n"
NAMESPACES = sorted({p.name.split(".")[0] for p in I18N.glob("*.json")})


def _load(ns: str, lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{ns}.{lang}.json").read_text(encoding="utf-8"))


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_there_are_namespaces() -> None:
    assert "shell" in NAMESPACES


@pytest.mark.parametrize("ns", NAMESPACES)
def test_same_keys_in_both_languages(ns: str) -> None:
    en, zh = _load(ns, "en"), _load(ns, "zh")
    assert sorted(en.keys() - zh.keys()) == [], "keys missing in zh"
    assert sorted(zh.keys() - en.keys()) == [], "keys missing in en"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_placeholders_match(ns: str) -> None:
    en, zh = _load(ns, "en"), _load(ns, "zh")
    bad = [k for k in en if _fields(en[k]) != _fields(zh[k])]
    assert bad == []


@pytest.mark.parametrize("ns", NAMESPACES)
def test_no_empty_strings(ns: str) -> None:
    for lang in ("en", "zh"):
        assert all(v.strip() for v in _load(ns, lang).values()), (ns, lang)


def test_no_key_defined_twice_across_namespaces() -> None:
    seen: dict[str, str] = {}
    for ns in NAMESPACES:
        for key in _load(ns, "en"):
            assert key not in seen, f"{key} in both {seen.get(key)} and {ns}"
            seen[key] = ns


def test_every_page_and_section_has_a_nav_label() -> None:
    from ui import nav

    keys = {k for ns in NAMESPACES for k in _load(ns, "en")}
    for section, pages in nav.SECTIONS:
        if section:
            assert f"nav.section.{section}" in keys
        for page in pages:
            assert f"nav.{page.page_id}" in keys


def test_locale_mapping() -> None:
    from ui.i18n import language_from_locale

    assert language_from_locale("zh-CN") == "zh"
    assert language_from_locale("zh-TW") == "zh"
    assert language_from_locale("en-US") == "en"
    assert language_from_locale(None) == "en"
    assert language_from_locale("fr") == "en"
