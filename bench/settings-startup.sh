#!/usr/bin/env bash
# Start-up of `spine run -p` (a scripted model that answers at once) in a project with a full
# Claude Code `.claude/` folder (settings.json with hooks, rules, env; settings.local.json;
# ~/.claude/settings.json; a .git root two levels up from the working directory; memory files:
# CLAUDE.md with an @import, CLAUDE.local.md, .claude/CLAUDE.md, AGENTS.md, ~/.claude/CLAUDE.md)
# against an empty project: the cost of settings discovery, the project directory walk,
# validation and the memory files.
#   PROFILE=debug bench/settings-startup.sh   (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-llm-cli; else cargo build -q -p spine-llm-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
bin="$target/$profile/spine"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=${RUNS:-100}

echo '{"turns": [{"text": "done"}]}' >"$work/script.json"
mkdir -p "$work/empty" "$work/home/.claude" "$work/full/.git" "$work/full/.claude/hooks" "$work/full/src/deep"
cat >"$work/full/.claude/settings.json" <<'JSON'
{"$schema": "https://json.schemastore.org/claude-code-settings.json",
 "permissions": {"allow": ["Bash(git *)", "Bash(npm run *)", "Read", "Edit(src/**)"],
                 "deny": ["Read(./.env)", "Read(./secrets/**)", "Bash(rm -rf *)"],
                 "ask": ["Write", "Bash(git push *)"]},
 "env": {"NODE_ENV": "test", "FIXTURE": "1"},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/pre.sh"}]}],
           "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "/usr/bin/python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/fmt.py"}]}]},
 "statusLine": {"type": "command", "command": "echo x"}}
JSON
echo '{"permissions": {"deny": ["Bash(curl *)"]}, "env": {"LOCAL": "1"}}' >"$work/full/.claude/settings.local.json"
echo '{"permissions": {"allow": ["Bash(ls *)"]}}' >"$work/home/.claude/settings.json"
printf '#!/bin/sh\ncat >/dev/null\n' >"$work/full/.claude/hooks/pre.sh"
chmod +x "$work/full/.claude/hooks/pre.sh"
echo 'import sys; sys.stdin.read()' >"$work/full/.claude/hooks/fmt.py"
mkdir -p "$work/full/docs"
rules=$(for i in $(seq 1 60); do echo "- Rule $i: keep functions small and named after what they do."; done)
printf '# Project\n\nSee @docs/conventions.md for the conventions.\n\n%s\n' "$rules" >"$work/full/CLAUDE.md"
printf '# Conventions\n\n%s\n' "$rules" >"$work/full/docs/conventions.md"
printf '# Local\n\nUse the staging database.\n' >"$work/full/CLAUDE.local.md"
printf '# Team\n\nReview before merging.\n' >"$work/full/.claude/CLAUDE.md"
printf '# Agents\n\nRun the tests before you stop.\n' >"$work/full/AGENTS.md"
printf '# Me\n\nAnswer briefly.\n' >"$work/home/.claude/CLAUDE.md"

ms_per_run() { # dir ; mean milliseconds over n runs
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do
    (cd "$1" && HOME="$work/home" SPINE_HOME="$work/home/.spine" "$bin" run -p go --model "scripted:$work/script.json" >/dev/null 2>&1)
  done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / $n / 1000000" | bc
}
empty=$(ms_per_run "$work/empty")
full=$(ms_per_run "$work/full/src/deep")
echo "spine run -p ($profile, $n runs): empty project ${empty} ms, full .claude/ project (from src/deep) ${full} ms, ratio $(echo "scale=3; $full / $empty" | bc)"
