"""How a token is written on screen: visible spaces and newlines, nothing hidden."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_VISIBLE = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}


def display_token(token: str) -> str:
    """Make whitespace visible so students see that " Paris" starts with a space.

    Example: display_token(" Paris") -> "␣Paris"
    """
    if not token:
        return "∅"
    return "".join(_VISIBLE.get(ch, ch) for ch in token)


def token_labels(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Readable, unique axis labels for token ids: visible spaces, byte tokens by name.

    A lone byte of a Chinese character decodes to "�"; its vocabulary name (``<0xE5>``) says
    more. Two ids that still look alike get their id appended, so chart axes never merge them.

    Example: token_labels(tok, [tok.encode(" Paris")[0]]) -> ["␣Paris"]
    """
    labels = []
    for i in ids:
        text = tokenizer.decode([int(i)])
        if "\ufffd" in text:
            text = tokenizer.id_to_token(int(i))
        labels.append(display_token(text))
    ids_per_label: dict[str, set[int]] = {}
    for label, i in zip(labels, ids):
        ids_per_label.setdefault(label, set()).add(int(i))
    return [f"{label} #{int(i)}" if len(ids_per_label[label]) > 1 else label for label, i in zip(labels, ids)]
