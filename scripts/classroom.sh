#!/usr/bin/env bash
# Start Token Journey for a classroom with the hardened profile (one server process).
#
#   bash scripts/classroom.sh [--port 8501] [--address 0.0.0.0] [--print-flags]
#
# Environment:
#   TOKEN_JOURNEY_ALLOWED_HOSTS  host names / IP addresses students type in their browser,
#                                separated by commas or spaces (e.g. "192.168.1.20,class.local").
#                                Connections naming any other host are refused (DNS rebinding).
#                                Default: localhost, 127.0.0.1, this machine's host name(s) and
#                                every IP address it has. Behind a reverse proxy: the proxy's name.
#
# The profile (on top of .streamlit/config.toml, which keeps developer-friendly defaults):
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
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=8501
ADDRESS="0.0.0.0"
PRINT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --address) ADDRESS="$2"; shift 2 ;;
    --print-flags) PRINT=1; shift ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
case "$PORT" in ''|*[!0-9]*) echo "--port needs a number" >&2; exit 2 ;; esac

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
echo "Token Journey (classroom profile) on port $PORT; students open http://<one of:${seen% }>:$PORT" >&2
# scripts/run_app.py = `streamlit run app.py` that starts loading both models before the first visit
exec "${PYTHON:-.venv/bin/python}" scripts/run_app.py "${FLAGS[@]}"
