#!/usr/bin/env bash
# What the command sandbox costs a Bash call: a scripted `spine run` whose five tool calls are
# Bash `bash -c true`, run N times with `--sandbox off`, N times with `--sandbox
# workspace-write` (the session's launcher starts each command) and N times the same with one
# helper per command (`SPINE_SANDBOX_LAUNCHER=0`), alternating in the same loop (release
# build). Prints, for each: the median wall time of the whole run, the median `execute` stage
# of the first call (which starts the launcher) and of the four others (from the trace), then
# the ratios and the milliseconds the sandbox adds.
#
# Then the one-shot helper alone, under the policy those calls ran under (read from the
# helper's command line): `bash -c true` bare, through `spine __sandbox` and through the
# crate's small `spine-sandbox-exec` (the same helper in a small binary), alternating, N runs
# each; the ratios against bare, and what each phase of `spine __sandbox` costs (its
# `SPINE_SANDBOX_TIMING=exec:…` line, printed as the helper execs the command in its place:
# `exec` is from the spawn to the helper's `main`).
#
#   bench/sandbox.sh [N]      # default 40 runs of each
#
# The run's figure includes the probe at session start (one `spine __sandbox --probe`).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-40}"
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
cargo build -q --release -p spine-llm-cli -p spine-llm-sandbox
BIN="$TARGET/release/spine"
SMALL="$TARGET/release/spine-sandbox-exec"
exec /usr/bin/python3 - "$BIN" "$N" "$SMALL" <<'EOF'
import atexit, base64, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

binary, n, small = sys.argv[1], int(sys.argv[2]), sys.argv[3]
work = tempfile.mkdtemp(prefix="spine-sandbox-bench-")
atexit.register(shutil.rmtree, work, True)
project, home = os.path.join(work, "project"), os.path.join(work, "home")
os.makedirs(project)
os.makedirs(home)
script = os.path.join(work, "script.json")
CALLS = 5
calls = [{"tool_calls": [{"id": f"c{i}", "name": "Bash", "arguments": {"command": "bash -c true"}}]}
         for i in range(CALLS)]
with open(script, "w") as f:
    json.dump({"turns": calls + [{"text": "done"}]}, f)
env = dict(os.environ, SPINE_HOME=home, HOME=work)
for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_MODEL"):
    env.pop(key, None)
trace = os.path.join(work, "trace.jsonl")


MODES = {"off": ("off", {}), "launcher": ("workspace-write", {}),
         "one helper per call": ("workspace-write", {"SPINE_SANDBOX_LAUNCHER": "0"})}


def once(name, script=script):
    mode, extra = MODES[name]
    argv = [binary, "run", "-p", "go", "--model", f"scripted:{script}", "--permission-mode",
            "bypassPermissions", "--no-session-persistence", "--sandbox", mode, "--trace", trace]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=project, env=dict(env, **extra), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"spine run ({name}) failed: {done.stderr.decode()}")
    with open(trace) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    executes = [e for e in entries if e.get("hook") == "execute"]
    if len(executes) != CALLS or not all(e.get("ok") for e in executes):
        sys.exit(f"a Bash call failed ({name})")
    return wall, [e["duration_us"] / 1000 for e in executes]


results = {name: ([], [], []) for name in MODES}
for name in results:  # warm-up
    once(name)
for _ in range(n):
    for name, (walls, firsts, others) in results.items():
        wall, executes = once(name)
        walls.append(wall)
        firsts.append(executes[0])
        others.extend(executes[1:])

med = {name: tuple(statistics.median(v) for v in values) for name, values in results.items()}
print(f"{n} runs of each, {CALLS} Bash `bash -c true` calls per run (medians)")
for name, (wall, first, other) in med.items():
    print(f"  {name:<20} run {wall:7.1f} ms   execute: first call {first:6.2f} ms, later calls {other:6.2f} ms")
off = med["off"]
for name in ("launcher", "one helper per call"):
    wall, first, other = med[name]
    print(f"  {name}: run x{wall / off[0]:.2f} (+{wall - off[0]:.1f} ms); first call x{first / off[1]:.2f} "
          f"(+{first - off[1]:.2f} ms); later calls x{other / off[2]:.2f} (+{other - off[2]:.2f} ms)")

# The policy the call ran under, from the helper's command line (the helper execs the shell
# in its place, so the line is read from strace's record of the exec).
if not shutil.which("strace"):
    sys.exit("the helper's part of this bench needs strace (to read the policy of the call)")
execs = os.path.join(work, "execs.txt")
argv = [binary, "run", "-p", "go", "--model", f"scripted:{script}", "--permission-mode", "bypassPermissions",
        "--no-session-persistence", "--sandbox", "workspace-write"]
subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-s", "65536", "-o", execs] + argv,
               cwd=project, env=dict(env, SPINE_SANDBOX_LAUNCHER="0"), stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL, check=True)
with open(execs) as f:
    policy = next(m.group(1) for m in re.finditer(r'"__sandbox", "(v1\.[^"]+)", "--"', f.read()))
body = policy[3:] + "=" * (-len(policy[3:]) % 4)
for root in json.loads(base64.urlsafe_b64decode(body)).get("write_allow", []):
    if not os.path.exists(root):  # the session's temporary directory, gone with it
        os.makedirs(root)
        atexit.register(shutil.rmtree, root, True)

command = ["bash", "-c", "true"]
variants = {
    "bare": command,
    "spine __sandbox": [binary, "__sandbox", policy, "--"] + command,
    "spine-sandbox-exec": [small, policy, "--"] + command,
}
walls = {name: [] for name in variants}
phases = {}
for _ in range(n):
    for name, argv in variants.items():
        run_env = dict(env, SPINE_SANDBOX_TIMING=f"exec:{time.time_ns()}")
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=project, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls[name].append((time.perf_counter() - start) * 1000)
        if done.returncode != 0:
            sys.exit(f"{name} failed: {done.stderr.decode()}")
        timing = re.search(r"spine sandbox: timing \(µs\)(.*)", done.stderr.decode())
        if name == "spine __sandbox" and timing:
            for phase, micros in re.findall(r" (\S+)=(\d+)", timing.group(1)):
                phases.setdefault(phase, []).append(int(micros))
bare = statistics.median(walls["bare"])
print(f"the helper alone, `bash -c true` under that call's policy, {n} runs of each (medians)")
for name, values in walls.items():
    wall = statistics.median(values)
    added = "" if name == "bare" else f"   x{wall / bare:.2f}, +{wall - bare:.2f} ms"
    print(f"  {name:<20} {wall:6.2f} ms{added}")
print("  phases of spine __sandbox (µs): " + ", ".join(f"{p} {statistics.median(v):.0f}" for p, v in phases.items()))
EOF
