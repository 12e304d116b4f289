// The git tree object format: entry modes, git's entry order and the raw encoding.
// Private to fsnap.
#pragma once

#include <git2/oid.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fsnap {

inline constexpr std::uint32_t kModeTree = 0040000;
inline constexpr std::uint32_t kModeFile = 0100644;
inline constexpr std::uint32_t kModeExec = 0100755;
inline constexpr std::uint32_t kModeLink = 0120000;

// A tree entry about to be encoded. The bytes name views must outlive the item.
struct TreeItem {
  std::string_view name;
  std::uint32_t mode;
  git_oid oid;
};

// git's tree order: names compare bytewise, a directory as if its name ended in '/'.
bool git_tree_less(const TreeItem& a, const TreeItem& b);

// Sorts items into git's order and returns the body of the tree object.
std::string encode_tree(std::vector<TreeItem>& items);

}  // namespace fsnap
