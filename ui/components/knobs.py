"""Browser knobs, the server's half: what a component needs to show a knob, and how the values a
trigger carries are checked and kept.

A knob (temperature, a PE slider, ...) moves in the browser with no websocket frame
(``frontend/src/knob_state.ts`` keeps it in sessionStorage and the address bar). The server
learns its value only with a trigger for an action that needs it (Next token, Run, Draw);
``commit`` checks each value against its ``ui.state`` declaration and stores it, so the session
state and the link carry it from then on. A fresh load of a link is read by ``ui.state.read_url``
as for any other control. The contract: /work/notes/KNOBS_CONTRACT.md.

Example (a page with a temperature knob, inside the fragment that draws the component):

    KNOBS = (Knob("sampling_temperature", 0.0, 3.0),)
    result = mount(key="..", data={"knobs": knobs.specs(KNOBS), ...}, on_action_change=lambda: None)
    action = getattr(result, "action", None)
    if isinstance(action, dict):
        knobs.commit(action.get("knobs"), KNOBS)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ui import state
from ui.i18n import current_language


@dataclass(frozen=True)
class Knob:
    """One browser knob: its ``ui.state`` name (also its link parameter) and the range the page's
    control offers now (inside the declared range; e.g. top-k up to this model's vocabulary)."""

    name: str
    low: float
    high: float


def _fit(knob: Knob, value: Any) -> Any:
    return type(value)(min(max(value, knob.low), knob.high))


def specs(knobs: Sequence[Knob]) -> list[dict[str, Any]]:
    """Each knob as the browser's ``KnobSpec``: name, the durable value (checked, fitted to the
    page's range), the default (which stays out of the link), and the range."""
    lang = current_language()
    out = []
    for knob in knobs:
        default = state.SPECS[knob.name].default_for(lang)
        out.append({
            "name": knob.name,
            "value": _fit(knob, state.get(knob.name)),
            "default": default,
            "min": knob.low,
            "max": knob.high,
        })
    return out


def commit(sent: Any, knobs: Sequence[Knob]) -> dict[str, Any]:
    """Check and store the knob values a trigger carried; return every knob's value now.

    A knob missing from ``sent`` keeps its durable value. A value its declaration rejects (not a
    number, out of range, a flag, NaN; a tampered client can send anything) falls back to the
    default with the usual translated note; an allowed value outside the page's range is fitted.
    """
    values = dict(sent) if isinstance(sent, dict) else {}
    changed = False
    for knob in knobs:
        if knob.name not in values:
            continue
        value, ok = state.checked(knob.name, values[knob.name])
        if not ok:
            state.note(state.SPECS[knob.name].label)
        value = _fit(knob, value)
        if state.get(knob.name) != value:
            state.put(knob.name, value)
            changed = True
    if changed:
        state.sync_url()  # the link carries the committed values from now on
    return {knob.name: state.get(knob.name) for knob in knobs}
