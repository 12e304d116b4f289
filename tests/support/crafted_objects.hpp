// Objects written into a git repository exactly as given, bypassing every check a
// well-behaved writer makes: what a store or fleet remote written by someone else may
// hold. For tests of what shadowbox refuses to trust.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace testing_support {

// One entry of a crafted tree: its mode as git writes it ("100644", "100755", "40000",
// "120000"), any name at all, and the hex id of the object it names.
struct RawEntry {
  std::string mode;
  std::string name;
  std::string oid;
};

// Writes a blob into the repository at git_dir; returns its hex id.
std::string craft_blob(const boost::filesystem::path& git_dir, std::string_view data);
// Writes a tree holding entries in the given order, unchecked; returns its hex id.
std::string craft_tree(const boost::filesystem::path& git_dir,
                       const std::vector<RawEntry>& entries);
// A tree holding a directory named name, holding one named name... depth levels deep,
// with leaf (a tree's hex id) at the bottom; returns the top tree's hex id.
std::string craft_nested_tree(const boost::filesystem::path& git_dir, const std::string& name,
                              std::size_t depth, const std::string& leaf);
// Commits tree on top of the commit ref points to, with that commit's message (its
// Checkpoint-Id trailer replaced by checkpoint_id, so it reads as a checkpoint of its
// own), and moves ref to it; returns the new commit's hex id.
std::string craft_commit_on(const boost::filesystem::path& git_dir, const std::string& ref,
                            const std::string& tree, const std::string& checkpoint_id);

}  // namespace testing_support
