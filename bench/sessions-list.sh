#!/usr/bin/env bash
# `spine sessions list` over many transcripts: writes N sessions of M assistant turns each (a
# prompt, then M assistant lines with usage and a tool result each) into a private SPINE_HOME,
# then times `sessions list` (text) and `sessions list --output-format json` and prints the
# peak resident memory (GNU time, when installed). The list reads each file once, line by
# line; memory must not grow with the number of sessions' messages.
#
#   bench/sessions-list.sh [SESSIONS] [TURNS]     # default 1000 sessions of 20 turns
#
# Uses the debug or release binary found in the target directory (honours CARGO_TARGET_DIR;
# builds the release binary when neither exists).
set -euo pipefail
cd "$(dirname "$0")/.."

SESSIONS="${1:-1000}"
TURNS="${2:-20}"
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
BIN="$TARGET/release/spine"
[ -x "$BIN" ] || BIN="$TARGET/debug/spine"
[ -x "$BIN" ] || { cargo build -q --release -p spine-llm-cli; BIN="$TARGET/release/spine"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/project" "$WORK/home"
PROJECT="$(cd "$WORK/project" && pwd -P)"
/usr/bin/python3 - "$WORK/home" "$PROJECT" "$SESSIONS" "$TURNS" <<'PY'
import json, os, re, sys, uuid
home, project, sessions, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
folder = os.path.join(home, "projects", re.sub(r"[^A-Za-z0-9]", "-", project))
os.makedirs(folder)
usage = {"input_tokens": 1200, "output_tokens": 300, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 5000}
for n in range(sessions):
    sid = str(uuid.uuid4())
    ts = "2026-01-01T00:%02d:%02d.000Z" % (n // 60 % 60, n % 60)
    base = {"cwd": project, "sessionId": sid, "timestamp": ts}
    lines = [dict(base, type="system", subtype="spine_session_start", model="claude-sonnet-4-5")]
    lines.append(dict(base, type="user", message={"role": "user", "content": "prompt %d: %s" % (n, "words " * 30)}))
    for t in range(turns):
        lines.append(dict(base, type="assistant", message={"role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "x" * 400}, {"type": "tool_use", "id": "t%d" % t, "name": "Bash", "input": {"command": "ls"}}],
            "usage": usage}))
        lines.append(dict(base, type="user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t%d" % t, "content": "y" * 2000}]}))
    lines.append(dict(base, type="system", subtype="spine_result", result="success"))
    with open(os.path.join(folder, sid + ".jsonl"), "w") as f:
        f.write("".join(json.dumps(l) + "\n" for l in lines))
PY
BYTES="$(du -sb "$WORK/home/projects" | cut -f1)"
echo "binary: $BIN"
echo "sessions: $SESSIONS, turns each: $TURNS, bytes: $BYTES"
for format in text json; do
    start=$(date +%s%N)
    (cd "$PROJECT" && SPINE_HOME="$WORK/home" "$BIN" sessions list --output-format "$format" >/dev/null)
    end=$(date +%s%N)
    echo "sessions list ($format): $(( (end - start) / 1000000 )) ms"
done
if [ -x /usr/bin/time ]; then
    (cd "$PROJECT" && SPINE_HOME="$WORK/home" /usr/bin/time -f "peak RSS: %M KiB" "$BIN" sessions list >/dev/null)
fi
