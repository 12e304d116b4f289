#include "large_file_copies.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "git_handles.hpp"
#include "retention_age.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

namespace {

// Files a capture writes before renaming them to their copy's name: tmp-<pid>-<n>.
constexpr std::string_view kTempPrefix = "tmp-";

std::int64_t ns_of(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::string temp_name() {
  static std::atomic<unsigned> counter{0};
  return std::string(kTempPrefix) + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

// Whether the file open at fd (or whose stat is now) is still the one st described.
bool same_file(const struct stat& now, const struct stat& st) {
  return now.st_dev == st.st_dev && now.st_ino == st.st_ino && now.st_size == st.st_size &&
         ns_of(now.st_mtim) == ns_of(st.st_mtim);
}

// Whether a copy (stat have) still holds the file skipped recorded.
bool holds(const struct stat& have, std::uint64_t size, std::int64_t mtime_ns) {
  return S_ISREG(have.st_mode) && static_cast<std::uint64_t>(have.st_size) == size &&
         ns_of(have.st_mtim) == mtime_ns;
}

// Gives the file open at fd the mode and mtime of st (its atime is now).
bool take_mode_and_mtime(int fd, const struct stat& st) {
  timespec times[2] = {{0, UTIME_NOW}, st.st_mtim};
  return ::fchmod(fd, st.st_mode & 07777) == 0 && ::futimens(fd, times) == 0;
}

// The directory of the copies, made private if create and missing; invalid if it
// cannot be opened (or made).
UniqueFd open_dir(const boost::filesystem::path& dir, bool create) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  UniqueFd fd(::open(dir.c_str(), kFlags));
  if (!fd.valid() && errno == ENOENT && create &&
      (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST)) {
    fd.reset(::open(dir.c_str(), kFlags));
  }
  return fd;
}

// The names in the directory open at dir, without "." and "..".
std::vector<std::string> names_in(int dir) {
  std::vector<std::string> names;
  DIR* listing = ::fdopendir(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (listing == nullptr) return names;
  while (dirent* e = ::readdir(listing)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(listing);
  return names;
}

}  // namespace

LargeFileCopies::LargeFileCopies(boost::filesystem::path dir,
                                 std::shared_ptr<const CopyOperations> ops)
    : dir_(std::move(dir)), ops_(ops ? std::move(ops) : CopyOperations::system()) {}

std::string LargeFileCopies::name_for(const std::string& path, const struct stat& st) {
  std::string identity = path + '\0' + std::to_string(st.st_dev) + '\0' +
                         std::to_string(st.st_ino) + '\0' + std::to_string(st.st_size) + '\0' +
                         std::to_string(ns_of(st.st_mtim));
  git_oid oid;
  git::check(git_odb_hash(&oid, identity.data(), identity.size(), GIT_OBJECT_BLOB),
             "cannot name the copy of " + path);
  return git::to_hex(oid);
}

bool LargeFileCopies::is_copy_name(const std::string& name) {
  return name.size() == 40 && is_hex(name);
}

std::optional<LargeFileCopy> LargeFileCopies::keep(int dirfd, const std::string& name,
                                                   const std::string& path,
                                                   const struct stat& st) const {
  UniqueFd dir = open_dir(dir_, /*create=*/true);
  if (!dir.valid()) return std::nullopt;
  LargeFileCopy copy{name_for(path, st), ns_of(st.st_mtim)};
  struct stat have;
  if (::fstatat(dir.get(), copy.name.c_str(), &have, AT_SYMLINK_NOFOLLOW) == 0) {
    if (holds(have, static_cast<std::uint64_t>(st.st_size), copy.mtime_ns)) return copy;
    ::unlinkat(dir.get(), copy.name.c_str(), 0);  // a hard link written in place and put back
  }
  UniqueFd from(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat now;
  if (!from.valid() || ::fstat(from.get(), &now) != 0 || !same_file(now, st)) return std::nullopt;

  // A reflink or a copy: written under a temporary name, checked, then named.
  auto by_writing = [&](const auto& write) -> bool {
    std::string temp = temp_name();
    UniqueFd to(::openat(dir.get(), temp.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!to.valid()) return false;
    bool ok = write(from.get(), to.get()) == 0 && ::fstat(from.get(), &now) == 0 &&
              same_file(now, st) && take_mode_and_mtime(to.get(), st) &&
              ::renameat(dir.get(), temp.c_str(), dir.get(), copy.name.c_str()) == 0;
    if (!ok) ::unlinkat(dir.get(), temp.c_str(), 0);
    return ok;
  };
  if (ops_->clone && by_writing(ops_->clone)) return copy;
  if (ops_->link && ops_->link(dirfd, name.c_str(), dir.get(), copy.name.c_str()) == 0) {
    // The name may have been given to another file since the stat.
    if (::fstatat(dir.get(), copy.name.c_str(), &have, AT_SYMLINK_NOFOLLOW) == 0 &&
        same_file(have, st)) {
      return copy;
    }
    ::unlinkat(dir.get(), copy.name.c_str(), 0);
    return std::nullopt;
  }
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (ops_->copy && by_writing([&](int f, int t) { return ops_->copy(f, t, size); })) return copy;
  return std::nullopt;
}

std::string LargeFileCopies::why_not(const SkippedPath& skipped) const {
  if (!skipped.copy) {
    return "no copy of it was kept (the checkpoint was taken before shadowbox kept copies of "
           "files over capture.max_file_size, or the store could not make one)";
  }
  if (!is_copy_name(skipped.copy->name)) return "the checkpoint names no valid copy of it";
  struct stat have;
  if (::lstat((dir_ / skipped.copy->name).c_str(), &have) != 0) {
    return errno == ENOENT ? "its copy is gone from the store"
                           : errno_message("its copy cannot be read", errno);
  }
  if (!holds(have, skipped.size, skipped.copy->mtime_ns)) {
    return "it was written in place after the checkpoint, and its copy with it (a hard link "
           "shares the file)";
  }
  return "";
}

void LargeFileCopies::put_back(const SkippedPath& skipped, int dirfd,
                               const std::string& temp) const {
  if (std::string why = why_not(skipped); !why.empty()) {
    throw Error(ErrorCode::kConflict, "cannot put back " + skipped.path + ": " + why);
  }
  const std::string& name = skipped.copy->name;
  UniqueFd dir = open_dir(dir_, /*create=*/false);
  UniqueFd from(dir.valid() ? ::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                            : -1);
  struct stat st;
  if (!from.valid() || ::fstat(from.get(), &st) != 0) {
    throw system_error("cannot read the copy of " + skipped.path, errno);
  }
  if (!holds(st, skipped.size, skipped.copy->mtime_ns)) {
    throw Error(ErrorCode::kConflict,
                "cannot put back " + skipped.path + ": its copy changed while being read");
  }
  int err = 0;
  auto by_writing = [&](const auto& write) -> bool {
    UniqueFd to(
        ::openat(dirfd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!to.valid()) {
      err = errno;
      return false;
    }
    err = write(from.get(), to.get());
    if (err == 0 && !take_mode_and_mtime(to.get(), st)) err = errno;
    if (err != 0) ::unlinkat(dirfd, temp.c_str(), 0);
    return err == 0;
  };
  if (ops_->clone && by_writing(ops_->clone)) return;
  if (ops_->link && (err = ops_->link(dir.get(), name.c_str(), dirfd, temp.c_str())) == 0) return;
  auto size = skipped.size;
  if (ops_->copy && by_writing([&](int f, int t) { return ops_->copy(f, t, size); })) return;
  throw system_error("cannot write " + skipped.path + " from its copy", err != 0 ? err : EIO);
}

std::size_t LargeFileCopies::prune(const std::set<std::string>& needed,
                                   std::chrono::system_clock::time_point now,
                                   std::chrono::seconds grace) const {
  UniqueFd dir = open_dir(dir_, /*create=*/false);
  if (!dir.valid()) return 0;
  std::size_t removed = 0;
  for (const std::string& n : names_in(dir.get())) {
    struct stat st;
    if (needed.count(n) != 0 || ::fstatat(dir.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (younger_than(now, st.st_ctime, grace)) continue;
    if (::unlinkat(dir.get(), n.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == 0) ++removed;
  }
  return removed;
}

std::map<std::string, std::uint64_t> LargeFileCopies::disk_usage() const {
  std::map<std::string, std::uint64_t> out;
  UniqueFd dir = open_dir(dir_, /*create=*/false);
  if (!dir.valid()) return out;
  struct File {
    std::vector<std::string> names;
    std::uint64_t bytes = 0;
    nlink_t links = 0;
  };
  std::map<std::pair<dev_t, ino_t>, File> files;
  for (std::string& n : names_in(dir.get())) {
    struct stat st;
    if (!is_copy_name(n) || ::fstatat(dir.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      continue;
    }
    File& f = files[{st.st_dev, st.st_ino}];
    f.names.push_back(std::move(n));
    f.bytes = static_cast<std::uint64_t>(st.st_blocks) * 512;
    f.links = st.st_nlink;
  }
  for (const auto& [id, f] : files) {
    // A file with a name outside the store (the workspace's) costs the store nothing.
    bool alone = f.names.size() >= f.links;
    for (const std::string& n : f.names) out[n] = alone ? f.bytes / f.names.size() : 0;
  }
  return out;
}

}  // namespace fsnap
