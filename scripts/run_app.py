"""Start Streamlit with the models already loading: ``python scripts/run_app.py [streamlit run options]``.

``streamlit run app.py`` imports our code only when the first browser connects, so the
first student waits for both models to load. This launcher imports ``ui.resources`` at once,
on a thread beside the server's start (it starts loading and precomputing both built-in models
on a background thread), and hands over to Streamlit's own command line exactly as
``streamlit run app.py ...`` would.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path

# Before numpy or torch is imported: their thread pools start with this many threads (one per
# request serves a class best; ui.resources.limit_cpu_threads explains why). A value already
# set in the environment wins.
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, os.environ.get("TOKEN_JOURNEY_THREADS", "1"))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.web.cli import main  # noqa: E402

# ``ui.resources`` (torch, pandas, our code: ~1.2 s of imports; then it caps the malloc arenas and
# starts loading both models) is imported on a thread of its own, so the server answers and a
# browser loads Streamlit's page (~1.3 s of script parsing, in the browser's process) meanwhile:
# cold start to the Overview drawn 3.7-4.0 s -> 3.4 s (bench/cold_start.py --browser). The first
# script run imports it too and so waits for that same import, not for a second one.
#
# Then, still before the first browser connects (it parses Streamlit's page for ~1 s), the same
# thread does what the first Overview run would otherwise do itself, on the critical path of a
# cold start (~0.2-0.3 s of its 0.6 s, profiled): import the modules app.py needs, read both
# languages' strings, and compile Streamlit's emoji pattern (set_page_config and every
# st.page_link test their icon with it; its module and regex cost ~0.2 s the first time).
# Streamlit also asks once per process, at the first element, whether it runs in a Python REPL
# (``inspect.stack()`` over every frame, reading their source files: 0.16 s of the first run);
# under this launcher it never does, so that once-only check is marked done.
FIRST_PAGE_MODULES = ("core.lessons.head_analysis", "core.lessons.journey", "ui.diagram", "ui.nav", "ui.page", "ui.presenter",
                      "ui.tokens")


def import_and_warm() -> None:
    importlib.import_module("ui.resources")
    try:
        for name in FIRST_PAGE_MODULES:
            importlib.import_module(name)
        from streamlit.string_util import is_emoji

        from ui.i18n import LANGUAGES, load_strings

        for lang in LANGUAGES:
            load_strings(lang)
        is_emoji("🚂")
        import streamlit.delta_generator as delta_generator

        delta_generator._use_warning_has_been_displayed = True  # noqa: SLF001 (see above)
    except Exception:  # only a head start: the first run does all of it itself, and reports errors
        pass


if __name__ == "__main__":
    threading.Thread(target=import_and_warm, name="token-journey-import", daemon=True).start()
    sys.exit(main(args=["run", str(ROOT / "app.py"), *sys.argv[1:]], prog_name="streamlit"))
