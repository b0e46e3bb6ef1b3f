#!/usr/bin/env bash
# What installed plugins cost at start-up: `spine run -p` (a scripted model that answers at
# once) with 20 installed and enabled plugins — each with a manifest, hooks/hooks.json (three
# events), two commands, an agent and a skill — against the same run with none, alternating in
# one loop (release build). Prints the median of each and the ratio (target: at most 1.1).
#
#   bench/plugins.sh [N] [PLUGINS]     # default 300 runs of each (fewer do not read a 0.1 ms change), 20 plugins
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-300}"
COUNT="${2:-20}"
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
cargo build -q --release -p spine-llm-cli
exec /usr/bin/python3 - "$TARGET/release/spine" "$N" "$COUNT" <<'EOF'
import json, os, shutil, statistics, subprocess, sys, tempfile, time

binary, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
work = tempfile.mkdtemp(prefix="spine-plugins-bench-")
try:
    project = os.path.join(work, "project")
    os.makedirs(project)
    script = os.path.join(work, "script.json")
    with open(script, "w") as f:
        json.dump({"turns": [{"text": "done"}]}, f)

    def home(name, plugins):
        spine_home = os.path.join(work, name, ".spine")
        os.makedirs(spine_home)
        installed, enabled = {}, {}
        for i in range(plugins):
            pid = f"p{i}@bench"
            root = os.path.join(spine_home, "plugins", "cache", "bench", f"p{i}", "1.0.0")
            for sub in (".claude-plugin", "hooks", "commands", "agents", "skills/s"):
                os.makedirs(os.path.join(root, sub))
            with open(os.path.join(root, ".claude-plugin", "plugin.json"), "w") as f:
                json.dump({"name": f"p{i}", "version": "1.0.0", "description": "bench"}, f)
            hook = {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}\"/hook.sh"}
            events = {e: [{"matcher": "Bash", "hooks": [hook]}] for e in ("PreToolUse", "PostToolUse", "PostToolUseFailure")}
            with open(os.path.join(root, "hooks", "hooks.json"), "w") as f:
                json.dump({"hooks": events}, f)
            for c in ("review", "ship"):
                with open(os.path.join(root, "commands", f"{c}.md"), "w") as f:
                    f.write(f"---\ndescription: {c}\n---\nDo {c} for $ARGUMENTS\n")
            with open(os.path.join(root, "agents", "helper.md"), "w") as f:
                f.write("---\nname: helper\ndescription: helps\n---\nYou help.\n")
            with open(os.path.join(root, "skills", "s", "SKILL.md"), "w") as f:
                f.write("---\nname: s\ndescription: a skill\n---\nBody\n")
            installed[pid] = [{"scope": "user", "installPath": root, "version": "1.0.0"}]
            enabled[pid] = True
        os.makedirs(os.path.join(spine_home, "plugins"), exist_ok=True)
        with open(os.path.join(spine_home, "plugins", "installed_plugins.json"), "w") as f:
            json.dump({"version": 2, "plugins": installed}, f)
        with open(os.path.join(spine_home, "settings.json"), "w") as f:
            json.dump({"enabledPlugins": enabled}, f)
        return spine_home

    homes = {"none": home("none", 0), "plugins": home("plugins", count)}
    env = dict(os.environ, HOME=work)
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_MODEL"):
        env.pop(key, None)

    def once(name):
        argv = [binary, "run", "-p", "go", "--model", f"scripted:{script}", "--no-session-persistence"]
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=project, env=dict(env, SPINE_HOME=homes[name]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if done.returncode != 0:
            sys.exit(f"spine run ({name}) failed: {done.stderr.decode()}")
        return (time.perf_counter() - start) * 1000

    # Installed plugins are older than the two seconds a file must settle before spine
    # remembers what parsing it gave (`$SPINE_HOME/cache/parsed/<project>.memo`); the first runs fill it.
    time.sleep(2.2)
    # The plugins are loaded: their hooks are listed.
    listed = subprocess.run([binary, "hooks", "list"], cwd=project, env=dict(env, SPINE_HOME=homes["plugins"]),
                            capture_output=True, text=True)
    hooks = sum(1 for line in listed.stdout.splitlines() if "(plugin p" in line)
    if hooks != 3 * count:
        sys.exit(f"expected {3 * count} plugin hooks listed, found {hooks}: {listed.stdout}{listed.stderr}")
    for name in homes:
        once(name)
    times = {name: [] for name in homes}
    for _ in range(n):
        for name in homes:
            times[name].append(once(name))
    none, plugins = statistics.median(times["none"]), statistics.median(times["plugins"])
    print(f"spine run -p start-up, median of {n} (release): no plugins {none:.2f} ms, "
          f"{count} installed plugins {plugins:.2f} ms ({3 * count} hooks): ratio {plugins / none:.3f} "
          f"(+{plugins - none:.2f} ms)")
finally:
    shutil.rmtree(work, ignore_errors=True)
EOF
