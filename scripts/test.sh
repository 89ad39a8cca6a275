#!/usr/bin/env bash
# Install everything the tests need (Python deps in .venv, Debian Chromium, CJK fonts, and the
# servers the class tests run for real: redis-server, haproxy)
# and run the whole suite: unit, AppTest and real-browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# node + npm: the accessibility test injects axe-core, pinned in tests/e2e/axe/package-lock.json.
if ! command -v chromium >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "Noto Sans CJK" || ! fc-list 2>/dev/null | grep -qi "Noto Color Emoji" \
   || ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium redis-server haproxy fonts-noto-cjk fonts-noto-color-emoji
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
  fi
fi
# axe-core from the npm registry, exactly the locked version (tests/e2e/test_axe.py reads it from here)
npm ci --prefix tests/e2e/axe --no-audit --no-fund --loglevel=error

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt

# One worker per core (at most 4): the suite is CPU-bound and a 2-core CI box otherwise idles
# one core. --dist loadfile keeps each file on one worker, so a file's module and session
# fixtures (a served app, a loaded model) start once per worker, not once per test.
.venv/bin/python -m pytest -n auto --maxprocesses 4 --dist loadfile "$@"
