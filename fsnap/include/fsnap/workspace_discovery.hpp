// find_workspace — the workspace a command works on when none is named, found as git
// finds its repository: a command started in a subdirectory of a project protects the
// whole project, not the subdirectory. Also what that git work tree keeps out of it.
//
// Thread-safety: a plain function (it reads the environment: GIT_CEILING_DIRECTORIES).
#pragma once

#include <functional>
#include <optional>

#include <boost/filesystem/path.hpp>

namespace fsnap {

// How find_workspace chose the workspace.
enum class WorkspaceFound {
  kStart,        // the start directory itself: nothing encloses it
  kStore,        // an enclosing directory that has a store already
  kGitWorkTree,  // the root of the git work tree enclosing the start
};

// The workspace find_workspace chose.
struct FoundWorkspace {
  boost::filesystem::path path;  // a real (canonical) path
  WorkspaceFound how = WorkspaceFound::kStart;
};

// Where the store of a directory would be (Store::default_location, or a store named on
// the command line), or nullopt if it cannot be told.
using StoreLocator =
    std::function<std::optional<boost::filesystem::path>(const boost::filesystem::path&)>;
// Whether a directory is never chosen unless it is the start itself (the user's HOME
// and the root: a store or a git work tree there is passed over).
using PassedOver = std::function<bool(const boost::filesystem::path&)>;

// The workspace of a command started in start (a directory): the nearest directory
// enclosing it, start included, with an existing store of it where store_for says
// (Store::is_store_of); else the root of the git work tree enclosing start, as git finds
// it (libgit2's discovery: not across filesystems, GIT_CEILING_DIRECTORIES respected, a
// bare repository has none); else start. Error kNotFound if start is not a directory.
FoundWorkspace find_workspace(const boost::filesystem::path& start, const StoreLocator& store_for,
                              const PassedOver& passed_over);

// The root of the git work tree enclosing dir (real path), as find_workspace finds it;
// nullopt if there is none.
std::optional<boost::filesystem::path> enclosing_git_work_tree(const boost::filesystem::path& dir);

// Whether git leaves file out of the work tree its folder is in: not tracked, and
// ignored by the repository's rules or the user's global ones (what a file naming this
// machine's paths needs, so that a commit of everything does not take it). nullopt if
// the folder is in no git work tree.
std::optional<bool> git_leaves_out(const boost::filesystem::path& file);

}  // namespace fsnap
