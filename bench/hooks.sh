#!/bin/sh
# Cost of spine's external hooks, measured in one run (release build):
#   1. per-event overhead of a command hook vs a bare tokio::process spawn of the same bash
#      command (and the first firing, which parses the line with bash -n once);
#   2. ten 50 ms hooks on one event: concurrent wall time vs the sum (and a sequential chain);
#   3. persistent hook round trip (bash and python line-echo).
# Usage: bench/hooks.sh   (honours CARGO_TARGET_DIR)
set -eu
cd "$(dirname "$0")/.."
exec cargo run --quiet --release -p spine-llm-hooks --example hook_bench
