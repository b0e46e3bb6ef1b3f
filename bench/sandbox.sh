#!/usr/bin/env bash
# What the command sandbox costs one Bash call: a scripted `spine run` whose one tool call is
# Bash `bash -c true`, run N times with `--sandbox off` and N times with `--sandbox
# workspace-write`, alternating in the same loop (release build). Prints, for each: the median
# wall time of the whole run and the median `execute` stage of the call (from the trace), then
# the ratio and the milliseconds the sandbox adds to each.
#
#   bench/sandbox.sh [N]      # default 40 runs of each
#
# The run's figure includes the probe at session start (one `spine __sandbox --probe`); the
# execute figure is the call alone (`spine __sandbox POLICY -- bash -c …`: the helper's
# start, its confinement, then bash).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-40}"
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
cargo build -q --release -p spine-cli
BIN="$TARGET/release/spine"
exec /usr/bin/python3 - "$BIN" "$N" <<'EOF'
import atexit, json, os, shutil, statistics, subprocess, sys, tempfile, time

binary, n = sys.argv[1], int(sys.argv[2])
work = tempfile.mkdtemp(prefix="spine-sandbox-bench-")
atexit.register(shutil.rmtree, work, True)
project, home = os.path.join(work, "project"), os.path.join(work, "home")
os.makedirs(project)
os.makedirs(home)
script = os.path.join(work, "script.json")
call = {"id": "c1", "name": "Bash", "arguments": {"command": "bash -c true"}}
with open(script, "w") as f:
    json.dump({"turns": [{"tool_calls": [call]}, {"text": "done"}]}, f)
env = dict(os.environ, SPINE_HOME=home, HOME=work)
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_MODEL"):
    env.pop(key, None)
trace = os.path.join(work, "trace.jsonl")


def once(mode):
    argv = [binary, "run", "-p", "go", "--model", f"scripted:{script}", "--permission-mode",
            "bypassPermissions", "--no-session-persistence", "--sandbox", mode, "--trace", trace]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"spine run --sandbox {mode} failed: {done.stderr.decode()}")
    with open(trace) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    execute = next(e for e in entries if e.get("hook") == "execute")
    if not execute.get("ok"):
        sys.exit(f"the Bash call failed under --sandbox {mode}")
    return wall, execute["duration_us"] / 1000


results = {"off": ([], []), "workspace-write": ([], [])}
for mode in results:  # warm-up
    once(mode)
for _ in range(n):
    for mode, (walls, executes) in results.items():
        wall, execute = once(mode)
        walls.append(wall)
        executes.append(execute)

med = {mode: (statistics.median(w), statistics.median(e)) for mode, (w, e) in results.items()}
print(f"{n} runs of each, one Bash `bash -c true` call per run (medians)")
for mode, (wall, execute) in med.items():
    print(f"  --sandbox {mode:<16} run {wall:7.1f} ms   execute {execute:6.2f} ms")
(run_off, exe_off), (run_on, exe_on) = med["off"], med["workspace-write"]
print(f"  run:     x{run_on / run_off:.2f}, +{run_on - run_off:.1f} ms")
print(f"  execute: x{exe_on / exe_off:.2f}, +{exe_on - exe_off:.2f} ms")
EOF
