#!/usr/bin/env bash
# The demo itself (scripts/demo.sh sets up and builds first; tests/e2e/demo_test.cpp
# runs it too, so that what the README promises stays true): the real Claude Code CLI
# under `shadowbox run`, on a copy of a bundled example project, against the bundled
# mock of the Messages API on 127.0.0.1 (no API key, no network). The scripted model
# makes two tool calls: a Write, and a Bash command that breaks two files and fails —
# which shadowbox rolls back. Then the README's first five minutes: runs, log, show,
# diff, undo one call, restore a path, resume, rewind, and plain git.
#
#   scripts/demo-run.sh SHADOWBOX_BINARY
set -euo pipefail
shadowbox="$(realpath "${1:?usage: scripts/demo-run.sh SHADOWBOX_BINARY}")"
cd "$(dirname "$0")/.."
root="$PWD"
claude_bin="$root/.tools/node_modules/.bin"

demo="$(mktemp -d "${TMPDIR:-/tmp}/shadowbox-demo.XXXXXX")"
ws="$demo/greeter"
cp -a "$root/fixtures/example-workspace" "$ws"
mkdir -p "$demo/home"
# Only the demo's own files: a HOME of its own (so your Claude Code setup is not
# carried), the store beside the workspace, progress lines off.
export HOME="$demo/home" SHADOWBOX_STORE="$demo/store" SHADOWBOX_NO_PROGRESS=1
unset SHADOWBOX_CONFIG CLAUDE_CONFIG_DIR
export PATH="$claude_bin:$PATH"

# The mock model: its answers, one per request of the agent.
cat >"$demo/scenario.json" <<JSON
{"steps": [
  {"tool": "Write", "id": "toolu_demo_write",
   "input": {"file_path": "$ws/src/main.c",
             "content": "#include \"greet.h\"\n\nint main(void) {\n  greet(\"shadowbox\");\n  return 0;\n}\n"}},
  {"tool": "Bash", "id": "toolu_demo_bash",
   "input": {"command": "rm README.md && echo broken > src/greet.h && exit 1",
             "description": "a command that breaks two files, then fails"}},
  {"text": "I changed the greeting; the cleanup command failed."}
]}
JSON
node "$root/fixtures/mock-anthropic/server.mjs" --scenario "$demo/scenario.json" \
  --log "$demo/mock.log" >"$demo/mock.out" &
mock=$!
trap 'kill $mock 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$demo/mock.out" 2>/dev/null && break; sleep 0.05; done
export ANTHROPIC_BASE_URL="http://127.0.0.1:$(awk '/listening/ {print $2}' "$demo/mock.out")"
export ANTHROPIC_API_KEY=demo-key-not-a-secret CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }
cd "$ws"

step "run Claude Code under shadowbox (the model is the bundled mock)"
show "$shadowbox" run --run-id demo -- claude -p "make it greet shadowbox" --allowedTools Write,Bash ||
  true

step "the failed Bash call was rolled back: README.md and src/greet.h are as they were"
test -f README.md && grep -q 'printf' src/greet.h
echo "README.md is here, src/greet.h is intact; src/main.c keeps the Write:"
show cat src/main.c

step "the runs of this store, and what the run did, one row per call"
show "$shadowbox" runs
show "$shadowbox" log --run demo

step "one call: its files and its record, and what it changed"
show "$shadowbox" show post:toolu_demo_write
show "$shadowbox" diff pre:toolu_demo_write post:toolu_demo_write

step "undo the Write alone (a safety checkpoint is taken first)"
show "$shadowbox" undo toolu_demo_write
show cat src/main.c
cmp src/main.c "$root/fixtures/example-workspace/src/main.c"

step "or take one path as a checkpoint had it: src/main.c as the Write left it"
show "$shadowbox" restore post:toolu_demo_write -- src/main.c
grep -q shadowbox src/main.c

step "go on with the conversation (the mock answers \"done\")"
show "$shadowbox" resume demo --reopen -- -p "anything else?"

step "or rewind it, files and conversation, to just before the Bash call: a new run"
show "$shadowbox" rewind demo --to pre:toolu_demo_bash --run-id demo-rewound -- -p "try it another way"

repo="$("$shadowbox" path)"
step "browse the history with plain git"
show git --git-dir "$repo" log --oneline refs/shadowbox/runs/demo
cat <<MSG

Try it yourself (HOME and the store are the demo's own):
  export HOME=$demo/home SHADOWBOX_STORE=$demo/store
  cd $ws && $shadowbox log --run demo
  git --git-dir $repo log --stat refs/shadowbox/runs/demo
Remove $demo when done.
MSG
