#!/usr/bin/env bash
# The provider path's cost: peak RSS and CPU time of a 20-call session (Read, Bash, Glob in
# turn, then an answer) through the Anthropic wire against a local fake Messages server,
# against the same session on the scripted model, measured in the same run (RUNS of each,
# alternated). Prints both (best and median; CPU from the kernel's rusage of the child), the
# RSS ratio, the extra CPU per model request beyond the scripted run, and whether it is within
# the target (<= 0.5 ms).
#   PROFILE=debug RUNS=3 bench/provider-cost.sh   (default: release, 5 runs)
#   KEEPALIVE=1 bench/provider-cost.sh            (the server keeps connections open, as the
#                                                  API does; default: a connection per request)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-llm-cli; else cargo build -q -p spine-llm-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
exec /usr/bin/python3 bench/provider_cost.py "$target/$profile/spine" "${RUNS:-5}"
