#!/usr/bin/env bash
# Start Token Journey for a classroom: the hardened profile on every core of this machine.
#
#   bash scripts/classroom.sh [--port 8501] [--address 0.0.0.0] [--replicas N] [--print-flags]
#
# Every core: N Streamlit processes (default: one per core) behind HAProxy on one address
# (scripts/serve.sh: compressed, supervised). Where HAProxy is not installed, one process serves
# (one line on stderr says how to install HAProxy). Each process is `streamlit run app.py`, the README's own
# command, with the flags below: it starts loading both models before the first student connects.
#
# Environment:
#   TOKEN_JOURNEY_ALLOWED_HOSTS  host names / IP addresses students type in their browser,
#                                separated by commas or spaces (e.g. "192.168.1.20,class.local").
#                                Connections naming any other host are refused (DNS rebinding).
#                                Default: localhost, 127.0.0.1, this machine's host name(s) and
#                                every IP address it has. Behind a reverse proxy: the proxy's name.
#
# The profile (on top of .streamlit/config.toml):
#   client.showErrorDetails=none      no tracebacks or server paths in students' browsers
#                                     (the app's own translated messages still show)
#   client.toolbarMode=viewer         no developer menu items (rerun, clear cache, settings)
#   server.fileWatcherType=none       no file watching: editing files does not restart sessions
#   server.runOnSave=false
#   server.enableXsrfProtection=true  uploads need the session's XSRF token
#   server.enableCORS=true
#   server.maxUploadSize=2            MB: the Tokenization page's own limit
#   server.allowedHosts=...           from TOKEN_JOURNEY_ALLOWED_HOSTS (above)
#   server.headless=true, browser.gatherUsageStats=false
# --print-flags prints the flags, one per line, without starting anything (for other launchers).
# The settings that make a server fast (file watching off, no run on save) are the defaults of
# .streamlit/config.toml, so the README's `streamlit run app.py` is just as fast.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=8501
ADDRESS="0.0.0.0"
PRINT=0
REPLICAS="$(nproc 2>/dev/null || echo 1)"
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --address) ADDRESS="$2"; shift 2 ;;
    --replicas) REPLICAS="$2"; shift 2 ;;
    --print-flags) PRINT=1; shift ;;
    -h|--help) sed -n 2,33p "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
case "$PORT" in ''|*[!0-9]*) echo "--port needs a number" >&2; exit 2 ;; esac
case "$REPLICAS" in ''|*[!0-9]*) echo "--replicas needs a number" >&2; exit 2 ;; esac
[ "$REPLICAS" -ge 1 ] || { echo "--replicas must be at least 1" >&2; exit 2; }

hosts="${TOKEN_JOURNEY_ALLOWED_HOSTS:-}"
if [ -z "${hosts//[, ]/}" ]; then
  hosts="localhost 127.0.0.1 ::1 $(hostname 2>/dev/null || true) $(hostname -f 2>/dev/null || true)"
  hosts="$hosts $(hostname -I 2>/dev/null || true)"
  [ -n "$(hostname 2>/dev/null || true)" ] && hosts="$hosts $(hostname).local"
fi

FLAGS=(
  --server.address "$ADDRESS"
  --server.port "$PORT"
  --server.headless true
  --browser.gatherUsageStats false
  --client.showErrorDetails none
  --client.toolbarMode viewer
  --server.fileWatcherType none
  --server.runOnSave false
  --server.enableXsrfProtection true
  --server.enableCORS true
  --server.maxUploadSize 2
)
seen=" "
for host in ${hosts//,/ }; do
  case "$seen" in *" $host "*) continue ;; esac
  seen="$seen$host "
  FLAGS+=(--server.allowedHosts "$host")
done

if [ "$PRINT" -eq 1 ]; then
  printf '%s\n' "${FLAGS[@]}"
  exit 0
fi
PY="${PYTHON:-.venv/bin/python}"
# Class mode (docs/class_mode.md): one teacher key per start unless the teacher set one; every
# replica gets the same key, so they agree on the class code.
TOKEN_JOURNEY_TEACHER_KEY="${TOKEN_JOURNEY_TEACHER_KEY:-$("$PY" -m serving.classroom.links --new-key)}"
export TOKEN_JOURNEY_TEACHER_KEY
echo "Token Journey (classroom profile) on port $PORT; students open http://<one of:${seen% }>:$PORT" >&2
# Behind HAProxy even on one core: it compresses what students download and the supervisor
# restarts a replica that dies (scripts/serve.sh).
if command -v haproxy >/dev/null 2>&1; then
  exec bash scripts/serve.sh --replicas "$REPLICAS" --address "$ADDRESS" --port "$PORT"
fi
if [ "$REPLICAS" -gt 1 ]; then
  echo "HAProxy is not installed: serving with one process, on 1 of $REPLICAS cores. To use every core: sudo apt-get install haproxy" >&2
else
  echo "HAProxy is not installed: serving with one process, uncompressed. To compress and supervise: sudo apt-get install haproxy" >&2
fi
# One process: the class store is a private folder of that process (TOKEN_JOURNEY_CLASS_DIR empty).
"$PY" -m serving.classroom.links --url "http://$(bash scripts/serve.sh --link-host --address "$ADDRESS"):$PORT"
exec "$PY" -m streamlit run app.py "${FLAGS[@]}"
