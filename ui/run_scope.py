"""A scratch dict that lives for one script run: values read many times in a run, once.

A full rerun reads the same session values hundreds of times (the language alone ~300 times a
Transformer-block run, through ``t``), and every ``st.session_state`` read goes through
Streamlit's proxy, lock and rerun check. What a run may cache here must not change during the
run except through code that clears it (``ui.state`` clears the language when it writes it).
"""

from __future__ import annotations

from typing import Any

from serving.patches import run_marker


def this_run() -> dict[str, Any] | None:
    """The current run's scratch dict (a fragment's rerun is a run of its own), or None outside a
    run and when the ``run_scope`` patch is off or skipped (callers then read each value afresh).

    No public API names a run, so the dict is tied to an object Streamlit creates anew for each
    run (``serving.patches.run_marker``); a reference to it is held, so its id cannot be reused.
    """
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return None
    marker = run_marker(ctx)
    if marker is None:
        return None
    held = getattr(ctx, "_token_journey_run", None)
    if held is None or held[0] is not marker:
        held = (marker, {})
        ctx._token_journey_run = held
    return held[1]
