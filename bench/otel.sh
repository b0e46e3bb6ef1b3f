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

# The receiver: counts requests and bytes, answers 200 with an empty protobuf body. It reads
# HTTP/1.1 off the socket itself (keep-alive, content-length bodies), as lean as a collector's
# receiver: Python's http.server spends about 0.3 ms of CPU per request parsing headers, which
# on two cores is taken from the run being measured.
cat >"$work/sink.py" <<'PY'
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
def serve(conn):
    data = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, data = data.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(data) < length:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            with open(sys.argv[2], "a") as log:
                log.write(f"{length}\n")
            data = data[length:]
            conn.sendall(ANSWER)
while True:
    conn, _ = server.accept()
    serve(conn)
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
