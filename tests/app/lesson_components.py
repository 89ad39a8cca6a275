"""AppTest helpers for the lesson components (``ui.components.lessons``): the data each sends."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest


def lesson_components(at: AppTest) -> dict[str, dict]:
    """Every positional/attention lesson component of the main area by its key: the data sent."""
    from ui.components.lessons import ATTENTION, POSITIONAL

    found: dict[str, dict] = {}

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name in (POSITIONAL, ATTENTION):
            found[proto.id.rsplit("-", 1)[-1]] = json.loads(proto.json)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found
