#!/usr/bin/env bash
# `spine trace html` on a large trace: writes a generated trace of N entries (rounds of
# prepare_turn, a model request with usage, and a tool call with a hook, the execute and
# project_tool_result stages and its decision record), times `spine trace html`, prints the
# page's size, then opens it in headless Chromium (Debian's `chromium`) RUNS times and reports
# the render time: the page's own `data-ready-ms` (performance.now() after the first paint,
# counted from the navigation's start) minus the same marker on an empty page, median of the
# runs. Chromium is driven over the DevTools protocol on --remote-debugging-pipe (no npm).
#
#   bench/trace-html.sh [ENTRIES] [RUNS]     # default 10000 entries, 5 runs
#
# Uses the debug or release binary found in the target directory (honours CARGO_TARGET_DIR;
# builds the release binary when neither exists).
set -euo pipefail
cd "$(dirname "$0")/.."

ENTRIES="${1:-10000}"
RUNS="${2:-5}"
command -v chromium >/dev/null 2>&1 || { echo "chromium not found: apt-get install chromium" >&2; exit 1; }
TARGET="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
BIN="$TARGET/release/spine"
[ -x "$BIN" ] || BIN="$TARGET/debug/spine"
[ -x "$BIN" ] || { cargo build -q --release -p spine-llm-cli; BIN="$TARGET/release/spine"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 - "$WORK/trace.jsonl" "$ENTRIES" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
lines = [{"seq": 0, "t_us": 0, "kind": "run_start", "session_id": "bench", "model": "claude-sonnet-4-5",
          "prompt": "refactor the parser", "started_at": "2026-12-01T10:00:00.000Z", "cwd": "/work/project"}]
t = 0
while len(lines) < n - 1:
    seq = len(lines)
    rnd = seq // 7
    cid = "toolu_%06d" % rnd
    tool = ["Read", "Bash", "Edit"][rnd % 3]
    t += 1500
    k = seq % 7
    if k == 0:
        e = {"kind": "stage", "hook": "prepare_turn", "duration_us": 800, "message_count": seq // 3,
             "estimated_token_count": 20000 + seq, "tool_tokens": 4000, "estimator": "bpe", "anchored_on_usage": True,
             "likely_model": "claude-sonnet-4-5", "profile": "main", "is_subagent": False,
             "allowed_tool_names": [], "active_skill_names": [], "selected_skill_names": []}
    elif k == 1:
        e = {"kind": "model", "turn": rnd + 1, "model": "claude-sonnet-4-5", "message_count": seq // 3, "tool_calls": 1,
             "duration_us": 1200, "usage": {"input_tokens": 20000 + seq, "output_tokens": 150,
             "cache_creation_input_tokens": 300, "cache_read_input_tokens": 19000}, "cost_usd": 0.0123}
    elif k == 2:
        e = {"kind": "stage", "hook": "review_tool_call", "tool_use_id": cid, "duration_us": 3, "tool_name": tool}
    elif k == 3:
        e = {"kind": "hook", "event": "PreToolUse", "hook_id": "sh .spine/hooks/guard.sh", "source": ".spine/settings.json hooks.PreToolUse[0].hooks[0]",
             "tool_use_id": cid, "decision": "proceed", "applied": True, "duration_us": 4000, "detail": {"continue": True}}
    elif k == 4:
        e = {"kind": "stage", "hook": "execute", "tool_use_id": cid, "duration_us": 700, "tool_name": tool, "ok": True}
    elif k == 5:
        e = {"kind": "stage", "hook": "project_tool_result", "tool_use_id": cid, "duration_us": 30,
             "content": "line of output\n" * 20, "metadata": {"exit_code": 0}}
    else:
        e = {"kind": "tool_decision", "tool_use_id": cid, "tool_name": tool, "arguments": {"command": "cargo test -p spine-llm-core", "file_path": "src/lib.rs"},
             "pre_tool_use": [{"hook_id": "sh .spine/hooks/guard.sh", "decision": "proceed"}],
             "permission": {"behavior": "allow", "source": {"type": "rule", "rule": tool}, "reason": "allowed by a rule"},
             "post_tool_use": [], "outcome": "executed"}
    e["seq"] = seq
    e["t_us"] = t
    lines.append(e)
lines.append({"seq": n - 1, "t_us": t + 10, "kind": "run_end", "subtype": "success", "num_turns": n // 7})
with open(path, "w") as f:
    f.write("".join(json.dumps(l) + "\n" for l in lines))
PY

start=$(date +%s%N)
"$BIN" trace html "$WORK/trace.jsonl" -o "$WORK/trace.html" >/dev/null
end=$(date +%s%N)
cat >"$WORK/empty.html" <<'HTML'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>empty</title></head><body><script>
requestAnimationFrame(function () { requestAnimationFrame(function () {
  document.documentElement.dataset.readyMs = performance.now().toFixed(1);
  document.documentElement.dataset.ready = "1"; }); });
</script></body></html>
HTML

echo "binary: $BIN"
echo "entries: $ENTRIES, trace: $(stat -c %s "$WORK/trace.jsonl") bytes"
echo "spine trace html: $(( (end - start) / 1000000 )) ms"
echo "page: $(stat -c %s "$WORK/trace.html") bytes"

/usr/bin/python3 - "$WORK" "$RUNS" <<'PY'
import json, os, statistics, subprocess, sys, time
work, runs = sys.argv[1], int(sys.argv[2])

def browser():
    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps", "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1400,800",
            "--user-data-dir=" + os.path.join(work, "profile"), "--remote-debugging-pipe", "about:blank"]
    return subprocess.Popen(["/bin/sh", "-c", 'exec 3<&0 4>&1 0</dev/null 1>/dev/null; exec "$0" "$@"', "chromium"] + args,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

class Cdp:
    def __init__(self, proc):
        self.proc, self.buf, self.next = proc, b"", 0
    def call(self, method, params=None, session=None):
        self.next += 1
        msg = {"id": self.next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.proc.stdin.write(json.dumps(msg).encode() + b"\0")
        self.proc.stdin.flush()
        while True:
            while b"\0" not in self.buf:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise SystemExit("chromium exited")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self.next:
                if "error" in answer:
                    raise SystemExit("%s: %s" % (method, answer["error"]))
                return answer.get("result", {})

def ready_ms(cdp, url):
    target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    cdp.call("Page.enable", session=session)
    cdp.call("Page.navigate", {"url": url}, session=session)
    deadline = time.time() + 60
    while time.time() < deadline:
        r = cdp.call("Runtime.evaluate", {"expression": "document.documentElement && document.documentElement.dataset.readyMs || null",
                                         "returnByValue": True}, session=session)
        value = r.get("result", {}).get("value")
        if value:
            rows = cdp.call("Runtime.evaluate", {"expression": "document.querySelectorAll('.row').length", "returnByValue": True},
                            session=session)["result"]["value"]
            cdp.call("Target.closeTarget", {"targetId": target})
            return float(value), rows
        time.sleep(0.01)
    raise SystemExit("no ready marker within 60 s: " + url)

proc = browser()
cdp = Cdp(proc)
try:
    ready_ms(cdp, "file://" + os.path.join(work, "empty.html"))  # warm-up
    empty = [ready_ms(cdp, "file://" + os.path.join(work, "empty.html"))[0] for _ in range(runs)]
    page = [ready_ms(cdp, "file://" + os.path.join(work, "trace.html")) for _ in range(runs)]
finally:
    try:
        cdp.call("Browser.close")
    except SystemExit:
        pass
    proc.wait(timeout=30)
times = [p[0] for p in page]
print("empty page ready: median %.1f ms" % statistics.median(empty))
print("trace page ready: median %.1f ms (runs: %s)" % (statistics.median(times), ", ".join("%.0f" % t for t in times)))
print("render time (trace page minus empty page): %.1f ms" % (statistics.median(times) - statistics.median(empty)))
print("rows in the DOM after the first paint: %d" % page[0][1])
PY
