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

# Before numpy or torch is imported: their thread pools start with this many threads (one per
# request serves a class best; ui.resources.limit_cpu_threads explains why). A value already
# set in the environment wins.
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, os.environ.get("TOKEN_JOURNEY_THREADS", "1"))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ui.resources  # noqa: E402,F401  (caps the malloc arenas, then starts the background load)
from streamlit.web.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(args=["run", str(ROOT / "app.py"), *sys.argv[1:]], prog_name="streamlit"))
