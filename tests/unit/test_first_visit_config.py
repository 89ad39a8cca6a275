"""What keeps a student's first visit light (docs/performance.md, "First visit: bytes transferred").

- ``.streamlit/config.toml`` names the system's fonts: Streamlit maps the bare keywords
  "sans-serif" / "monospace" to its Source Sans / Source Code Pro webfonts (0.1-0.4 MB).
- ``scripts/serve.sh`` gzips Streamlit's static files once at level 9 and HAProxy's Lua serves
  them (``deploy/static_gz.lua``); checked end to end with the real HAProxy where it is
  installed, a stand-in for the Streamlit replica behind it.
- HAProxy's own gzip still covers every compressible type (the page, what Lua does not list).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import precompress_static  # noqa: E402

# Streamlit's own names for its webfonts: a key equal to one of these means Source Sans/Code Pro
STREAMLIT_FONT_KEYWORDS = {"sans-serif", "serif", "monospace"}


def _theme_sections() -> dict[str, dict]:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    theme = config["theme"]
    sections = {"theme": theme}
    sections.update({f"theme.{k}": v for k, v in theme.items() if isinstance(v, dict)})
    return sections


def _families(value: str) -> list[str]:
    return [f.strip().strip("'\"") for f in value.split(",") if f.strip()]


@pytest.mark.parametrize("key", ["font", "codeFont", "headingFont"])
def test_config_names_system_fonts_not_streamlits_webfonts(key: str) -> None:
    theme = _theme_sections()["theme"]
    assert key in theme or key == "headingFont", f"[theme] {key} is not set: Streamlit's webfont is used"
    for name, section in _theme_sections().items():
        if key not in section:
            continue  # headingFont falls back to font; light/dark inherit [theme]
        families = _families(section[key])
        assert section[key].strip().lower().replace(" ", "-") not in STREAMLIT_FONT_KEYWORDS, (name, key)
        assert len(families) >= 3, (name, key, families)  # a stack, not one font a system may lack
        assert not [f for f in families if f.lower().startswith("source ")], (name, key)
        assert families[-1] in ("sans-serif", "monospace"), (name, key)  # a generic family ends it


def test_body_font_covers_chinese_and_emoji_before_streamlits_fallback() -> None:
    # Streamlit appends "Source Sans" to the list: a character no listed font has would fetch it
    families = {f.lower() for f in _families(_theme_sections()["theme"]["font"])}
    assert {"microsoft yahei", "pingfang sc", "noto sans cjk sc"} <= families
    assert {"segoe ui emoji", "apple color emoji", "noto color emoji"} <= families


def test_precompress_gzips_text_files_at_level_9_and_skips_fonts(tmp_path: Path) -> None:
    static = tmp_path / "static"
    (static / "js").mkdir(parents=True)
    (static / "media").mkdir()
    script = ("function f(x) { return x * 2; }\n" * 400).encode()
    (static / "js" / "main.abc123.js").write_bytes(script)
    (static / "js" / "tiny.js").write_bytes(b"x")  # gzip would make it larger: left to HAProxy
    (static / "media" / "font.woff2").write_bytes(os.urandom(4000))
    out = tmp_path / "gz"
    entries = precompress_static.precompress(static, out)
    precompress_static.write_manifest(entries, out / "manifest.tsv")
    assert [e.url_path for e in entries] == ["/static/js/main.abc123.js"]
    entry = entries[0]
    packed = entry.gzip_file.read_bytes()
    assert gzip.decompress(packed) == script and packed == gzip.compress(script, 9, mtime=0)
    assert entry.content_type == "application/javascript"
    line = (out / "manifest.tsv").read_text(encoding="utf-8")
    assert line == f"/static/js/main.abc123.js\t{entry.gzip_file}\tapplication/javascript\n"


def test_streamlits_own_bundles_are_found() -> None:
    static = precompress_static.streamlit_static_dir()
    assert list(static.glob("js/index.*.js")), static  # the folder Streamlit serves at /static/


def _compression_types(text: str) -> set[str]:
    lines = re.findall(r"^\s*compression type (.+)$", text, re.MULTILINE)
    assert len(lines) == 1, lines
    return set(lines[0].split())


@pytest.mark.parametrize("name", ["deploy/haproxy.cfg", "scripts/serve.sh"])
def test_haproxy_gzips_every_compressible_type_and_no_compressed_one(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "compression algo gzip" in text
    types = _compression_types(text)
    assert {"text/html", "text/css", "application/javascript", "text/javascript", "application/json",
            "image/svg+xml"} <= types
    assert not types & {"font/woff2", "font/woff", "image/png", "image/gif"}  # already compressed
    assert set(precompress_static.CONTENT_TYPES.values()) <= types  # the same files, without Lua


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Stands in for `python -m streamlit run app.py ...`: answers every path with "replica"; any
# other use of the interpreter (scripts/precompress_static.py, the class links, the supervisor)
# runs the real one.
FAKE_PYTHON = """#!/bin/bash
if [ "$1" = "-m" ] && [ "$2" = "streamlit" ]; then
  prev=""; port=""
  for a in "$@"; do [ "$prev" = "--server.port" ] && port="$a"; prev="$a"; done
  exec "{python}" -c '
import http.server, sys
class Replica(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"replica"
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Replica).serve_forever()
' "$port"
fi
exec "{python}" "$@"
"""


def _get(url: str, gzip_ok: bool) -> tuple[dict[str, str], bytes]:
    headers = {"Accept-Encoding": "gzip, deflate"} if gzip_ok else {"Accept-Encoding": "identity"}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as answer:
        return {k.lower(): v for k, v in answer.headers.items()}, answer.read()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("haproxy") is None, reason="haproxy is not installed")
def test_the_launcher_serves_streamlits_static_files_gzipped_at_level_9(tmp_path: Path) -> None:
    if "USE_LUA=1" not in subprocess.run(["haproxy", "-vv"], capture_output=True, text=True).stdout:
        pytest.skip("this HAProxy has no Lua: serve.sh leaves compression to libslz")
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON.replace("{python}", sys.executable), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    port, base_port = _free_port(), _free_port()
    env = {**os.environ, "PYTHON": str(fake), "TMPDIR": str(tmp_path), "TOKEN_JOURNEY_ALLOWED_HOSTS": "127.0.0.1"}
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(["bash", "scripts/serve.sh", "--replicas", "1", "--address", "127.0.0.1",
                             "--port", str(port), "--base-port", str(base_port)],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if _get(f"{base}/_stcore/health", False)[1] == b"replica":
                    break
            except (OSError, urllib.error.HTTPError):
                pass
            assert time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.5)
        static = precompress_static.streamlit_static_dir()
        bundle = sorted(static.glob("js/index.*.js"))[0]
        raw = bundle.read_bytes()
        url = f"{base}/static/js/{bundle.name}"
        headers, body = _get(url, True)
        assert headers.get("content-encoding") == "gzip", headers
        assert headers["content-type"] == "application/javascript"
        assert "immutable" in headers["cache-control"] and "accept-encoding" in headers["vary"].lower()
        assert gzip.decompress(body) == raw
        assert len(body) == len(gzip.compress(raw, 9, mtime=0))  # level 9, not libslz's
        # a browser that takes no gzip, and a path not in the manifest, reach the replica
        assert _get(url, False)[1] == b"replica"
        assert _get(f"{base}/static/js/not-a-bundle.js", True)[1] == b"replica"
        assert _get(f"{base}/static/js/{bundle.name}?v=1", True)[0].get("content-encoding") == "gzip"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        log.close()
