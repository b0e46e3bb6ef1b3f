#!/usr/bin/env bash
# Installs the official Agent SDKs that the host programs of tests/sdk drive spine with (the
# tests in crates/spine-cli/tests/suite/sdk_hosts.rs):
#   - Python: claude-agent-sdk and its dependencies, pinned by tests/sdk-peers/requirements.txt,
#     in a venv at $DIR/sdk-py (run tests/sdk/py_host.py with $DIR/sdk-py/bin/python);
#   - TypeScript: @anthropic-ai/claude-agent-sdk, pinned by tests/sdk-peers/package.json and
#     package-lock.json, in $DIR/sdk-ts/node_modules (ts_host.mjs reads SPINE_SDK_TS_DIR).
#
#   scripts/sdk-peers.sh          # install (or keep) them; prints the directory
#
# DIR is ${SPINE_TEST_SDK_DIR:-<repo>/target/test-peers}. Idempotent and fast: each half is
# reinstalled only when its pin file differs from the copy stamped at the last install. The
# SDKs bundle a Claude Code binary (the Python wheel in claude_agent_sdk/_bundled/, the npm
# package in optional per-platform packages); the tests always pass the CLI path, so the
# wheel's copy is deleted and the optional packages are not installed (`--omit=optional`).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tests/sdk-peers"
DIR="${SPINE_TEST_SDK_DIR:-$ROOT/target/test-peers}"
PY="$DIR/sdk-py"
TS="$DIR/sdk-ts"

for tool in python3 npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "sdk-peers.sh: $tool is missing (apt-get install python3 python3-venv nodejs npm)" >&2
        exit 1
    fi
done
mkdir -p "$DIR"

# Python.
if ! { [ -f "$PY/.installed-requirements" ] && cmp -s "$PY/.installed-requirements" "$SRC/requirements.txt" \
    && [ -x "$PY/bin/python" ] && "$PY/bin/python" -c 'import claude_agent_sdk' 2>/dev/null; }; then
    rm -rf "$PY"
    python3 -m venv "$PY"
    "$PY/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
        -r "$SRC/requirements.txt" >&2
    rm -rf "$("$PY/bin/python" -c 'import claude_agent_sdk, os; print(os.path.dirname(claude_agent_sdk.__file__))')/_bundled"
    cp "$SRC/requirements.txt" "$PY/.installed-requirements"
fi

# TypeScript.
if ! { [ -f "$TS/.installed-lock" ] && cmp -s "$TS/.installed-lock" "$SRC/package-lock.json" \
    && [ -f "$TS/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs" ]; }; then
    mkdir -p "$TS"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$TS/"
    (cd "$TS" && npm ci --omit=optional --no-audit --no-fund --loglevel=error >&2)
    cp "$SRC/package-lock.json" "$TS/.installed-lock"
fi
echo "$DIR"
