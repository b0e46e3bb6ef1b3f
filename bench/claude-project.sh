#!/usr/bin/env bash
# Start-up cost of a Claude Code project: `spine run -p` on the scripted model (one answer, no
# tools) in a project with a realistic `.claude/` folder — settings with hooks and permission
# rules, settings.local.json, CLAUDE.md with an @import, CLAUDE.local.md, .claude/CLAUDE.md,
# AGENTS.md — against the same run in an empty project, measured here and now. Prints both
# means and their ratio. The project is trusted (`--trust`) so that its hooks load; the hooks
# are on PreToolUse/PostToolUse, which this run never fires, so the difference is discovery,
# parsing, trust and memory files, not hook processes.
#
#   bench/claude-project.sh [RUNS]        # default 50; SPINE_BIN=path uses that binary
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-50}"
if [ -z "${SPINE_BIN:-}" ]; then
  cargo build --release -q -p spine-cli
  SPINE_BIN=target/release/spine
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo '{"turns": [{"text": "done"}]}' >"$work/script.json"
mkdir -p "$work/empty" "$work/full/.claude/hooks" "$work/full/docs" "$work/home"
git -C "$work/empty" init -q
git -C "$work/full" init -q
cat >"$work/full/.claude/settings.json" <<'JSON'
{
  "permissions": {
    "allow": ["Bash(git status)", "Bash(npm test *)", "Read(./src/**)", "Edit(./src/**)"],
    "deny": ["Read(./.env)", "Read(./secrets/**)", "Bash(rm -rf *)", "WebFetch"],
    "ask": ["Bash(git push *)"]
  },
  "env": {"PROJECT_STAGE": "dev"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/bin/python3 .claude/hooks/guard.py"}]},
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "sh .claude/hooks/lint.sh"}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "sh .claude/hooks/format.sh"}]}
    ]
  }
}
JSON
echo '{"permissions": {"allow": ["Bash(make *)"]}}' >"$work/full/.claude/settings.local.json"
printf 'import json, sys\njson.load(sys.stdin)\n' >"$work/full/.claude/hooks/guard.py"
printf '#!/bin/sh\ncat >/dev/null\n' >"$work/full/.claude/hooks/lint.sh"
cp "$work/full/.claude/hooks/lint.sh" "$work/full/.claude/hooks/format.sh"
python3 - "$work/full" <<'PY'
import sys, pathlib
root = pathlib.Path(sys.argv[1])
rules = "\n".join(f"- Rule {i}: keep functions small and named after what they do." for i in range(60))
(root / "CLAUDE.md").write_text(f"# Project\n\nSee @docs/conventions.md for the conventions.\n\n{rules}\n")
(root / "docs" / "conventions.md").write_text("# Conventions\n\n" + rules + "\n")
(root / "CLAUDE.local.md").write_text("# Local\n\nUse the staging database.\n")
(root / ".claude" / "CLAUDE.md").write_text("# Team\n\nReview before merging.\n")
(root / "AGENTS.md").write_text("# Agents\n\nRun the tests before you stop.\n")
PY

mean_ms() { # project ; prints mean milliseconds over $runs runs
  local start end
  start=$(date +%s%N)
  for ((i = 0; i < runs; i++)); do
    HOME="$work/home" SPINE_HOME="$work/home/.spine" "$SPINE_BIN" run --cwd "$1" --trust \
      --model "scripted:$work/script.json" -p "hi" >/dev/null 2>&1
  done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / $runs / 1000000" | bc
}

empty_ms=$(mean_ms "$work/empty")
full_ms=$(mean_ms "$work/full")
ratio=$(echo "scale=2; $full_ms / $empty_ms" | bc)
echo "spine run -p, empty project: ${empty_ms} ms; with a full .claude/ folder: ${full_ms} ms; ratio ${ratio}"
