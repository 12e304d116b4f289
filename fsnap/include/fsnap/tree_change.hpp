// TreeChange — one difference between two captured trees (or a tree and the
// workspace), as restore, `show` and `diff` report them.
//
// Changes come in path order, a directory before its contents. A directory that
// appears or disappears as a whole is reported itself (type kDirectory) as well as
// every entry inside it, so empty directories are visible too.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "fsnap/filesystem.hpp"

namespace fsnap {

// One side of a change: what was (or will be) at the path.
struct TreeEntryInfo {
  EntryType type = EntryType::kFile;
  bool executable = false;
  std::string oid;  // hex object id of the blob or tree

  friend bool operator==(const TreeEntryInfo&, const TreeEntryInfo&) = default;
};

// A path whose entry differs between two trees.
struct TreeChange {
  enum class Kind { kAdded, kDeleted, kModified, kTypeChanged };
  Kind kind = Kind::kModified;
  std::string path;
  std::optional<TreeEntryInfo> before;  // absent for kAdded
  std::optional<TreeEntryInfo> after;   // absent for kDeleted

  friend bool operator==(const TreeChange&, const TreeChange&) = default;
};

// One letter per kind, as in `git diff --name-status`: A, D, M, T.
char status_letter(TreeChange::Kind kind);

}  // namespace fsnap
