#!/usr/bin/env bash
# Start-up time and peak memory of the spine binary (release build), measured here and now.
#   spine --version start-up        (target <= 5 ms)
#   peak RSS of a 20-call scripted `spine run`   (target <= 20 MB)
# Baselines measured in the same run: `/bin/true` for start-up, `/bin/true` RSS for memory.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p spine-llm-cli
bin=target/release/spine
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ms_per_run() { # command... ; prints mean milliseconds over N runs
  local n=200 start end
  start=$(date +%s%N)
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1; done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / $n / 1000000" | bc
}

if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N -w 20 -m 200 "$bin --version" "/bin/true" --export-json "$work/h.json" >/dev/null
  spine_ms=$(python3 -c "import json;r=json.load(open('$work/h.json'))['results'];print(f\"{r[0]['mean']*1000:.3f}\")")
  true_ms=$(python3 -c "import json;r=json.load(open('$work/h.json'))['results'];print(f\"{r[1]['mean']*1000:.3f}\")")
else
  spine_ms=$(ms_per_run "$bin" --version)
  true_ms=$(ms_per_run /bin/true)
fi
echo "startup: spine --version ${spine_ms} ms (bare process spawn: ${true_ms} ms)"

# 20 tool calls, one per turn, then an answer.
python3 - "$work/script.json" <<'PY'
import json, sys
turns = [{"tool_calls": [{"id": f"c{i}", "name": "calculator", "arguments": {"expression": f"{i} * 2"}}]} for i in range(20)]
turns.append({"text": "done"})
json.dump({"turns": turns}, open(sys.argv[1], "w"))
PY
mkdir -p "$work/project"
SPINE_HOME="$work/home" /usr/bin/time -v "$bin" run --cwd "$work/project" --model "scripted:$work/script.json" -p "go" --max-turns 30 \
  >/dev/null 2>"$work/time.txt"
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$work/time.txt")
/usr/bin/time -v /bin/true 2>"$work/true.txt"
true_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$work/true.txt")
echo "peak RSS: spine run (20 tool calls) $((rss_kb / 1024)) MB (${rss_kb} KB; /bin/true: ${true_kb} KB)"
