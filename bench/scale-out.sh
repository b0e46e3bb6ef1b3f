#!/usr/bin/env bash
# Scale-out: throughput of 1, 2, 4, 8 `spine worker` processes (release, --concurrency 4 each)
# on one 3-node JetStream cluster with an R3 mailbox, against a raw floor measured in the same
# run: async-nats alone doing per item the publishes and acks the mailbox does (a claim
# record, two progress reports, a terminal record and report, the item's ack; see
# crates/spine-worker/examples/scale_out.rs) with the same number of items in flight.
#
#   bench/scale-out.sh [ITEMS] [WORKER_COUNTS]      # defaults: 2000, "1 2 4 8"
#
# Each run: ITEMS calculator assignments submitted first, then the workers start and the clock
# runs until every item has its terminal report. Prints items/s, the ratio to the floor and the
# per-item overhead in µs (1/rate - 1/floor rate: wall time per item at that parallelism).
# Runs the nats-server scripts/services.sh installs (installing it when missing); the cluster
# lives in a temp directory and is killed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS="${1:-2000}"
COUNTS="${2:-1 2 4 8}"
CONCURRENCY=4
NATS_SERVER="$(scripts/services.sh bin)"

cargo build --release -q -p spine-llm-cli --bin spine
cargo build --release -q -p spine-llm-worker --example scale_out
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
SPINE="${TARGET_DIR:-target}/release/spine"
HELPER="${TARGET_DIR:-target}/release/examples/scale_out"

SCRATCH="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$SCRATCH"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CLIENT=() ROUTE=() HTTP=()
for i in 0 1 2; do CLIENT+=("$(free_port)"); ROUTE+=("$(free_port)"); HTTP+=("$(free_port)"); done
ROUTES="$(printf '"nats-route://127.0.0.1:%s", ' "${ROUTE[@]}")"
for i in 0 1 2; do
    cat >"$SCRATCH/n$i.conf" <<CONF
server_name: n$i
listen: "127.0.0.1:${CLIENT[$i]}"
http: "127.0.0.1:${HTTP[$i]}"
jetstream { store_dir: "$SCRATCH/n$i", max_memory_store: 256MB, max_file_store: 4GB }
cluster { name: "spine-scale", listen: "127.0.0.1:${ROUTE[$i]}", routes: [${ROUTES%, }] }
CONF
    "$NATS_SERVER" -c "$SCRATCH/n$i.conf" >"$SCRATCH/n$i.log" 2>&1 &
    PIDS+=("$!")
done
# Ready once every node reports the same meta leader (as spine_testkit::nats_cluster waits).
for _ in $(seq 1 600); do
    leaders="$(for p in "${HTTP[@]}"; do python3 - "$p" <<'PY' 2>/dev/null || echo none
import json, sys, urllib.request
print(json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/jsz"))["meta_cluster"].get("leader") or "none")
PY
    done | sort -u)"
    if [ "$(wc -l <<<"$leaders")" = 1 ] && [ "$leaders" != none ]; then break; fi
    sleep 0.1
done
SEEDS="nats://$(printf '127.0.0.1:%s,' "${CLIENT[@]}")"
SEEDS="${SEEDS%,}"

rate() { sed -n 's/^RESULT .*"items_per_s":\([0-9.e+-]*\).*/\1/p'; }

echo "== scale-out: $ITEMS calculator assignments per run, 3-node cluster, R3, --concurrency $CONCURRENCY per worker, $(nproc) cores"
printf '%-8s %12s %12s %8s %16s\n' workers "items/s" "floor/s" ratio "overhead µs/item"
mkdir -p "$SCRATCH/ws"
for n in $COUNTS; do
    url="$SEEDS?prefix=scale$n$RANDOM&replicas=3&lease_ms=30000"
    "$HELPER" submit "$url" "$ITEMS"
    "$HELPER" wait "$url" "$ITEMS" >"$SCRATCH/wait.out" &
    waiter=$!
    workers=()
    for _ in $(seq 1 "$n"); do
        (cd "$SCRATCH/ws" && exec env SPINE_HOME="$SCRATCH/home" HOME="$SCRATCH" \
            "$SPINE" worker --mailbox "$url" --concurrency "$CONCURRENCY" --no-sandbox) \
            >/dev/null 2>>"$SCRATCH/workers.log" &
        workers+=("$!")
    done
    wait "$waiter"
    for pid in "${workers[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${workers[@]}"; do wait "$pid" 2>/dev/null || true; done
    spine_rate="$(rate <"$SCRATCH/wait.out")"
    floor_rate="$("$HELPER" floor "$SEEDS" "$ITEMS" "$((n * CONCURRENCY))" 3 | rate)"
    python3 - "$n" "$spine_rate" "$floor_rate" <<'PY'
import sys
n, s, f = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print(f"{n:<8} {s:12.0f} {f:12.0f} {s / f:8.2f} {(1 / s - 1 / f) * 1e6:16.0f}")
PY
done
