"""AppTest helpers for our components-v2 components: find one by key, press one of its buttons.

AppTest (Streamlit 1.67) renders a component but has no API to send its trigger values. A
browser sends a trigger as one widget state: the component's trigger-aggregator id with a JSON
list of ``{"event", "value"}``; ``press`` builds exactly that and runs the script with it, so
the component's ``on_<event>_change`` callback and the page run as for a real click.
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.testing.v1 import AppTest


def component(at: AppTest, key: str) -> Any:
    """The proto of the component drawn with ``key`` (its id ends with the key)."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if type(proto).__name__ == "BidiComponent" and proto.id.endswith(f"-{key}"):
            found.append(proto)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    assert len(found) == 1, f"component {key!r}: found {len(found)}"
    return found[0]


def component_data(at: AppTest, key: str) -> dict[str, Any]:
    return json.loads(component(at, key).json)


def press(at: AppTest, key: str, value: Any, event: str = "action") -> AppTest:
    """Send ``value`` as the component's ``event`` trigger (what its button sends) and run."""
    proto = component(at, key)
    states = at._tree.get_widget_states()
    trigger = states.widgets.add()
    trigger.id = _make_trigger_id(proto.id, "events")
    trigger.json_trigger_value = json.dumps([{"event": event, "value": value}])
    return at._tree._runner._run(states, timeout=None)
