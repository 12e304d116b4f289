#!/usr/bin/env bash
# Installs what shadowbox needs to build and test on Debian 12. Idempotent: packages
# already present are not reinstalled, and apt's lists are refreshed only when a
# package is missing.
set -euo pipefail

# tmux drives interactive agents in the end-to-end tests; redis-server is the fleet
# tests' Redis (each test starts its own on a free loopback port); file and lintian
# make and check the Debian packages (cpack reads the executables' dependencies with
# file and dpkg-shlibdeps); bash-completion, zsh and fish run the shell completions' tests;
# chromium renders the pages of `shadowbox report` in its tests (headless); libxxhash-dev
# is a header only here (xxHash compiled in, no library linked).
packages=(
  build-essential cmake ninja-build pkg-config git
  libgit2-dev libboost-filesystem-dev libyaml-cpp-dev libpoco-dev libcli11-dev zlib1g-dev libssl-dev
  libxxhash-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  tmux redis-server file lintian bash-completion zsh fish chromium
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

# The end-to-end tests drive the real agent CLIs, pinned, installed from npm into
# ./.tools (not globally). Node.js also runs the mock model API servers.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing nodejs npm" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi
tools="$(cd "$(dirname "$0")/.." && pwd)/.tools"
# Pinned, each with why: the end-to-end tests drive these agents against the mocks in
# fixtures/ (Claude Code; the Claude Agent SDK runs fixtures/sdk-app; Codex CLI and
# Gemini CLI, whose hook protocols shadowbox speaks too). Arguments name the ones to
# install (claude-code, claude-agent-sdk, codex, gemini-cli; the demo needs only
# claude-code); none installs them all.
pinned=(
  "@anthropic-ai/claude-code@2.1.330"
  "@anthropic-ai/claude-agent-sdk@0.3.328"
  "@openai/codex@0.169.0"
  "@google/gemini-cli@0.61.0"
)
if (($#)); then
  chosen=()
  for agent in "$@"; do
    found=""
    for spec in "${pinned[@]}"; do
      name="${spec%@*}"
      [ "${name##*/}" = "$agent" ] && chosen+=("$spec") && found=1
    done
    [ -n "$found" ] || { echo "setup: no pinned agent package is named $agent" >&2; exit 2; }
  done
  pinned=("${chosen[@]}")
fi
wanted=()
for spec in "${pinned[@]}"; do
  name="${spec%@*}"
  version="${spec##*@}"
  have=""
  [ -f "$tools/node_modules/$name/package.json" ] &&
    have="$(node -p "require('$tools/node_modules/$name/package.json').version")"
  [ "$have" = "$version" ] || wanted+=("$spec")
done
if ((${#wanted[@]})); then
  echo "setup: installing ${wanted[*]} into $tools" >&2
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error --save-exact "${wanted[@]}" >&2
fi
