"""How a token is written on screen: visible spaces and newlines, nothing hidden."""

from __future__ import annotations

_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}


def display_token(token: str) -> str:
    """Make whitespace visible so students see that " Paris" starts with a space.

    Example: display_token(" Paris") -> "␣Paris"
    """
    if not token:
        return "∅"
    return "".join(_VISIBLE.get(ch, ch) for ch in token)
