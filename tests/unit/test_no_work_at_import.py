"""No work at import: importing any module of core, serving or ui starts no thread, patches
nothing, loads no model and tunes nothing (start-up is one explicit call: ``serving.startup``).

Every module is imported in one fresh interpreter; pages are scripts (they run, not import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Each (module, attribute path) the patches of serving.patches replace or set: identity before
# and after importing everything must be the same object (or the same value).
PATCHED = [
    ("streamlit.runtime.runtime", "Runtime._enqueued_some_message"),
    ("streamlit.runtime.app_session", "AppSession._call_soon_on_event_loop"),
    ("streamlit.runtime.scriptrunner.script_runner", "gc"),
    *[(f"streamlit.elements.widgets.{m}", "get_session_state")
      for m in ("radio", "slider", "number_input", "selectbox", "text_widgets", "time_widgets")],
    ("streamlit.components.v2.bidi_component.serialization", "is_dataframe_like"),
    ("streamlit.delta_generator", "_use_warning_has_been_displayed"),
    ("altair.utils.core", "_ChannelCache._wrap_in_channel"),  # nothing of ours patches Altair
]


def our_modules() -> list[str]:
    names = []
    for package in ("core", "serving", "ui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


SCRIPT = r"""
import gc, importlib, json, sys, threading
patched = json.loads(sys.argv[1])
modules = json.loads(sys.argv[2])

def look(module, path):
    obj = importlib.import_module(module)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj

before_threads = set(threading.enumerate())
before = {f"{m}:{p}": look(m, p) for m, p in patched}
before_threads = set(threading.enumerate())
failed = []
for name in modules:
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name}: {error!r}")
after = {f"{m}:{p}": look(m, p) for m, p in patched}
import serving.models, serving.patches, serving.process, serving.settings, core.engine.device
report = {
    "tuned": [serving.process._POOLS_LIMITED, core.engine.device._FORCED, serving.settings._ACTIVE],
    "failed": failed,
    "new_threads": sorted(t.name for t in set(threading.enumerate()) - before_threads),
    "changed": sorted(k for k in before if after[k] is not before[k]),
    "registered": serving.models._REGISTRY.names(),
    "frozen": gc.get_freeze_count(),
}
print(json.dumps(report))
"""


def test_importing_every_module_does_no_work() -> None:
    modules = our_modules()
    assert "serving.startup" in modules and "ui.resources" in modules and "core.engine.model" in modules
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKEN_JOURNEY_")}
    result = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(PATCHED), json.dumps(modules)], cwd=ROOT,
                            capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["failed"] == []
    assert report["new_threads"] == [], "a module started a thread at import"
    assert report["changed"] == [], "a module patched Streamlit at import"
    assert report["registered"] == [], "a module registered or loaded a model at import"
    assert report["frozen"] == 0, "a module froze the heap at import"
    assert report["tuned"] == [None, None, None], "a module limited threads, forced a device or read the settings"


def test_the_patch_list_is_what_the_check_watches() -> None:
    """The identity check above covers every patch there is."""
    from serving.patches import PATCHES

    assert {p.name for p in PATCHES} == {"coalesce", "post_run_gc", "light_frame_check"}
