#include "checkout_index.hpp"

#include <string>

#include <boost/filesystem.hpp>

#include "fsnap/atomic_file.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

bool same_time(const git_index_time& t, const timespec& ts) {
  return static_cast<std::uint32_t>(t.seconds) == static_cast<std::uint32_t>(ts.tv_sec) &&
         t.nanoseconds == static_cast<std::uint32_t>(ts.tv_nsec);
}

// Whether t is at or after the index file's own time (git's is_racy_timestamp).
bool at_or_after(const git_index_time& t, const timespec& index_mtime) {
  auto sec = static_cast<std::uint32_t>(t.seconds);
  auto index_sec = static_cast<std::uint32_t>(index_mtime.tv_sec);
  return sec > index_sec ||
         (sec == index_sec && t.nanoseconds >= static_cast<std::uint32_t>(index_mtime.tv_nsec));
}

bool same_file_version(const struct stat& a, const struct stat& b) {
  return a.st_ino == b.st_ino && a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

// Whether an attributes file may name a filter driver: such a filter can change what
// goes into the index without changing the size (the size check catches the others).
bool names_a_filter(const fs::path& file) {
  std::optional<std::string> text;
  try {
    text = read_small_file(file);
  } catch (const Error&) {
    return true;  // unreadable: assume the worst
  }
  return text && text->find("filter") != std::string::npos;
}

std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

// Whether index entry e vouches for a file whose lstat is st and whose git mode is mode,
// in an index file last written at index_mtime: git's stat check (mode, size, mtime and
// ctime to the nanosecond, inode; 32-bit fields compared as git stores them) and its
// racy rule (an entry whose file changed at or after the index was written may have
// changed again since without its stat showing it). Entries git itself does not stat
// (assume-unchanged, skip-worktree), intent-to-add and conflict entries never vouch.
bool index_entry_vouches(const git_index_entry& e, const struct stat& st, std::uint32_t mode,
                         const timespec& index_mtime) {
  if (GIT_INDEX_ENTRY_STAGE(&e) != 0 || (e.flags & GIT_INDEX_ENTRY_VALID) != 0 ||
      (e.flags_extended & (GIT_INDEX_ENTRY_INTENT_TO_ADD | GIT_INDEX_ENTRY_SKIP_WORKTREE)) != 0) {
    return false;
  }
  return e.mode == mode && e.file_size == static_cast<std::uint32_t>(st.st_size) &&
         e.ino == static_cast<std::uint32_t>(st.st_ino) && same_time(e.mtime, st.st_mtim) &&
         same_time(e.ctime, st.st_ctim) && !at_or_after(e.mtime, index_mtime) &&
         !at_or_after(e.ctime, index_mtime);
}

}  // namespace

std::unique_ptr<CheckoutIndex> CheckoutIndex::open(const std::string& root) {
  struct stat dotgit;
  if (::lstat((root + "/.git").c_str(), &dotgit) != 0) return nullptr;
  git::ensure_initialized();
  std::unique_ptr<CheckoutIndex> out(new CheckoutIndex());
  git_repository* repo = nullptr;
  if (git_repository_open_ext(&repo, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    git_error_clear();
    return nullptr;
  }
  out->user_.reset(repo);
  const char* workdir = git_repository_workdir(repo);
  if (workdir == nullptr) return nullptr;
  boost::system::error_code workdir_ec;
  boost::system::error_code root_ec;
  fs::path top = fs::canonical(workdir, workdir_ec);
  if (workdir_ec || top != fs::canonical(root, root_ec) || root_ec) return nullptr;

  // The index as one version of its file: the racy rule needs the time of the version
  // read, so a rewrite while it is read leaves the capture without the index.
  std::string index_file = std::string(git_repository_path(repo)) + "index";
  std::optional<struct stat> before = stat_of(index_file);
  git_index* index = nullptr;
  if (!before || git_index_open(&index, index_file.c_str()) != 0) {
    git_error_clear();
    return nullptr;
  }
  out->index_.reset(index);
  std::optional<struct stat> after = stat_of(index_file);
  if (!after || !same_file_version(*before, *after)) return nullptr;
  out->index_mtime_ = after->st_mtim;

  // Attribute files that may name a filter: the repository's own, the work tree's top
  // one (tracked or not) and every tracked one. (The user's global attributes file is
  // not read: shadowbox reads no global git configuration. The size check still holds.)
  fs::path common = git_repository_commondir(repo);
  if (names_a_filter(common / "info" / "attributes") ||
      names_a_filter(fs::path(root) / ".gitattributes")) {
    return nullptr;
  }
  std::size_t count = git_index_entrycount(index);
  out->entries_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const git_index_entry* e = git_index_get_byindex(index, i);
    std::string_view path(e->path);
    if (path == ".gitattributes" || path.ends_with("/.gitattributes")) {
      if (names_a_filter(fs::path(root) / e->path)) return nullptr;
    }
    if (GIT_INDEX_ENTRY_STAGE(e) == 0) out->entries_.emplace(path, e);
  }

  out->packs_ = CheckoutPacks::open(common / "objects" / "pack");
  return out;
}

std::optional<git_oid> CheckoutIndex::blob_for(const std::string& path, std::uint32_t mode,
                                               const struct stat& st) const {
  if (static_cast<std::uint64_t>(st.st_size) > kStreamedBlobSize) return std::nullopt;
  auto found = entries_.find(path);
  if (found == entries_.end() || !index_entry_vouches(*found->second, st, mode, index_mtime_)) {
    return std::nullopt;
  }
  return found->second->id;
}

bool CheckoutIndex::compressed_blob(const git_oid& id, std::string_view content,
                                    std::string& compressed) const {
  return packs_.compressed_blob(id, content, compressed);
}

}  // namespace fsnap
