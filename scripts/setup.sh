#!/usr/bin/env bash
# Installs what shadowbox needs to build and test on Debian 12. Idempotent: packages
# already present are not reinstalled, and apt's lists are refreshed only when a
# package is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libgit2-dev libboost-filesystem-dev libyaml-cpp-dev libpoco-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
