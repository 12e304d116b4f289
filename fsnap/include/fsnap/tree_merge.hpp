// TreeMerge — what ShadowRepo::merge_trees found when it merged two trees' changes
// from a common ancestor, as git merges (and reverts) do: path by path, without rename
// detection, text files merged line by line. `shadowbox undo` merges a tool call's
// changes reversed into the live workspace with it.
//
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fsnap/tree_change.hpp"

namespace fsnap {

// A path the merge could not decide: both sides changed it in ways that do not merge
// (the same lines, a binary file, a file one side removed and the other changed, a
// file where the other side has a directory...). Each side's entry, absent where that
// side has none.
struct MergeConflict {
  std::string path;
  std::optional<TreeEntryInfo> ancestor;
  std::optional<TreeEntryInfo> ours;
  std::optional<TreeEntryInfo> theirs;
  bool binary = false;  // a side's content is binary (no line-by-line merge)

  friend bool operator==(const MergeConflict&, const MergeConflict&) = default;
};

// The result of a three-way merge of trees.
struct TreeMerge {
  // The merged tree (hex id) when nothing conflicts, else "". It holds no empty
  // directory (a merge works on files, as git's index does): compare it with ours
  // only at the paths the merge was meant to change.
  std::string tree;
  std::vector<MergeConflict> conflicts;  // in path order
};

}  // namespace fsnap
