#!/usr/bin/env bash
# How much of a request prompt caching can serve: a session of 10 tool turns (Read, Bash, Glob
# in turn) and a final answer through the Anthropic wire against a local fake Messages API
# server, in a project with a CLAUDE.md. For turn 10's request it prints, in the API's cache
# order (tools, system, messages), the share of bytes that is
#   - the stable prefix: the tools and the system prompt's stable block (byte-identical in
#     every request of every run of the project), and
#   - cache-readable: everything up to the previous request's last breakpoint (the stable
#     prefix and the messages turn 9 already sent).
#   PROFILE=debug bench/prompt-cache.sh   (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${PROFILE:-release}
if [ "$profile" = release ]; then cargo build --release -q -p spine-llm-cli; else cargo build -q -p spine-llm-cli; fi
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys;print(json.load(sys.stdin)["target_directory"])')
exec /usr/bin/python3 bench/prompt_cache.py "$target/$profile/spine"
