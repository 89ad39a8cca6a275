"""Shared test setup: the repo root on sys.path and a quiet, single-threaded torch."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Tests always run on the CPU so results match CI, whatever the machine has.
os.environ.setdefault("TOKEN_JOURNEY_DEVICE", "cpu")
from core.engine import device as _device  # noqa: E402 - core reads no environment: the tests force it here

_device.force(os.environ["TOKEN_JOURNEY_DEVICE"])  # (a served app does it at start, from its Settings)

# Property tests are derandomized: the same examples on every run, so CI is never red by
# chance (a failing example found once stays found, in every run).
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("ci", derandomize=True, print_blob=True)
_hypothesis_settings.load_profile("ci")
