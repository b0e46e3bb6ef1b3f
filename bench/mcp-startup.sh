#!/usr/bin/env bash
# What MCP servers cost the start of a run, measured here and now (wall time, mean of N runs):
#   none       a scripted one-answer `spine run` with no MCP server
#   slow       one approved stdio server that answers `initialize` after 1 s (under its limit)
#   two-slow   two such servers: they start concurrently, so about 1 s, not 2 s
#   over       one server that never answers within its `startupTimeoutMs` of 2 s: the run
#              goes on after 2 s with the server reported as failed
# Prints each mean and its ratio to `none`. PROFILE=debug uses the debug build (default release).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
target=${CARGO_TARGET_DIR:-target}
if [ "$profile" = release ]; then cargo build --release -q -p spine-llm-cli; else cargo build -q -p spine-llm-cli; fi
bin=$target/$profile/spine
n=${N:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/home"

# A stdio MCP server: answers `initialize` after argv[1] milliseconds, lists one tool.
cat >"$work/server.py" <<'PY'
import json, sys, time
delay = int(sys.argv[1]) / 1000.0
for line in sys.stdin:
    msg = json.loads(line)
    mid = msg.get("id")
    if mid is None:
        continue
    if msg.get("method") == "initialize":
        time.sleep(delay)
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bench", "version": "0"}}
    elif msg.get("method") == "tools/list":
        result = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    sys.stdout.flush()
PY
echo '{"turns": [{"text": "done"}]}' >"$work/script.json"

server() { # name delay_ms [startupTimeoutMs]
  local extra=""
  [ -n "${3:-}" ] && extra=", \"startupTimeoutMs\": $3"
  printf '"%s": {"command": "/usr/bin/python3", "args": ["%s", "%s"]%s}' "$1" "$work/server.py" "$2" "$extra"
}

mean_ms() { # settings-json ; prints the mean wall time of N runs in ms
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do
    SPINE_HOME="$work/home" "$bin" run -q --cwd "$work/project" --model "scripted:$work/script.json" -p go \
      --settings "$1" >/dev/null 2>&1
  done
  end=$(date +%s%N)
  echo $(((end - start) / n / 1000000))
}

none=$(mean_ms '{}')
slow=$(mean_ms "{\"mcpServers\": {$(server a 1000)}}")
two=$(mean_ms "{\"mcpServers\": {$(server a 1000), $(server b 1000)}}")
over=$(mean_ms "{\"mcpServers\": {$(server a 60000 2000)}}")
ratio() { echo "scale=2; $1 / $none" | bc; }
echo "spine run ($profile, mean of $n): no MCP server ${none} ms"
echo "  one server, 1 s to initialize:        ${slow} ms  (x$(ratio "$slow"))"
echo "  two servers, 1 s each, concurrently:  ${two} ms  (x$(ratio "$two"))"
echo "  one server over its 2 s limit:        ${over} ms  (x$(ratio "$over"))"
