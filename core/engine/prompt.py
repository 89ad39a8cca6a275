"""Checks on user text before it reaches the tokenizer or the model.

Pages show the problem's ``code`` translated; the core only says what is wrong.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

MAX_PROMPT_CHARS = 2000  # far above a classroom prompt, far below what could slow the server


class PromptProblem(ValueError):
    """A prompt the pages should refuse, with a machine-readable ``code``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class CleanPrompt:
    text: str
    removed_control_chars: int


def clean_prompt(text: object, max_chars: int = MAX_PROMPT_CHARS) -> CleanPrompt:
    """Drop control characters (keep newline and tab) and refuse empty or huge text.

    Example: clean_prompt("hi\\x00 there").text -> "hi there"
    """
    if isinstance(text, (bytes, bytearray)):
        raise PromptProblem("binary", "the prompt must be text, not bytes")
    if not isinstance(text, str):
        raise PromptProblem("binary", f"the prompt must be text, not {type(text).__name__}")
    if len(text) > max_chars:
        raise PromptProblem("too_long", f"the prompt has {len(text)} characters; the limit is {max_chars}")
    kept = [
        ch for ch in text
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs", "Co", "Cn")
    ]
    cleaned = "".join(kept)
    if not cleaned.strip():
        raise PromptProblem("empty", "the prompt is empty")
    return CleanPrompt(text=cleaned, removed_control_chars=len(text) - len(cleaned))
