// Which changes a restore of some named paths makes (RestoreOptions::paths), as
// `git restore --source=TARGET -- PATH...` would: at each named path and below it the
// workspace becomes the target, the directories the target adds above them are made,
// and nothing else is touched. Private to fsnap.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fsnap/tree_change.hpp"
#include "large_file_restore.hpp"

namespace fsnap {

// Throws kPathEscape naming a path that is not relative and normal ("a/b": no
// leading or trailing '/', no empty, "." or ".." component); "" (the whole workspace)
// is allowed.
void check_named_paths(const std::vector<std::string>& named);

// Whether path is named or below a named path.
bool under_named(const std::string& path, const std::vector<std::string>& named);

// The paths of changes (and of large's changes) a restore of named makes: those at or
// below a named path, and the directories above them the target adds. Error
// kConflict, naming it, when what stands above a named path in the workspace is not a
// directory while the target has one there: restoring it would touch a path not named.
std::set<std::string> paths_to_restore(const std::vector<std::string>& named,
                                       const std::vector<TreeChange>& changes,
                                       const LargeFilePlan& large);

}  // namespace fsnap
