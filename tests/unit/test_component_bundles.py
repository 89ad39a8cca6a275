"""The components' committed bundles were built from the committed sources.

``scripts/build_components.sh`` (npm ci && npm run build) writes build/SOURCE_HASH: the sha256
of the sources it read (build.mjs: "path\\0content\\0" for each file, sorted by path). This
test recomputes it from the files in the repository, so editing a source without
rebuilding (or committing a stale build/) fails here. git keeps no mtimes, hence a hash.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "ui" / "components" / "frontend"
BUILD = FRONTEND / "build"


def _sources() -> list[str]:
    files = ["build.mjs", "package.json", "package-lock.json"]
    files += [p.relative_to(FRONTEND).as_posix() for p in (FRONTEND / "src").rglob("*") if p.is_file()]
    return sorted(files)


def source_hash() -> str:
    digest = hashlib.sha256()
    for path in _sources():
        digest.update(path.encode("utf-8") + b"\0")
        digest.update((FRONTEND / path).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_bundle_is_built_from_the_current_sources() -> None:
    recorded = (BUILD / "SOURCE_HASH").read_text(encoding="utf-8").strip()
    assert recorded == source_hash(), (
        "ui/components/frontend/build/ is older than its sources: run scripts/build_components.sh "
        "and commit build/")


def test_the_hash_sees_every_source_file() -> None:
    names = _sources()
    assert "src/index.ts" in names and "src/journey.css" in names and "package-lock.json" in names
    assert "src/space3d.ts" in names and "src/space3d.css" in names


@pytest.mark.parametrize("name", ["journey", "space3d", "sampling_lab"])
def test_bundle_loads_nothing_from_the_network_and_writes_no_markup(name: str) -> None:
    js = (BUILD / f"{name}.js").read_text(encoding="utf-8")
    css = (BUILD / f"{name}.css").read_text(encoding="utf-8")
    assert js.startswith("//") and "\n" in js  # Streamlit reads a one-line string as a file path
    assert "export default" in js or re.search(r"export\s*\{[^}]*as default", js)
    for text in (js, css):
        urls = [u for u in re.findall(r"https?://[^\s\"'`)]+", text) if u != "http://www.w3.org/2000/svg"]
        assert urls == [], urls  # no CDN, no fetch
        assert "@import" not in text
    for unsafe in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert unsafe not in js, unsafe
    src = (FRONTEND / "src").rglob("*.ts")
    for path in src:
        assert "innerHTML" not in path.read_text(encoding="utf-8"), path


def test_node_modules_is_not_committed() -> None:
    gitignore = (FRONTEND.parents[2] / ".gitignore").read_text(encoding="utf-8")
    assert "node_modules/" in gitignore.split()
