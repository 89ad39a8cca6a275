"""Gzip Streamlit's static files once, at the highest level, for the launcher's HAProxy.

HAProxy's own gzip (libslz, the only one Debian's and the official images' HAProxy have) is fast
and has no levels: it sends Streamlit's JavaScript 40-130 % larger than ``gzip -9`` does (the
protobuf bundle 228 KB instead of 99 KB). These files never change while a server runs (their
names carry a content hash), so ``scripts/serve.sh`` compresses each one here as it starts and
HAProxy serves the result (``deploy/static_gz.lua``); what is not listed still goes through
libslz.

    python scripts/precompress_static.py OUT_DIR

writes ``OUT_DIR/<hash>.gz`` files and ``OUT_DIR/manifest.tsv``: one line per file,
``<URL path> TAB <gzip file> TAB <content type>``.
"""

from __future__ import annotations

import gzip
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

# What Streamlit itself sends as Content-Type for these suffixes (fonts and images are already
# compressed: gzip would only cost time).
CONTENT_TYPES = {
    ".js": "application/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
URL_PREFIX = "/static/"  # Streamlit serves <package>/static/static/<path> at /static/<path>
MIN_SAVING = 0.9  # keep a compressed copy only where it is at most 90 % of the file


@dataclass(frozen=True)
class Precompressed:
    url_path: str
    gzip_file: Path
    content_type: str
    raw_bytes: int
    gzip_bytes: int


def streamlit_static_dir() -> Path:
    """The folder Streamlit serves at ``/static/`` (hashed bundles, fonts, images)."""
    import streamlit

    return Path(streamlit.__file__).resolve().parent / "static" / "static"


def precompress(static_dir: Path, out_dir: Path) -> list[Precompressed]:
    """Gzip (level 9) every compressible file under ``static_dir`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    done: list[Precompressed] = []
    for path in sorted(p for p in static_dir.rglob("*") if p.is_file()):
        content_type = CONTENT_TYPES.get(path.suffix.lower())
        if content_type is None:
            continue
        raw = path.read_bytes()
        packed = gzip.compress(raw, compresslevel=9, mtime=0)
        if len(packed) > MIN_SAVING * len(raw):
            continue
        url_path = URL_PREFIX + path.relative_to(static_dir).as_posix()
        # a flat, safe name: URL paths may hold characters a manifest line or a shell would mind
        target = out_dir / (hashlib.sha256(url_path.encode()).hexdigest()[:32] + ".gz")
        target.write_bytes(packed)
        done.append(Precompressed(url_path, target, content_type, len(raw), len(packed)))
    return done


def write_manifest(entries: list[Precompressed], manifest: Path) -> None:
    lines = [f"{e.url_path}\t{e.gzip_file}\t{e.content_type}\n" for e in entries
             if not any(c in e.url_path for c in "\t\n\r ")]
    manifest.write_text("".join(lines), encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(argv[1])
    entries = precompress(streamlit_static_dir(), out_dir)
    write_manifest(entries, out_dir / "manifest.tsv")
    raw, packed = sum(e.raw_bytes for e in entries), sum(e.gzip_bytes for e in entries)
    print(f"{len(entries)} static files gzipped: {raw:,} -> {packed:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
