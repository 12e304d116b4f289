// The names shadowbox writes to disk from a tree, and the trees it will write. Private
// to fsnap.
//
// A tree in the store may have been written by someone else (a fleet remote, a store
// another user could write): its entry names are checked before any of them becomes a
// path. A capture never records a name these checks refuse, so a tree shadowbox made
// itself always passes them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shadow_repo_impl.hpp"

namespace fsnap {

// Whether a directory entry named name is a git repository's directory on some
// filesystem: ".git" in any letter case, with the trailing dots, spaces or ":stream"
// NTFS ignores, as NTFS's short name "git~1", or with the invisible characters HFS+
// ignores. Captures leave such entries out, as they leave out ".git".
bool names_git_directory(std::string_view name);

// Why a tree entry named name must not be written to disk ("empty", "a '.' or '..'",
// ...), or nullptr when it may.
const char* unsafe_entry_name(std::string_view name);

// Checks the tree and every tree below it not in checked (each one checked is added):
// every entry name passes unsafe_entry_name, no name appears twice in a tree, and every
// mode is one shadowbox writes. what names the tree in the error (kPathEscape for a
// name, kCorrupt otherwise), which quotes the offending path.
void check_tree_names(const ShadowRepo::Impl& repo, const git_oid& tree, const std::string& what,
                      OidSet& checked);

// The path of the entry name in directory dir ("" is the workspace's root).
std::string join(const std::string& dir, std::string_view name);

// Directories nested deeper than this in a tree are refused (git refuses them too):
// a tree written by someone else must not exhaust the stack of what walks it.
inline constexpr std::size_t kMaxTreeDepth = 2048;

// Throws kCorrupt when a directory nested depth deep (the top: 0), at path, is too deep.
void check_tree_depth(std::size_t depth, const std::string& path, const std::string& what);

// Throws kCorrupt when names (sorted by this call) has one name twice; path is their
// directory.
void check_unique_names(std::vector<std::string_view>& names, const std::string& path,
                        const std::string& what);

// Throws kPathEscape if the entry named name of the directory at path (the tree's
// top: "") must not be written; what names the tree.
void check_entry_name(std::string_view name, const std::string& path, const std::string& what);

}  // namespace fsnap
