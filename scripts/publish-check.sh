#!/usr/bin/env bash
# `cargo publish --dry-run` over every published crate, in dependency order: cargo packages the
# workspace's crates together (a crate's dependencies on the others resolve to their packages,
# so nothing has to be on crates.io first), checks each manifest (version on every path
# dependency, description, license, repository, readme, keywords), and builds each package
# from its own files alone. spine-testkit and the embedding example are not published.
#
#   scripts/publish-check.sh              # full check: packages and builds every crate
#   scripts/publish-check.sh --no-verify  # packaging and manifests only (fast)
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo publish --dry-run --workspace --locked \
    --exclude spine-testkit --exclude spine-embed-example "$@"
