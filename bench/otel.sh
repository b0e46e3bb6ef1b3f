#!/usr/bin/env bash
# Cost of OpenTelemetry export: wall time of a scripted `spine run` session of 20 tool calls
# (20 calculator calls, one per model request, then an answer: 21 requests, ~200 spans) with
# export on (OTLP/HTTP to a local receiver that answers 200 to every POST /v1/traces) against
# off. On and off runs alternate; prints the medians and means and their ratios on/off
# (target <= 1.05).
#   RUNS=50 bench/otel.sh          (default 30 runs each; PROFILE=debug for the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-cli; else cargo build -q -p spine-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
bin="$target/$profile/spine"
work=$(mktemp -d)
n=${RUNS:-30}

# The receiver: counts requests and bytes, answers 200 with an empty protobuf body.
cat >"$work/sink.py" <<'PY'
import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(sys.argv[2], "a") as log:
            log.write(f"{len(body)}\n")
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
/usr/bin/python3 "$work/sink.py" x "$work/sink.log" >"$work/port" &
sink=$!
trap 'kill $sink 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

/usr/bin/python3 - "$work/script.json" <<'PY'
import json, sys
turns = [{"tool_calls": [{"id": f"c{i}", "name": "calculator", "arguments": {"expression": f"{i}*{i}"}}],
          "usage": {"input_tokens": 1000 + 50 * i, "output_tokens": 20}} for i in range(1, 21)]
turns.append({"text": "done", "usage": {"input_tokens": 2100, "output_tokens": 5}})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY
mkdir -p "$work/project" "$work/home"

one() { # on|off ; prints the run's wall time in ns
  local start end
  start=$(date +%s%N)
  if [ "$1" = on ]; then
    (cd "$work/project" && HOME="$work/home" SPINE_HOME="$work/home" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$port" \
      "$bin" run -p go --model "scripted:$work/script.json" >/dev/null 2>&1)
  else
    (cd "$work/project" && HOME="$work/home" SPINE_HOME="$work/home" env -u OTEL_EXPORTER_OTLP_ENDPOINT \
      -u OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "$bin" run -p go --model "scripted:$work/script.json" >/dev/null 2>&1)
  fi
  end=$(date +%s%N)
  echo $((end - start))
}
one on >/dev/null; one off >/dev/null # warm caches
: >"$work/sink.log"
: >"$work/on"; : >"$work/off"
for ((i = 0; i < n; i++)); do
  one on >>"$work/on"
  one off >>"$work/off"
done
requests=$(wc -l <"$work/sink.log")
bytes=$(awk '{s += $1} END {print s + 0}' "$work/sink.log")
# Medians and means (the machine may be shared: the median resists other load).
/usr/bin/python3 - "$work/on" "$work/off" "$profile" "$n" "$requests" "$bytes" <<'PY'
import statistics, sys
on = [int(l) / 1e6 for l in open(sys.argv[1])]
off = [int(l) / 1e6 for l in open(sys.argv[2])]
profile, n, requests, total = sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
m_on, m_off = statistics.median(on), statistics.median(off)
print(f"spine run, 20 tool calls ({profile}, {n} runs each): export off median {m_off:.2f} ms "
      f"(mean {statistics.mean(off):.2f}), export on median {m_on:.2f} ms (mean {statistics.mean(on):.2f}), "
      f"ratio of medians {m_on / m_off:.3f}, of means {statistics.mean(on) / statistics.mean(off):.3f} "
      f"({requests} export requests, {total // n} bytes per run)")
PY
