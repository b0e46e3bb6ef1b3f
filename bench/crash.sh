#!/usr/bin/env bash
# Crash and load: N Bash items (each appends its id to a file of the workspace) on three
# `spine worker` processes, two of which are SIGKILLed at random while they run items (after a
# third and after half of the items); a replacement starts after each kill. Prints, per backend
# (SQLite, NATS JetStream): items, kills, items lost (no terminal report), items completed twice
# (more than one terminal report), items finished on a later attempt, side effects repeated, and
# the wall time. Fails when an item is lost or completed twice.
#
#   bench/crash.sh [ITEMS]      # default 1000; CI runs the same test with 60
#
# Starts NATS through scripts/services.sh (and leaves it running if it was already up).
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS="${1:-1000}"

started_nats=0
if ! scripts/services.sh status; then
    scripts/services.sh start
    started_nats=1
fi
cleanup() {
    if [ "$started_nats" = 1 ]; then scripts/services.sh stop; fi
}
trap cleanup EXIT

OUT="$(mktemp)"
status=0
SPINE_CRASH_ITEMS="$ITEMS" cargo test -q -p spine-llm-cli --test suite \
    killing_two_workers_mid_run_loses_no_item_and_completes_none_twice -- --nocapture --test-threads=1 \
    >"$OUT" 2>&1 || status=$?
grep -oE 'crash test.*' "$OUT" || true
if [ "$status" != 0 ]; then grep -A1 'panicked' "$OUT" || tail -40 "$OUT"; fi
rm -f "$OUT"
exit "$status"
