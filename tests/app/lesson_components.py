"""AppTest helpers for the lesson components (``ui.components.lessons``): the data each sends."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest


def knob_values(specs: list[dict]) -> dict[str, Any]:
    """The knobs a view was sent, as values (flags as booleans, a list at its default as None)."""
    out: dict[str, Any] = {}
    for spec in specs:
        value = spec["value"]
        if spec["kind"] == "flag":
            value = value == 1
        elif spec["kind"] == "list":
            value = None if value == spec["default"] else [int(v) for v in value.split(",") if v]
        out[spec["name"]] = value
    return out


def lesson_components(at: AppTest) -> dict[str, dict]:
    """Every positional/attention lesson component of the main area by its key: the data sent
    (``knobs`` as {name: value}, see ``knob_values``; ``knob_specs``: as sent)."""
    from ui.components.lessons import ATTENTION, POSITIONAL

    found: dict[str, dict] = {}

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.component_name in (POSITIONAL, ATTENTION):
            data = json.loads(proto.json)
            data["knob_specs"] = data["knobs"]
            data["knobs"] = knob_values(data["knobs"])
            found[proto.id.rsplit("-", 1)[-1]] = data
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found
