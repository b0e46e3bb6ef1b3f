#!/usr/bin/env bash
# Keystroke-to-request latency and idle CPU of an open interactive session (`spine` in tmux,
# against a local fake Anthropic server), with a minimal Python prompt loop in the same
# terminal as the baseline (see bench/chat_latency.py).
#
#   bench/chat.sh [PROMPTS] [IDLE_SECONDS]      # default 20 prompts, 10 s idle
#
# Uses the release binary (built when missing; honours CARGO_TARGET_DIR). Needs tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
BIN="$TARGET/release/spine"
[ -x "$BIN" ] || cargo build -q --release -p spine-llm-cli
exec /usr/bin/python3 bench/chat_latency.py "$BIN" "${1:-20}" "${2:-10}"
