#include "fsnap/workspace_discovery.hpp"

#include <cstdlib>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/store.hpp"
#include "git_handles.hpp"
#include "global_ignores.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

// The repository whose work tree encloses dir, and that work tree's root (real path).
struct WorkTree {
  git::Repository repo;
  fs::path root;
};

std::optional<WorkTree> open_work_tree(const fs::path& dir) {
  git::ensure_initialized();
  // As git: the search stops below a ceiling directory the user set.
  const char* ceiling = std::getenv("GIT_CEILING_DIRECTORIES");
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, dir.c_str(), 0,
                                   ceiling != nullptr && *ceiling != '\0' ? ceiling : nullptr);
  WorkTree out{git::Repository(raw), {}};
  // None, a bare one, or one git would refuse too (owned by another user): no work tree.
  if (rc != 0 || git_repository_is_bare(raw) || git_repository_workdir(raw) == nullptr) {
    return std::nullopt;
  }
  boost::system::error_code ec;
  out.root = fs::canonical(git_repository_workdir(raw), ec);
  if (ec) return std::nullopt;
  return out;
}

}  // namespace

std::optional<fs::path> enclosing_git_work_tree(const fs::path& dir) {
  std::optional<WorkTree> work_tree = open_work_tree(dir);
  if (!work_tree) return std::nullopt;
  return work_tree->root;
}

std::optional<bool> git_leaves_out(const fs::path& file) {
  boost::system::error_code ec;
  fs::path folder = fs::canonical(fs::absolute(file).parent_path(), ec);
  if (ec) return std::nullopt;
  std::optional<WorkTree> work_tree = open_work_tree(folder);
  if (!work_tree) return std::nullopt;
  std::string rel = (folder / file.filename()).lexically_relative(work_tree->root).generic_string();
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, work_tree->repo.get()) == 0) {
    git::Index index(raw_index);
    if (git_index_get_bypath(index.get(), rel.c_str(), 0) != nullptr) return false;  // tracked
  }
  try {
    add_global_ignores(work_tree->repo.get());
  } catch (const Error&) {
    return std::nullopt;  // rules it cannot read: not told
  }
  int ignored = 0;
  if (git_ignore_path_is_ignored(&ignored, work_tree->repo.get(), rel.c_str()) != 0) {
    return std::nullopt;
  }
  return ignored != 0;
}

FoundWorkspace find_workspace(const fs::path& start, const StoreLocator& store_for,
                              const PassedOver& passed_over) {
  boost::system::error_code ec;
  fs::path real = fs::canonical(fs::absolute(start), ec);
  if (ec || !fs::is_directory(real, ec)) {
    throw Error(ErrorCode::kNotFound, "workspace is not a directory: " + start.string());
  }
  for (fs::path dir = real; !dir.empty(); dir = dir.parent_path()) {
    if (dir != real && passed_over(dir)) continue;
    std::optional<fs::path> store = store_for(dir);
    if (store && Store::is_store_of(*store, dir)) {
      return {dir, dir == real ? WorkspaceFound::kStart : WorkspaceFound::kStore};
    }
    if (dir == dir.root_path()) break;
  }
  std::optional<fs::path> work_tree = enclosing_git_work_tree(real);
  if (work_tree && *work_tree != real && !passed_over(*work_tree)) {
    return {*work_tree, WorkspaceFound::kGitWorkTree};
  }
  return {real, WorkspaceFound::kStart};
}

}  // namespace fsnap
