#!/usr/bin/env bash
# Installs the real MCP servers that spine-tools' MCP tests and benches talk to:
# @modelcontextprotocol/server-everything and @modelcontextprotocol/server-filesystem, pinned
# by tests/mcp-peers/package.json and package-lock.json.
#
#   scripts/mcp-peers.sh          # install (or keep) them; prints the directory
#
# They go to ${SPINE_TEST_MCP_DIR:-<repo>/target/test-peers}/node_modules, installed with
# `npm ci` from the committed lockfile. Idempotent and fast: when the installed lockfile
# matches the committed one, nothing is done. Tests read the same SPINE_TEST_MCP_DIR.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tests/mcp-peers"
DIR="${SPINE_TEST_MCP_DIR:-$ROOT/target/test-peers}"
STAMP="$DIR/.installed-lock"

if ! command -v npm >/dev/null 2>&1; then
    echo "mcp-peers.sh: npm is missing; install Node.js 20+ (apt-get install nodejs npm)" >&2
    exit 1
fi

mkdir -p "$DIR"
if [ -f "$STAMP" ] && cmp -s "$STAMP" "$SRC/package-lock.json" \
    && [ -f "$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] \
    && [ -f "$DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
    echo "$DIR"
    exit 0
fi

cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error >&2)
cp "$SRC/package-lock.json" "$STAMP"
echo "$DIR"
