#!/usr/bin/env bash
# Cost of OpenTelemetry export: wall time of a scripted `spine run` session of 20 tool calls
# (20 calculator calls, one per model request, then an answer: 21 requests, 146 spans) with
# export on (OTLP/HTTP to a local receiver that answers 200 to every POST /v1/traces) against
# off, and on with the sampler off. The variants alternate; prints medians, means and their
# ratios to off, wall and CPU (target: wall <= 1.05).
#   RUNS=500 bench/otel.sh         (default 300 runs of each variant, about 20 s; PROFILE=debug for the debug build)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-llm-cli; else cargo build -q -p spine-llm-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
bin="$target/$profile/spine"
work=$(mktemp -d)
n=${RUNS:-300}

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

# The runs: one Python loop starts each run with subprocess (no shell in between), alternating
# off, on, and on with the sampler off (entries collected and spans built, none recorded or
# sent: the cost of the exporter itself); wall time around each run, CPU time from the
# children's rusage. Two warm-up rounds are not counted.
: >"$work/sink.log"
/usr/bin/python3 - "$bin" "$work" "$port" "$n" "$profile" <<'PY'
import os, resource, statistics, subprocess, sys, time
binary, work, port, n, profile = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
base.update(HOME=f"{work}/home", SPINE_HOME=f"{work}/home")
on = dict(base, OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}")
variants = {"off": base, "on": on, "on, sampler off": dict(on, OTEL_TRACES_SAMPLER="always_off")}
wall = {k: [] for k in variants}
cpu = {k: [] for k in variants}
for i in range(n + 2):
    for name, env in variants.items():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([binary, "run", "-p", "go", "--model", f"scripted:{work}/script.json"], cwd=f"{work}/project",
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        elapsed = (time.perf_counter() - start) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i >= 2:
            wall[name].append(elapsed)
            cpu[name].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
sizes = [int(line) for line in open(f"{work}/sink.log")]
m_off, c_off = statistics.median(wall["off"]), statistics.median(cpu["off"])
print(f"spine run, 20 tool calls ({profile}, {n} runs of each, alternating):")
for name in variants:
    m, c = statistics.median(wall[name]), statistics.median(cpu[name])
    print(f"  export {name:16} wall median {m:6.2f} ms (mean {statistics.mean(wall[name]):6.2f})  "
          f"ratio {m / m_off:.3f}   CPU median {c:6.2f} ms  ratio {c / c_off:.3f}")
print(f"  {len(sizes)} export requests, {sum(sizes) // (n + 2)} bytes of OTLP protobuf per run exported")
PY
