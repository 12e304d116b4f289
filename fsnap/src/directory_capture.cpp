// ShadowRepo::capture_directory, commit_to_ref, ref_tree and materialize: storing a
// directory that is not the workspace (an agent's HOME) and writing it back out.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <boost/filesystem/operations.hpp>

#include "entry_names.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/shadow_repo.hpp"
#include "shadow_repo_impl.hpp"
#include "stat_cache.hpp"
#include "workspace_capture.hpp"

namespace fsnap {

namespace {
// The trailer commit_to_ref's commits carry: when they were made, to the microsecond.
constexpr std::string_view kCommittedAtTrailer = "Committed-At: ";
}  // namespace

namespace fs = boost::filesystem;

std::string ShadowRepo::capture_directory(const fs::path& dir, const CaptureOptions& options) {
  boost::system::error_code ec;
  fs::path real = fs::canonical(dir, ec);
  if (ec || !fs::is_directory(real)) {
    throw Error(ErrorCode::kNotFound, "not a directory: " + dir.string());
  }
  // No stat cache is kept for such a directory, so the racy-timestamp time is unused.
  CaptureResult result = capture_workspace(real.string(), *impl_, options, StatCache(),
                                           /*now_ns=*/0);
  return git::to_hex(result.tree);
}

std::string ShadowRepo::commit_to_ref(const std::string& ref, std::string_view tree,
                                      const std::string& message) {
  if (ref.rfind(layout::kRunRefPrefix, 0) == 0) {
    throw Error(ErrorCode::kInvalidArgument, "runs hold checkpoints only: " + ref);
  }
  auto now = std::chrono::system_clock::now();
  // git's commit time is in seconds; the trailer says when to the microsecond.
  std::string full =
      message + "\n\n" + std::string(kCommittedAtTrailer) + format_timestamp(now) + "\n";
  CommitOnRef made = impl_->commit_on_tip(ref, git::from_hex(tree), shadowbox_signature(now), full,
                                          "cannot commit to " + ref);
  impl_->move_ref(ref, made.commit, made.parent, "shadowbox");
  return git::to_hex(made.commit);
}

std::optional<std::string> ShadowRepo::ref_tree(const std::string& ref) const {
  std::optional<git_oid> tip = impl_->ref_target(ref);
  if (!tip) return std::nullopt;
  git_commit* raw = nullptr;
  git::check(git_commit_lookup(&raw, impl_->repo.get(), &*tip), "cannot read " + ref);
  git::Commit commit(raw);
  return git::to_hex(*git_commit_tree_id(commit.get()));
}

std::optional<std::string> ShadowRepo::commit_tree(std::string_view commit) const {
  git_oid id;
  if (commit.size() != GIT_OID_HEXSZ || git_oid_fromstrn(&id, commit.data(), commit.size()) < 0) {
    git_error_clear();
    return std::nullopt;
  }
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, impl_->repo.get(), &id) < 0) {
    git_error_clear();
    return std::nullopt;
  }
  git::Commit found(raw);
  return git::to_hex(*git_commit_tree_id(found.get()));
}

std::optional<std::chrono::system_clock::time_point> ShadowRepo::ref_time(
    const std::string& ref) const {
  std::optional<git_oid> tip = impl_->ref_target(ref);
  if (!tip) return std::nullopt;
  git_commit* raw = nullptr;
  git::check(git_commit_lookup(&raw, impl_->repo.get(), &*tip), "cannot read " + ref);
  git::Commit commit(raw);
  return std::chrono::system_clock::from_time_t(git_commit_time(commit.get()));
}

std::optional<std::string> ShadowRepo::ref_tree_at(const std::string& ref,
                                                   std::chrono::system_clock::time_point at) const {
  std::optional<git_oid> id = impl_->ref_target(ref);
  while (id) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, impl_->repo.get(), &*id), "cannot read " + ref);
    git::Commit commit(raw);
    // When it was made: its trailer, else (a commit of an older version) its time, to
    // the second.
    std::string_view message = git_commit_message(commit.get());
    std::optional<std::chrono::system_clock::time_point> made;
    if (std::size_t at_trailer = message.rfind(kCommittedAtTrailer);
        at_trailer != std::string_view::npos) {
      std::string_view value = message.substr(at_trailer + kCommittedAtTrailer.size());
      made = parse_timestamp(value.substr(0, value.find('\n')));
    }
    bool in_time = made ? *made <= at
                        : git_commit_time(commit.get()) <= std::chrono::system_clock::to_time_t(at);
    if (in_time) return git::to_hex(*git_commit_tree_id(commit.get()));
    id.reset();
    if (git_commit_parentcount(commit.get()) > 0) id = *git_commit_parent_id(commit.get(), 0);
  }
  return std::nullopt;
}

namespace {

void materialize_tree(const ShadowRepo::Impl& impl, const git_oid& tree_oid, const fs::path& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0) {
    throw system_error("cannot create " + dir.string(), errno);
  }
  git::Tree tree = impl.lookup_tree(tree_oid);
  std::size_t n = git_tree_entrycount(tree.get());
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    fs::path path = dir / git_tree_entry_name(e);
    git_filemode_t mode = git_tree_entry_filemode(e);
    if (mode == GIT_FILEMODE_TREE) {
      materialize_tree(impl, *git_tree_entry_id(e), path);
      continue;
    }
    std::string data = impl.read(*git_tree_entry_id(e), GIT_OBJECT_BLOB);
    if (mode == GIT_FILEMODE_LINK) {
      if (::symlink(data.c_str(), path.c_str()) != 0) {
        throw system_error("cannot create " + path.string(), errno);
      }
      continue;
    }
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                       mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644));
    if (!fd.valid()) throw system_error("cannot create " + path.string(), errno);
    if (!write_all(fd.get(), data.data(), data.size())) {
      throw system_error("cannot write " + path.string(), errno);
    }
  }
}

}  // namespace

void ShadowRepo::materialize(std::string_view tree, const fs::path& dir) const {
  if (fs::exists(fs::symlink_status(dir))) {
    throw Error(ErrorCode::kInvalidArgument, "refusing to write into existing " + dir.string());
  }
  // Every name first: the tree may come from a fleet's remote, and nothing of it is
  // written unless all of it stays inside dir.
  OidSet checked;
  check_tree_names(*impl_, git::from_hex(tree), "tree " + std::string(tree), checked);
  materialize_tree(*impl_, git::from_hex(tree), dir);
}

}  // namespace fsnap
