"""The layers at run time: core never imports streamlit, not even indirectly (the import rules
themselves: test_import_rules.py), and the Overview's cold start stays free of the chart libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_importing_core_does_not_import_streamlit() -> None:
    modules = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in (ROOT / "core").rglob("*.py")
                     if p.stem not in ("__init__", "__main__"))
    assert len(modules) > 30  # every module of every core subpackage, not an empty list
    imports = "; ".join(f"import {m}" for m in modules)
    code = (
        "import sys; import core; " + imports + "; "
        "bad = [m for m in sys.modules if m == 'streamlit' or m.startswith('streamlit.')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_core_source_mentions_streamlit_import() -> None:
    paths = sorted((ROOT / "core").rglob("*.py"))
    assert len(paths) >= 30, paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert "import streamlit" not in text and "from streamlit" not in text, path


def test_the_overview_starts_without_the_chart_libraries() -> None:
    """Cold start: the Overview draws no Altair/pandas/Arrow chart, so the modules it imports must
    not pull those libraries in (~1.2 s of imports before the first student sees a page); the
    background loader imports them after the first model is ready."""
    overview_imports = (
        "import ui.presenter, ui.components.journey, ui.diagram, ui.nav, ui.i18n, ui.page, "
        "ui.resources, ui.tokens"
    )
    code = (
        "import sys; " + overview_imports + "; "
        "heavy = ('altair', 'pandas', 'pyarrow', 'ui.charts'); "
        "bad = sorted({m for m in sys.modules if m.split('.')[0] in heavy or m.startswith('ui.charts')}); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    env = {**os.environ, "TOKEN_JOURNEY_BACKGROUND_LOAD": "0"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_drawing_the_overview_does_not_import_the_chart_libraries() -> None:
    """The Overview's first run, drawn (its journey picture, a components-v2 element whose data
    Streamlit checks for data frames), leaves pandas, pyarrow and Altair unimported: the first
    student does not wait ~0.4 s for them."""
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        f"at = AppTest.from_file({str(ROOT / 'app.py')!r}, default_timeout=120).run(); "
        "assert not at.exception, [e.value for e in at.exception]; "
        "assert len(at.get('bidi_component')) or at.markdown, 'nothing drawn'; "
        "bad = sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('altair', 'pandas', 'pyarrow')}); "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    env = {**os.environ, "TOKEN_JOURNEY_BACKGROUND_LOAD": "0", "TOKEN_JOURNEY_DEVICE": "cpu"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
