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
if __name__ == "__main__":
    threading.Thread(target=importlib.import_module, args=("ui.resources",), name="token-journey-import",
                     daemon=True).start()
    sys.exit(main(args=["run", str(ROOT / "app.py"), *sys.argv[1:]], prog_name="streamlit"))
