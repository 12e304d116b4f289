#include "checkout_index.hpp"

#include <unistd.h>

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

// Copies from to a temporary file beside to, synced, then renames it into place.
bool copy_file_into(const fs::path& from, const fs::path& to) {
  fs::path tmp = to;
  tmp += ".tmp-" + std::to_string(::getpid());
  boost::system::error_code ec;
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing, ec);
  try {
    if (!ec) fsync_path(tmp);
  } catch (const Error&) {
    ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
  }
  if (!ec) fs::rename(tmp, to, ec);
  if (ec) {
    boost::system::error_code ignored;
    fs::remove(tmp, ignored);
  }
  return !ec;
}

// Packs copied (not linked) into a store on another filesystem, at most: past that,
// the objects a capture needs come one by one from the user's repository instead.
constexpr std::uintmax_t kMaxCopiedPackBytes = std::uintmax_t{1} << 30;

// Links the user's packs (those with both files; not git's cruft packs, whose objects
// nothing reaches) into the store's pack directory, as `git clone --local` does: hard
// links where the filesystem allows them, else copies up to kMaxCopiedPackBytes. The
// .pack goes before its .idx, so that no reader ever finds an index without its pack.
void link_packs(const fs::path& user_packs, const fs::path& store_packs) {
  boost::system::error_code ec;
  fs::create_directories(store_packs, ec);
  std::uintmax_t copied = 0;
  for (fs::directory_iterator it(user_packs, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& idx = it->path();
    if (idx.extension() != ".idx") continue;
    fs::path pack = fs::path(idx).replace_extension(".pack");
    boost::system::error_code file_ec;
    std::uintmax_t size = fs::file_size(pack, file_ec);
    if (file_ec || fs::exists(fs::path(idx).replace_extension(".mtimes"), file_ec) ||
        fs::exists(store_packs / idx.filename(), file_ec)) {
      continue;
    }
    fs::path to_pack = store_packs / pack.filename();
    fs::path to_idx = store_packs / idx.filename();
    if (::link(pack.c_str(), to_pack.c_str()) == 0 || errno == EEXIST) {
      if (::link(idx.c_str(), to_idx.c_str()) != 0 && errno != EEXIST) copy_file_into(idx, to_idx);
      continue;
    }
    if (copied + size > kMaxCopiedPackBytes) continue;
    if (copy_file_into(pack, to_pack) && copy_file_into(idx, to_idx)) copied += size;
  }
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

std::unique_ptr<CheckoutIndex> CheckoutIndex::open(const std::string& root,
                                                   const std::string& store_objects) {
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

  git_odb* user_odb = nullptr;
  if (git_repository_odb(&user_odb, repo) != 0) {
    git_error_clear();
    return nullptr;
  }
  out->user_odb_.reset(user_odb);

  link_packs(common / "objects" / "pack", fs::path(store_objects) / "pack");
  git_odb* packs = nullptr;
  git::check(git_odb_new(&packs), "cannot create object database");
  out->store_packs_.reset(packs);
  git_odb_backend* backend = nullptr;
  git::check(git_odb_backend_pack(&backend, store_objects.c_str()),
             "cannot open packs in " + store_objects);
  git::check(git_odb_add_backend(packs, backend, 1), "cannot add pack backend");
  return out;
}

std::optional<git_oid> CheckoutIndex::blob_for(
    const std::string& path, std::uint32_t mode, const struct stat& st,
    const std::function<git_oid(std::string_view)>& store) const {
  if (static_cast<std::uint64_t>(st.st_size) > kStreamedBlobSize) return std::nullopt;
  auto found = entries_.find(path);
  if (found == entries_.end() || !index_entry_vouches(*found->second, st, mode, index_mtime_)) {
    return std::nullopt;
  }
  const git_oid& id = found->second->id;
  auto size = static_cast<std::size_t>(st.st_size);
  std::size_t packed_size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&packed_size, &type, store_packs_.get(), &id) == 0) {
    if (type == GIT_OBJECT_BLOB && packed_size == size) return id;
    return std::nullopt;
  }
  git_error_clear();
  // Not in a pack: a loose object of the user's (or one from alternates), copied in.
  git_odb_object* raw = nullptr;
  if (git_odb_read(&raw, user_odb_.get(), &id) != 0) {
    git_error_clear();
    return std::nullopt;
  }
  git::OdbObject object(raw);
  if (git_odb_object_type(raw) != GIT_OBJECT_BLOB || git_odb_object_size(raw) != size) {
    return std::nullopt;
  }
  std::string_view data(static_cast<const char*>(git_odb_object_data(raw)),
                        git_odb_object_size(raw));
  git_oid written = store(data);
  if (!git_oid_equal(&written, &id)) return std::nullopt;  // a corrupt user object
  return id;
}

bool CheckoutIndex::packed(const git_oid& oid) const {
  return git_odb_exists_ext(store_packs_.get(), &oid, GIT_ODB_LOOKUP_NO_REFRESH) != 0;
}

}  // namespace fsnap
