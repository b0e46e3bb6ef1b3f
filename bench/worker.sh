#!/usr/bin/env bash
# Worker benchmarks, release build: calculator assignments per second end to end (submit →
# execution_complete) with concurrency 1 and 4 on SQLite and NATS JetStream, p50/p99 latency
# of paced submissions, the raw backend (enqueue + lease + ack of empty items) in the same run
# and the ratio; then the memory of in-flight agent_run assignments on the scripted model.
#
#   bench/worker.sh [ITEMS] [INFLIGHT]      # defaults: 5000 items, 200 in-flight agent runs
#
# Starts NATS through scripts/services.sh (and leaves it running if it was already up).
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS="${1:-5000}"
INFLIGHT="${2:-200}"
NATS_URL="${SPINE_TEST_NATS_URL:-nats://127.0.0.1:4222}"

started_nats=0
if ! scripts/services.sh status; then
    scripts/services.sh start
    started_nats=1
fi
cleanup() {
    rm -rf "$SCRATCH"
    if [ "$started_nats" = 1 ]; then scripts/services.sh stop; fi
}
SCRATCH="$(mktemp -d)"
trap cleanup EXIT

cargo build --release -q -p spine-llm-worker --example worker_bench
# The target directory as cargo sees it (CARGO_TARGET_DIR, or a `.cargo/config.toml` build.target-dir).
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
BIN="${TARGET_DIR:-target}/release/examples/worker_bench"

echo "== worker throughput and latency ($ITEMS calculator assignments per run, $(nproc) cores)"
for backend in "sqlite:$SCRATCH" "$NATS_URL"; do
    for concurrency in 1 4; do
        "$BIN" throughput "$backend" "$ITEMS" "$concurrency"
    done
done
echo "== agent_run memory"
"$BIN" memory "$INFLIGHT"
