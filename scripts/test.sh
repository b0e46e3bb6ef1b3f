#!/usr/bin/env bash
# The project's test command (README "Set up"): installs what the tests need, starts the
# services they use, checks formatting, lints and docs, runs the whole test suite, and stops
# the services again.
#
#   - nats-server (the official binary from PyPI, pinned in tests/services) with JetStream on
#     127.0.0.1, for the worker's NATS backend and its clusters;
#   - tmux (Debian package), a real terminal for the terminal tests;
#   - chromium (Debian package), headless, to open the page `spine trace html` writes;
#   - jq (Debian package), which the guard hooks of the hook tests use;
#   - the MCP servers from npm (pinned in tests/mcp-peers), for the MCP client tests;
#   - the official Agent SDKs, Python from PyPI and TypeScript from npm (pinned in
#     tests/sdk-peers), for the tests that drive spine with them.
#
# Any rustfmt difference, clippy warning or rustdoc warning fails the run, like a failing test.
# The minimal feature set of spine-cli is linted, built and run at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

./scripts/services.sh start
trap './scripts/services.sh stop' EXIT
./scripts/mcp-peers.sh >/dev/null
./scripts/sdk-peers.sh >/dev/null

cargo test --workspace --locked
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# The minimal binary (no worker, no NATS or SQLite, no MCP, no web tools) lints clean, builds
# and runs the demo. Last: it replaces target/debug/spine (the next test run relinks it).
cargo clippy -p spine-llm-cli --no-default-features --locked -- -D warnings
cargo build -p spine-llm-cli --no-default-features --locked
target/debug/spine run --cwd examples/demo --model scripted:examples/demo/script.json -p "Summarize my notes" >/dev/null
