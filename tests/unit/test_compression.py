"""Static files reach students compressed: Streamlit serves /static uncompressed on purpose (it
leaves compression to a proxy), so every proxy configuration this repository ships gzips them.
The bytes a first visit transfers are measured by ``bench/first_visit_bytes.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a first visit downloads from /static and the component routes: JavaScript, CSS, the page.
MUST_COMPRESS = {"text/html", "text/css", "text/javascript", "application/javascript", "application/json"}


def _haproxy_types(text: str) -> set[str]:
    assert re.search(r"^\s*compression algo gzip\s*$", text, re.M)
    found = re.findall(r"^\s*compression type (.+)$", text, re.M)
    assert len(found) == 1, found
    return set(found[0].split())


@pytest.mark.parametrize("path", ["deploy/haproxy.cfg", "scripts/serve.sh"])
def test_every_haproxy_configuration_gzips_the_static_files(path: str) -> None:
    types = _haproxy_types((ROOT / path).read_text(encoding="utf-8"))
    assert MUST_COMPRESS <= types
    # already compressed formats would only cost CPU
    assert not types & {"font/woff2", "image/png", "image/jpeg", "application/octet-stream"}


def test_both_haproxy_configurations_compress_the_same_types() -> None:
    assert _haproxy_types((ROOT / "deploy/haproxy.cfg").read_text(encoding="utf-8")) == \
        _haproxy_types((ROOT / "scripts/serve.sh").read_text(encoding="utf-8"))


def test_the_documented_caddy_and_nginx_recipes_compress() -> None:
    text = (ROOT / "deploy" / "README.md").read_text(encoding="utf-8")
    caddy = text[text.index("```caddy"):]
    assert "encode zstd gzip" in caddy[:caddy.index("\n```\n")]
    nginx = text[text.index("```nginx"):]
    nginx = nginx[:nginx.index("\n```\n")]
    assert "gzip on;" in nginx and "text/javascript" in nginx and "gzip_proxied any;" in nginx
