// What the user's git ignores beyond a repository's own rules. Private to fsnap.
#pragma once

#include <git2.h>

namespace fsnap {

// git's global ignore rules (core.excludesFile of the user's global configuration,
// else $XDG_CONFIG_HOME/git/ignore), which libgit2 does not read here since it is kept
// from the user's global configuration (git_handles.hpp): added to repo's rules.
void add_global_ignores(git_repository* repo);

}  // namespace fsnap
