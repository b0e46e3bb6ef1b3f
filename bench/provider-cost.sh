#!/usr/bin/env bash
# The provider path's cost: peak RSS and CPU time of a 20-call session (Read, Bash, Glob in
# turn, then an answer) through the Anthropic wire against a local fake Messages server,
# against the same session on the scripted model, measured in the same run (best of RUNS).
# Prints both, the RSS ratio and the extra CPU per model request.
#   PROFILE=debug RUNS=3 bench/provider-cost.sh   (default: release, 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-cli; else cargo build -q -p spine-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
exec /usr/bin/python3 bench/provider_cost.py "$target/$profile/spine" "${RUNS:-5}"
