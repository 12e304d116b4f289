#!/usr/bin/env bash
# The main job, on a bundled example workspace: set up, build, then snapshot, change
# files, show the diff, restore exactly, and show how to browse the history with git.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh >/dev/null
shadowbox="$PWD/build/cli/shadowbox"
fixture="$PWD/fixtures/example-workspace"

demo="$(mktemp -d "${TMPDIR:-/tmp}/shadowbox-demo.XXXXXX")"
ws="$demo/workspace"
cp -a "$fixture" "$ws"
mkdir -p "$ws/notes"  # an empty directory: captured and restored too
# Ignored by the workspace's .gitignore (so no git repository holds it), captured anyway.
printf 'GREETING_API_KEY=example-only\n' >"$ws/.env"
export SHADOWBOX_STORE="$demo/store" SHADOWBOX_NO_PROGRESS=1
cd "$ws"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@"; }

step "create the store (outside the workspace) and checkpoint before a tool call"
show "$shadowbox" init
show "$shadowbox" snapshot --tag before --phase pre_tool --tool-name Edit --tool-call-id toolu_demo_1

step "the tool edits, deletes, creates, chmods and replaces files; checkpoint after it"
printf 'int main(void) { return 1; }\n' >src/main.c
rm src/greet.h .env
printf 'scratch\n' >"new file.txt"
chmod +x README.md
rm ABOUT.md && mkdir ABOUT.md
rmdir notes
show "$shadowbox" snapshot --tag after --phase post_tool --tool-call-id toolu_demo_1 --result "edited 6 paths"

step "what changed"
show "$shadowbox" diff before after --name-status
show "$shadowbox" diff before after

step "restore the checkpoint (a safety checkpoint is taken first)"
show "$shadowbox" restore before --dry-run
show "$shadowbox" restore before

step "the workspace is exactly as it was (diff against the fixture)"
diff -r --no-dereference --exclude=notes --exclude=.env "$fixture" "$ws"
test -d "$ws/notes" && test -L "$ws/ABOUT.md"
test "$(cat "$ws/.env")" = "GREETING_API_KEY=example-only"
echo "identical (including .env, the symlink and the empty notes/ directory)"

step "the history"
show "$shadowbox" log

repo="$("$shadowbox" path)"
step "browse it with plain git"
show git --git-dir "$repo" log --all --format='%h %s%n%(trailers)'
show git --git-dir "$repo" log --notes=shadowbox -1 --format='%h %s%n%N' refs/shadowbox/tags/after
cat <<MSG
Try it yourself:
  git --git-dir $repo log --all --stat
  git --git-dir $repo diff refs/shadowbox/tags/before refs/shadowbox/tags/after
  git --git-dir $repo show refs/shadowbox/tags/after:src/main.c
The demo workspace is $ws (store: $demo/store); remove $demo when done.
MSG
