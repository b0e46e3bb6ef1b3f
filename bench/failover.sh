#!/usr/bin/env bash
# Failover soak: the scenario of crates/spine-cli/tests/suite/failover.rs at scale. A 3-node
# JetStream cluster (spine_testkit::nats_cluster, running the nats-server scripts/services.sh
# installs) with an R3 mailbox; 3 release `spine worker` processes (--concurrency 4) run ITEMS Bash items (each appends its
# id to an effects file) while the items stream's leader is killed (-9), then a second node
# (quorum lost for 3 s), both are restarted, and a worker is stopped (SIGSTOP) for 3 lease
# times (the simulated partition) and resumed. Prints items, kills, lost, completed twice,
# stuck, and the time to resume after the leader died (kill -> first terminal report of an
# item run after the kill, as a report follower saw it; ~1 s resolution: the follower
# reopens a stalled stream after 1 s of silence).
#
#   bench/failover.sh [ITEMS]      # default 5000
#
# The workers are the release `spine` binary; the driver is the test suite's binary (debug:
# it only submits, watches and reads reports). Exit status: the test's.
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS="${1:-5000}"
SPINE_TEST_NATS_SERVER="$(scripts/services.sh bin)"
export SPINE_TEST_NATS_SERVER

cargo build --release -q -p spine-llm-cli --bin spine
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
BIN="${TARGET_DIR:-target}/release/spine"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

echo "== failover soak: $ITEMS items, 3 nodes, R3, 3 release workers x 4, $(nproc) cores"
start=$(date +%s)
status=0
SPINE_FAILOVER_ITEMS="$ITEMS" SPINE_FAILOVER_BIN="$BIN" RUST_BACKTRACE=0 \
    cargo test -q -p spine-llm-cli --test suite failover:: -- --nocapture >"$LOG" 2>&1 || status=$?
grep '^failover:' "$LOG" | cut -c1-2000 || true
line="$(grep '^failover: items ' "$LOG" || true)"
if [ -n "$line" ]; then
    field() { sed -n "s/.*$1 \([^,]*\),.*/\1/p" <<<"$line"; }
    echo "-- figures"
    printf '%-36s %s\n' "items" "$ITEMS" \
        "kills" "2 nodes (stream leader, then a 2nd: quorum lost) + 1 worker partitioned" \
        "lost" "$(field lost)" \
        "completed twice" "$(field 'completed twice')" \
        "stuck" "$(field stuck)" \
        "dead-lettered" "$(field dead-lettered)" \
        "time to resume after the leader died" "$(sed -n 's/.*resume after leader kill \([0-9]* ms\|n\/a\).*/\1/p' <<<"$line")" \
        "time to resume after quorum restored" "$(sed -n 's/.*resume after quorum restored \([0-9]* ms\|n\/a\).*/\1/p' <<<"$line")" \
        "wall time" "$(( $(date +%s) - start )) s"
fi
if [ "$status" != 0 ]; then
    echo "-- the test failed (status $status):"
    grep -v '^\s*at \|^ *[0-9]*: ' "$LOG" | tail -60
fi
exit "$status"
