#!/usr/bin/env bash
# What an Agent SDK hook callback costs: the round trip of one `hook_callback` control request
# (spine writes the request, the host answers at once, spine reads the answer and folds it).
# One release `spine --input-format stream-json` session per sample, driven by a host written
# with the protocol's JSON lines (no SDK in the way); the scripted model makes CALLS calculator
# calls in one turn. Measured in one loop, alternating: the turn with a PreToolUse callback on
# every call, the same turn with no hook, and with a command hook (`true`) for reference.
# Prints the medians, µs per callback ((with - without) / CALLS) and the ratios.
#
#   bench/sdk-hooks.sh [SAMPLES] [CALLS]     # default 40 samples of each, 50 calls per turn
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-40}"
CALLS="${2:-50}"
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
cargo build -q --release -p spine-llm-cli
exec /usr/bin/python3 - "$TARGET/release/spine" "$N" "$CALLS" <<'PY'
import json, os, shutil, statistics, subprocess, sys, tempfile, time

binary, n, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
work = tempfile.mkdtemp(prefix="spine-sdk-hooks-bench-")
try:
    project = os.path.join(work, "project")
    os.makedirs(project)
    script = os.path.join(work, "script.json")
    turn = {"tool_calls": [{"id": f"c{i}", "name": "calculator", "arguments": {"expression": "6 * 7"}} for i in range(calls)]}
    with open(script, "w") as f:
        json.dump({"turns": [turn, {"text": "done"}]}, f)
    command_hook = json.dumps({"hooks": {"PreToolUse": [{"matcher": "calculator", "hooks": [{"type": "command", "command": "true"}]}]}})
    env = dict(os.environ, SPINE_HOME=os.path.join(work, "home"), HOME=work)

    def session(kind):
        args = [binary, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                "--model", f"scripted:{script}", "--allowedTools", "calculator", "--no-session-persistence"]
        if kind == "command":
            args += ["--settings", command_hook]
        p = subprocess.Popen(args, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        hooks = None
        if kind == "callback":
            hooks = {"PreToolUse": [{"matcher": "calculator", "hookCallbackIds": ["h0"]}]}
        p.stdin.write(json.dumps({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize", "hooks": hooks}}) + "\n")
        p.stdin.flush()
        for line in p.stdout:
            if json.loads(line).get("type") == "control_response":
                break
        start = time.perf_counter()
        p.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": "go"}}) + "\n")
        p.stdin.flush()
        answered = 0
        for line in p.stdout:
            msg = json.loads(line)
            if msg.get("type") == "control_request" and msg["request"]["subtype"] == "hook_callback":
                answered += 1
                reply = {"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": {}}}
                p.stdin.write(json.dumps(reply) + "\n")
                p.stdin.flush()
            elif msg.get("type") == "result":
                break
        elapsed = time.perf_counter() - start
        p.stdin.close()
        p.wait()
        if kind == "callback" and answered != calls:
            sys.exit(f"expected {calls} hook_callback requests, got {answered}")
        return elapsed

    samples = {"none": [], "callback": [], "command": []}
    for _ in range(3):
        for kind in samples:
            session(kind)
    for _ in range(n):
        for kind in samples:
            samples[kind].append(session(kind))
    med = {k: statistics.median(v) for k, v in samples.items()}
    per = lambda kind: (med[kind] - med["none"]) / calls * 1e6
    print(f"turn of {calls} calculator calls, median of {n} (release {binary})")
    print(f"  no hook:            {med['none'] * 1e3:8.2f} ms")
    print(f"  SDK callback hook:  {med['callback'] * 1e3:8.2f} ms   ×{med['callback'] / med['none']:.2f}   {per('callback'):7.1f} µs per callback")
    print(f"  command hook:       {med['command'] * 1e3:8.2f} ms   ×{med['command'] / med['none']:.2f}   {per('command'):7.1f} µs per hook")
    print(f"  callback / command: ×{(med['callback'] - med['none']) / max(med['command'] - med['none'], 1e-9):.3f} of the added cost")
finally:
    shutil.rmtree(work, ignore_errors=True)
PY
