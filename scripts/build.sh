#!/usr/bin/env bash
# Configures and builds shadowbox in ./build (Release with -Werror by default).
set -euo pipefail
cd "$(dirname "$0")/.."
build_type="${BUILD_TYPE:-RelWithDebInfo}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DSHADOWBOX_WERROR=ON >/dev/null
cmake --build build -j "$(nproc)"
