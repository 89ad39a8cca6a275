"""Start Streamlit with the models already loading: ``python scripts/run_app.py [streamlit run options]``.

``streamlit run app.py`` starts the server's work (``serving.startup.start``) only when the first
browser connects, so the first student waits for both models to load. This launcher reads the
settings at once (a malformed ``TOKEN_JOURNEY_*`` value: one line, exit code 2), starts on a
thread beside the server's start, and hands over to Streamlit's own command line exactly as
``streamlit run app.py ...`` would.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from serving.startup import settings_or_exit  # noqa: E402 - stdlib only: numpy is not imported yet

SETTINGS = settings_or_exit()

# Before numpy or torch is imported: their thread pools start with this many threads (one per
# request serves a class best; serving.process.limit_cpu_threads explains why). A value already
# set in the environment wins.
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, str(SETTINGS.threads))

from streamlit.web.cli import main  # noqa: E402

# The start (torch, pandas, our code: ~1.2 s of imports; then it starts loading both models) runs
# on a thread of its own, so the server answers and a browser loads Streamlit's page (~1.3 s of
# script parsing, in the browser's process) meanwhile (bench/cold_start.py --browser measures it).
# The first script run starts too (``ui.page.setup``) and so waits for that same start, not for a
# second one.
#
# Then, still before the first browser connects, the same thread does what the first Overview
# run would otherwise do itself, on the critical path of a cold start (~0.2-0.3 s of its 0.6 s,
# profiled): import the modules app.py needs, read both languages' strings, and compile
# Streamlit's emoji pattern (set_page_config and every st.page_link test their icon with it).
FIRST_PAGE_MODULES = ("core.lessons.head_analysis", "core.lessons.journey", "ui.diagram", "ui.nav", "ui.page",
                      "ui.presenter", "ui.tokens")


def start_and_warm() -> None:
    from serving.startup import start
    from ui.resources import APP

    start(SETTINGS, APP)
    try:
        for name in FIRST_PAGE_MODULES:
            importlib.import_module(name)
        from streamlit.string_util import is_emoji

        from ui.i18n import LANGUAGES, load_strings

        for lang in LANGUAGES:
            load_strings(lang)
        is_emoji("🚂")
    except Exception:  # only a head start: the first run does all of it itself, and reports errors
        pass


if __name__ == "__main__":
    threading.Thread(target=start_and_warm, name="token-journey-import", daemon=True).start()
    sys.exit(main(args=["run", str(ROOT / "app.py"), *sys.argv[1:]], prog_name="streamlit"))
