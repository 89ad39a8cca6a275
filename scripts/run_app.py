"""Start Streamlit with the models already loading: ``python scripts/run_app.py [streamlit run options]``.

``streamlit run app.py`` imports our code only when the first browser connects, so the
first student waits for both models to load. This launcher imports ``ui.resources`` first
(which starts loading and precomputing both built-in models on a background thread), then
hands over to Streamlit's own command line exactly as ``streamlit run app.py ...`` would.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def limit_malloc_arenas() -> None:
    """At most ``TOKEN_JOURNEY_MALLOC_ARENAS`` (default 2) glibc malloc arenas, set before any thread.

    Streamlit runs every session's script on its own thread; glibc gives threads up to 8 arenas
    per core, each keeping what its threads freed, so a class of 30 grows the resident size by
    fragments no cache owns. Two arenas keep it flat (the threads mostly wait for the GIL anyway).
    ``MALLOC_ARENA_MAX`` in the environment wins; ``0`` here leaves glibc's default.
    """
    arenas = os.environ.get("TOKEN_JOURNEY_MALLOC_ARENAS", "2")
    if "MALLOC_ARENA_MAX" in os.environ or not arenas.isdigit() or int(arenas) < 1 or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, int(arenas))  # M_ARENA_MAX
    except (OSError, AttributeError):  # another libc
        pass


limit_malloc_arenas()

import ui.resources  # noqa: E402,F401  (starts the background load)
from streamlit.web.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(args=["run", str(ROOT / "app.py"), *sys.argv[1:]], prog_name="streamlit"))
