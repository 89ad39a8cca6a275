"""Altair without its per-object schema checks: the same Vega-Lite specs for less server CPU.

Altair checks a chart while it is being built, not only when it is written out: every schema
object validates itself when it is created ("debug mode"), and every channel given as a
shorthand string or a dict (``"x:Q"``, ``alt.condition(...)``, ``alt.value(...)``) is turned
into typed objects by matching it against the Vega-Lite JSON schema, alternative by
alternative (``from_dict``), only to be written back to the same dict. For the charts a
control redraws (a heat map with a conditional colour, a causal mask) that was most of their
build time (a layer pick, a generation step; 5-20 ms per chart on the classroom machine).

``enable()`` (called when ``ui.charts`` is imported) turns debug mode off and wraps such a
channel in its channel class directly: the class ``from_dict`` would return, holding the dict's
values as they are. ``Chart.to_dict`` then writes the same spec (a test compares every kind of
chart both ways); the app tests still validate every spec against the schema.
``TOKEN_JOURNEY_ALTAIR_CHECKS=1`` keeps Altair's own checks (while writing a new chart).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from altair.utils import core as _core
from altair.utils import schemapi as _schemapi

CHECKS_ENV_VAR = "TOKEN_JOURNEY_ALTAIR_CHECKS"
_ORIGINAL_WRAP = _core._ChannelCache._wrap_in_channel
_ORIGINAL_DEBUG = _schemapi.DEBUG_MODE


def _wrap_in_channel(self: Any, obj: Any, encoding: str, /) -> Any:
    """``_ChannelCache._wrap_in_channel`` without the schema matching (same result for our charts)."""
    if isinstance(obj, _schemapi.SchemaBase):
        return obj
    if isinstance(obj, str):
        obj = {"shorthand": obj}
    elif isinstance(obj, (list, tuple)):
        return [_wrap_in_channel(self, item, encoding) for item in obj]
    channel = self.name_to_channel.get(encoding) if isinstance(obj, dict) else None
    if channel is None:  # anything unusual: Altair's own way
        return _ORIGINAL_WRAP(self, obj, encoding)
    return channel["value" if "value" in obj else "field"](**obj)


def enable() -> None:
    """Build charts without Altair's per-object checks (unless ``TOKEN_JOURNEY_ALTAIR_CHECKS=1``)."""
    if os.environ.get(CHECKS_ENV_VAR, "0") == "1":
        return
    _core._ChannelCache._wrap_in_channel = _wrap_in_channel
    _schemapi.DEBUG_MODE = False


def disable() -> None:
    """Altair's own behaviour again."""
    _core._ChannelCache._wrap_in_channel = _ORIGINAL_WRAP
    _schemapi.DEBUG_MODE = _ORIGINAL_DEBUG


def enabled() -> bool:
    return _core._ChannelCache._wrap_in_channel is _wrap_in_channel


@contextlib.contextmanager
def altair_checks() -> Iterator[None]:
    """Altair's own checks inside the block (tests compare both ways); the previous state after."""
    was = enabled()
    disable()
    try:
        yield
    finally:
        if was:
            _core._ChannelCache._wrap_in_channel = _wrap_in_channel
            _schemapi.DEBUG_MODE = False
