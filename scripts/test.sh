#!/usr/bin/env bash
# The project's test command (README "Set up"): installs what the tests need, starts the
# services they use, checks formatting, lints and docs, runs the whole test suite, and stops
# the services again.
#
#   - nats-server (Debian package) with JetStream on 127.0.0.1, for the worker's NATS backend;
#   - tmux (Debian package), a real terminal for the terminal tests;
#   - chromium (Debian package), headless, to open the page `spine trace html` writes;
#   - the MCP servers from npm (pinned in tests/mcp-peers), for the MCP client tests.
#
# Any rustfmt difference, clippy warning or rustdoc warning fails the run, like a failing test.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings

./scripts/services.sh start
trap './scripts/services.sh stop' EXIT
./scripts/mcp-peers.sh >/dev/null

cargo test --workspace --locked
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
