#!/usr/bin/env bash
# Serve Token Journey on every core: N Streamlit processes behind HAProxy on one address.
#
#   scripts/serve.sh [--replicas N] [--address 0.0.0.0] [--port 8501] [--base-port 8600]
#
# N defaults to the number of CPU cores. Each replica is a separate process with its own
# copy of both models (measured ~520-570 MB resident each with every page used); HAProxy (Debian package
# `haproxy`) spreads new students over the replicas (least connections), keeps each one on
# its replica with a cookie (uploads and reconnects must reach the process that holds the
# session), passes the websocket upgrade through and takes a replica out of rotation when
# /_stcore/health stops answering, and gzips the static files Streamlit sends uncompressed
# (once, at level 9, as it starts); the replicas compress their websocket (every page's first
# visit under 2 MB: docs/performance.md). Every replica runs
# the classroom profile of scripts/classroom.sh (TOKEN_JOURNEY_ALLOWED_HOSTS applies: list the
# address students type), which starts this script by default where HAProxy is installed. Each
# replica is `streamlit run app.py` with those flags: it loads both models as it starts.
# A replica or HAProxy that dies is restarted (scripts/supervise.py); Ctrl-C (or SIGTERM) stops
# everything it started. It prints `Teacher link: <url>` and `Student link: <url>` and the
# student link's QR code (class mode: docs/class_mode.md); --link-host prints only the host those
# links name.
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS="$(nproc 2>/dev/null || echo 2)"
LINK_HOST_ONLY=0
ADDRESS="0.0.0.0"
PORT=8501
BASE_PORT=8600
while [ $# -gt 0 ]; do
  case "$1" in
    --replicas) REPLICAS="$2"; shift 2 ;;
    --address) ADDRESS="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    --base-port) BASE_PORT="$2"; shift 2 ;;
    --link-host) LINK_HOST_ONLY=1; shift ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
# The host the class links name: the bound address, else the first address students are allowed
# to type (TOKEN_JOURNEY_ALLOWED_HOSTS), else this machine's first IP address.
link_host() {
  local host="$ADDRESS"
  if [ "$host" = "0.0.0.0" ] || [ "$host" = "::" ]; then
    local allowed="${TOKEN_JOURNEY_ALLOWED_HOSTS:-}"
    host="$(printf '%s\n' ${allowed//,/ } | head -n 1)"
    [ -n "$host" ] || host="$(hostname -I 2>/dev/null | awk '{print $1}')"
    [ -n "$host" ] || host="localhost"
  fi
  printf '%s\n' "$host"
}
if [ "$LINK_HOST_ONLY" -eq 1 ]; then link_host; exit 0; fi
case "$REPLICAS" in ''|*[!0-9]*) echo "--replicas needs a number" >&2; exit 2 ;; esac
[ "$REPLICAS" -ge 1 ] || { echo "--replicas must be at least 1" >&2; exit 2; }
command -v haproxy >/dev/null 2>&1 || { echo "HAProxy is not installed: sudo apt-get install haproxy (or use scripts/classroom.sh: one process)" >&2; exit 1; }

PY="${PYTHON:-.venv/bin/python}"
RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/token-journey-serve.XXXXXX")"
# Class mode (docs/class_mode.md): one key for every replica (drawn here unless the teacher set
# one) and one class store in the run folder, so students on any replica share the class.
TOKEN_JOURNEY_TEACHER_KEY="${TOKEN_JOURNEY_TEACHER_KEY:-$("$PY" -m serving.classroom.links --new-key)}"
TOKEN_JOURNEY_CLASS_DIR="${TOKEN_JOURNEY_CLASS_DIR:-$RUN_DIR}"
export TOKEN_JOURNEY_TEACHER_KEY TOKEN_JOURNEY_CLASS_DIR

SERVERS=""
PORTS=""
for i in $(seq 0 $((REPLICAS - 1))); do
  port=$((BASE_PORT + i))
  PORTS="${PORTS:+$PORTS,}$port"
  SERVERS="${SERVERS}    server r$i 127.0.0.1:$port check cookie r$i
"
done

# Static files gzipped once at level 9 (scripts/precompress_static.py) and served by HAProxy's Lua
# (deploy/static_gz.lua): its own gzip, libslz, has no levels and sends them 40-130 % larger.
# Without Lua, or if that step fails, libslz compresses them (the "compression" lines below).
GZ_GLOBAL=""
GZ_FRONTEND=""
case "$(haproxy -vv 2>/dev/null || true)" in
  *USE_LUA=1*)
    if "$PY" scripts/precompress_static.py "$RUN_DIR/static-gz" >"$RUN_DIR/precompress.log" 2>&1 \
        && [ -s "$RUN_DIR/static-gz/manifest.tsv" ]; then
      GZ_GLOBAL="    setenv TJ_STATIC_GZ_MANIFEST \"$RUN_DIR/static-gz/manifest.tsv\"
    lua-load \"$PWD/deploy/static_gz.lua\""
      GZ_FRONTEND="    http-request use-service lua.static_gz if { path_beg /static/ } { req.hdr(accept-encoding) -m sub gzip } { lua.static_gz_has -m bool }"
    fi ;;
esac

cat >"$RUN_DIR/haproxy.cfg" <<CFG
global
    maxconn 4096
${GZ_GLOBAL}

defaults
    mode http
    option http-server-close
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # a student's websocket stays open for the whole lesson
    timeout tunnel 2h
    timeout http-keep-alive 10s
    # a student whose replica has died is sent to a healthy one at once (the cookie names the
    # dead one): retried there instead of failing
    option redispatch
    retries 2

frontend token_journey
    bind ${ADDRESS}:${PORT}
    default_backend replicas
    # Streamlit serves its static files uncompressed on purpose and leaves compression to a
    # proxy: gzip them here (libslz), or from the level-9 copies (the use-service line), which
    # win: docs/performance.md. The websocket is a tunnel: it is never touched.
    compression algo gzip
    compression type text/html text/css text/plain text/javascript application/javascript application/json image/svg+xml application/wasm font/ttf
${GZ_FRONTEND}

backend replicas
    balance leastconn
    cookie TJ_REPLICA insert indirect nocache attr "HttpOnly" attr "SameSite=Lax"
    option httpchk GET /_stcore/health
    http-check expect status 200
    # a refused connection marks a replica down at once (it died); health checks bring it back
    default-server inter 2s fall 3 rise 1 observe layer4 error-limit 1 on-error mark-down
${SERVERS}
CFG

haproxy -c -q -f "$RUN_DIR/haproxy.cfg"
echo "Token Journey: $REPLICAS replica(s) behind HAProxy on http://${ADDRESS}:${PORT} (logs in $RUN_DIR)"
"$PY" -m serving.classroom.links --url "http://$(link_host):${PORT}"
# The supervisor starts the replicas, HAProxy once one replica is healthy, restarts whatever
# dies, and stops everything on Ctrl-C / SIGTERM (scripts/supervise.py: exit codes there).
TOKEN_JOURNEY_THREADS="${TOKEN_JOURNEY_THREADS:-1}" exec "$PY" scripts/supervise.py \
  --haproxy-cfg "$RUN_DIR/haproxy.cfg" --run-dir "$RUN_DIR" --ports "$PORTS" --python "$PY" \
  -- --server.enableWebsocketCompression true
