#!/usr/bin/env bash
# Sets everything up, builds, and runs the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc)"
