"""One translation function for every user-visible string.

Strings live in ``assets/i18n/<namespace>.<lang>.json``. Each page (or area) owns one
namespace file pair, so engineers editing different pages never touch the same file.
Keys are global and namespaced by convention (``"tokenization.title"``); a key defined in
two files is an error, and a test checks that the English and Chinese files of every
namespace hold identical key sets.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import streamlit as st


I18N_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"
LANGUAGES: dict[str, str] = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"


@lru_cache(maxsize=None)
def load_strings(lang: str) -> dict[str, str]:
    """All strings of one language, merged from every namespace file.

    Example: load_strings("zh")["nav.overview"] -> "总览"
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {sorted(LANGUAGES)}")
    merged: dict[str, str] = {}
    for path in sorted(I18N_DIR.glob(f"*.{lang}.json")):
        strings = json.loads(path.read_text(encoding="utf-8"))
        clash = merged.keys() & strings.keys()
        if clash:
            raise ValueError(f"{path.name} redefines keys {sorted(clash)[:5]}")
        merged.update(strings)
    return merged


def current_language() -> str:
    """The language chosen in the sidebar (durable session state), else the default."""
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE




def translate(key: str, lang: str, **fmt: Any) -> str:
    """Look a key up in one language; a missing key shows itself so it is easy to spot."""
    text = load_strings(lang).get(key)
    if text is None:
        return f"⟦{key}⟧"
    return text.format(**fmt) if fmt else text


def t(key: str, **fmt: Any) -> str:
    """Translate ``key`` into the current language, filling ``{placeholders}`` from ``fmt``.

    Example: t("sidebar.device", device="cpu") -> "Device: cpu"
    """
    return translate(key, current_language(), **fmt)


def language_from_locale(locale: str | None) -> str:
    """Map a browser locale such as ``"zh-CN"`` to one of our languages.

    Example: language_from_locale("zh-TW") -> "zh"
    """
    if locale and locale.lower().startswith("zh"):
        return "zh"
    return DEFAULT_LANGUAGE
