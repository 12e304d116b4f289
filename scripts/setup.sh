#!/usr/bin/env bash
# Installs what shadowbox needs to build and test on Debian 12. Idempotent: packages
# already present are not reinstalled, and apt's lists are refreshed only when a
# package is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libgit2-dev libboost-filesystem-dev libyaml-cpp-dev libpoco-dev libcli11-dev zlib1g-dev libssl-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  tmux
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

# The end-to-end tests drive the real Claude Code CLI, pinned, installed from npm into
# ./.tools (not globally). Node.js also runs the mock Messages API server.
claude_version="2.1.330"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing nodejs npm" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi
tools="$(cd "$(dirname "$0")/.." && pwd)/.tools"
installed=""
[ -f "$tools/node_modules/@anthropic-ai/claude-code/package.json" ] &&
  installed="$(node -p "require('$tools/node_modules/@anthropic-ai/claude-code/package.json').version")"
# The Claude Agent SDK, pinned too: the end-to-end tests run an SDK application
# (fixtures/sdk-app) under shadowbox.
sdk_version="0.3.328"
sdk_installed=""
[ -f "$tools/node_modules/@anthropic-ai/claude-agent-sdk/package.json" ] &&
  sdk_installed="$(node -p "require('$tools/node_modules/@anthropic-ai/claude-agent-sdk/package.json').version")"
if [ "$installed" != "$claude_version" ] || [ "$sdk_installed" != "$sdk_version" ]; then
  echo "setup: installing @anthropic-ai/claude-code@$claude_version and" \
    "@anthropic-ai/claude-agent-sdk@$sdk_version into $tools" >&2
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$claude_version" \
    "@anthropic-ai/claude-agent-sdk@$sdk_version" >&2
fi
