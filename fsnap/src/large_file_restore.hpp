// What a restore does with the files over capture.max_file_size, which no tree holds:
// planned from what the current capture skipped and what the target checkpoint skipped,
// each with the copy the store keeps of it (large_file_copies.hpp). Private to fsnap.
//
//   a file the target has, that is not there now as it was: put back from its copy —
//     unless the copy is gone or was written in place since (a hard link), or the file
//     there now has no copy of its own to come back to: then it is named, with why, and
//     what is at its path now stays;
//   a file there now that the target does not have: removed (its copy stays, for the
//     safety checkpoint) — unless it has no copy: then it stays, as any path that is
//     not captured;
//   a path the target skipped for its type (a socket, a FIFO) that is gone: named.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fsnap/snapshot.hpp"
#include "fsnap/tree_change.hpp"
#include "large_file_copies.hpp"

namespace fsnap {

// What a restore does with the files over the size limit.
struct LargeFilePlan {
  std::vector<SkippedPath> put_back;       // the target's files, from their copies
  std::vector<std::string> remove;         // files there now that the target lacks
  std::vector<UnrestoredPath> unrestored;  // what the target has that cannot come back
  std::set<std::string> untouchable;       // skipped paths there now that stay as they are
  // put_back and remove as changes from now to the target (sides without object ids).
  std::vector<TreeChange> changes;
};

// The plan from the workspace whose capture skipped now to a checkpoint that skipped
// target, with the store's copies.
LargeFilePlan plan_large_files(const std::vector<SkippedPath>& now,
                               const std::vector<SkippedPath>& target,
                               const LargeFileCopies& copies);

// Narrows plan to the paths in only (a restore of some paths: RestoreOptions::only).
void keep_only(LargeFilePlan& plan, const std::set<std::string>& only);

}  // namespace fsnap
