#!/usr/bin/env bash
# The project's test command (README "Set up"): installs what the tests need, starts the
# services they use, runs the whole test suite, and stops the services again.
#
#   - nats-server (Debian package) with JetStream on 127.0.0.1, for the worker's NATS backend;
#   - the MCP servers from npm (pinned in tests/mcp-peers), for the MCP client tests.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/services.sh start
trap './scripts/services.sh stop' EXIT
./scripts/mcp-peers.sh >/dev/null

cargo test --workspace --locked
