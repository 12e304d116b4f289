#!/usr/bin/env bash
# Builds the Debian packages of shadowbox into ./build/packages and checks them with
# lintian: shadowbox_<version>_<arch>.deb (the tool) and libshadowbox-dev_... (the
# libraries, headers and CMake package for embedding). Run ./scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
rm -rf build/packages
(cd build && cpack -G DEB -B packages >/dev/null)
rm -rf build/packages/_CPack_Packages
status=0
for deb in build/packages/*.deb; do
  # Errors fail the script; warnings are shown.
  lintian --tag-display-limit 0 "$deb" || status=1
  echo "package: $deb"
done
exit "$status"
