#!/usr/bin/env bash
# The main job: sets up (the build tools, Node.js and the pinned Claude Code CLI only),
# builds, then runs scripts/demo-run.sh: the real Claude Code under `shadowbox run`
# against the bundled mock model, with a failed call rolled back.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh claude-code
./scripts/build.sh >/dev/null
exec ./scripts/demo-run.sh "$PWD/build/cli/shadowbox"
