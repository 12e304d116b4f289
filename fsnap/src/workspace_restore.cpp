#include "workspace_restore.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/user_umask.hpp"
#include "restore_temp_names.hpp"

namespace fsnap {

namespace {

// Why a file over the size limit cannot be put back where a kept directory is.
constexpr const char* kInTheWay = "a directory holding paths that are not captured is in its way";

// Restored files are written in blocks of this size; a block of zeros is a hole.
constexpr std::size_t kBlock = 4096;

bool all_zero(const char* data, std::size_t n) {
  return data[0] == 0 && std::memcmp(data, data + 1, n - 1) == 0;
}

std::pair<std::string, std::string> split_parent(const std::string& path) {
  std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// Opens directories below the root without following symlinks, remembering the last.
class DirOpener {
 public:
  explicit DirOpener(const std::string& root)
      : root_(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (root_.get() < 0) throw system_error("cannot open workspace " + root, errno);
  }

  // A descriptor of directory dir ("" = root), valid until the next call.
  int open(const std::string& dir) {
    if (dir.empty()) return root_.get();
    if (last_.get() >= 0 && last_path_ == dir) return last_.get();
    UniqueFd fd(::fcntl(root_.get(), F_DUPFD_CLOEXEC, 0));
    std::size_t start = 0;
    while (start <= dir.size()) {
      std::size_t end = dir.find('/', start);
      if (end == std::string::npos) end = dir.size();
      std::string component = dir.substr(start, end - start);
      if (component.empty() || component == "." || component == "..") {
        // The tree's names were checked before: this is a bug, never a path to follow.
        throw Error(ErrorCode::kPathEscape, "refusing to restore through " + quote_path(dir));
      }
      int next =
          ::openat(fd.get(), component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
          throw Error(ErrorCode::kConflict, "workspace changed during restore: " +
                                                dir.substr(0, end) + " is no longer a directory");
        }
        throw system_error("cannot open directory " + dir.substr(0, end), errno);
      }
      fd.reset(next);
      start = end + 1;
    }
    last_path_ = dir;
    last_.reset(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
    return last_.get();
  }

  void forget() {
    last_.reset();
    last_path_.clear();
  }

 private:
  UniqueFd root_;
  UniqueFd last_;
  std::string last_path_;
};

class Applier {
 public:
  Applier(const std::string& root, const ShadowRepo::Impl& repo, const LargeFileWork& large,
          std::vector<std::string>& kept)
      : dirs_(root), repo_(repo), large_(large), kept_(kept), umask_(user_umask()) {}

  void apply(const std::vector<TreeChange>& changes) {
    // Large files first: a directory that must go may hold one.
    for (const std::string& path : large_.plan.remove) remove_large(path);
    // Removals deepest first (changes come directory before contents).
    for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
      if (it->kind == TreeChange::Kind::kDeleted || it->kind == TreeChange::Kind::kTypeChanged) {
        remove(it->path, *it->before);
      }
    }
    dirs_.forget();
    // Creations and rewrites, parents first.
    for (const TreeChange& c : changes) {
      if (c.kind == TreeChange::Kind::kDeleted || blocked(c.path)) continue;
      create(c);
    }
    // Large files last: their directories are there now.
    for (const SkippedPath& s : large_.plan.put_back) put_back_large(s);
  }

 private:
  void remove_large(const std::string& path) {
    auto [dir, name] = split_parent(path);
    if (::unlinkat(dirs_.open(dir), name.c_str(), 0) != 0 && errno != ENOENT) {
      throw system_error("cannot remove " + path, errno);
    }
  }

  // Writes s's file from its copy beside where it belongs, and renames it into place.
  void put_back_large(const SkippedPath& s) {
    auto [dir, name] = split_parent(s.path);
    if (blocked(s.path)) {
      large_.unrestored.push_back({s.path, kInTheWay});
      return;
    }
    int dirfd = -1;
    try {
      dirfd = dirs_.open(dir);  // made by the tree's changes, unless something is in the way
    } catch (const Error& e) {
      large_.unrestored.push_back({s.path, std::string("its directory is not there: ") + e.what()});
      return;
    }
    std::string tmp = temp_name();
    try {
      large_.copies.put_back(s, dirfd, tmp);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kConflict) throw;
      large_.unrestored.push_back({s.path, e.what()});
      return;
    }
    if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) {
      int err = errno;
      ::unlinkat(dirfd, tmp.c_str(), 0);
      if (err != EISDIR && err != ENOTEMPTY && err != EEXIST)
        throw system_error("cannot replace " + s.path, err);
      large_.unrestored.push_back({s.path, kInTheWay});
    }
  }

  bool blocked(const std::string& path) const {
    for (const std::string& b : blocked_) {
      if (path == b ||
          (path.size() > b.size() && path.compare(0, b.size(), b) == 0 && path[b.size()] == '/')) {
        return true;
      }
    }
    return false;
  }

  void remove(const std::string& path, const TreeEntryInfo& before) {
    if (blocked(path)) return;
    auto [dir, name] = split_parent(path);
    int dirfd = dirs_.open(dir);
    bool is_dir = before.type == EntryType::kDirectory;
    if (::unlinkat(dirfd, name.c_str(), is_dir ? AT_REMOVEDIR : 0) == 0) return;
    if (errno == ENOENT) return;
    if (is_dir && (errno == ENOTEMPTY || errno == EEXIST)) {
      kept_.push_back(path);
      blocked_.push_back(path);
      return;
    }
    throw system_error("cannot remove " + path, errno);
  }

  void create(const TreeChange& c) {
    const TreeEntryInfo& after = *c.after;
    auto [dir, name] = split_parent(c.path);
    int dirfd = dirs_.open(dir);
    switch (after.type) {
      case EntryType::kDirectory:
        if (::mkdirat(dirfd, name.c_str(), 0777) != 0) {
          struct stat st;
          if (errno != EEXIST || ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
              !S_ISDIR(st.st_mode)) {
            throw system_error("cannot create directory " + c.path, errno);
          }
        } else {
          give_user_mode(dirfd, name, c.path);
        }
        break;
      case EntryType::kSymlink: {
        std::string target = repo_.read(git::from_hex(after.oid), GIT_OBJECT_BLOB);
        std::string tmp = temp_name();
        if (::symlinkat(target.c_str(), dirfd, tmp.c_str()) != 0)
          throw system_error("cannot create link " + c.path, errno);
        rename_into_place(dirfd, tmp, name, c.path);
        break;
      }
      case EntryType::kFile:
        write_file(dirfd, name, c);
        break;
    }
  }

  // A directory restore created has the mode the user's umask gives (this process's
  // may be narrower: user_umask.hpp). Set through a descriptor, never a path that
  // could have been swapped for a symlink meanwhile.
  void give_user_mode(int dirfd, const std::string& name, const std::string& path) {
    mode_t mode = 0777 & ~umask_;
    UniqueFd dir(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st;
    if (dir.get() < 0 || ::fstat(dir.get(), &st) != 0)
      throw system_error("cannot open directory " + path, errno);
    if ((st.st_mode & 07777) != mode && ::fchmod(dir.get(), mode) != 0)
      throw system_error("cannot chmod " + path, errno);
  }

  void write_file(int dirfd, const std::string& name, const TreeChange& c) {
    const TreeEntryInfo& after = *c.after;
    bool was_file = c.before && c.before->type == EntryType::kFile;
    mode_t mode = (after.executable ? 0777 : 0666) & ~umask_;
    if (was_file) {
      struct stat st;
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
        mode = st.st_mode & 07777;
        mode = after.executable ? (mode | ((mode & 0444) >> 2)) : (mode & ~0111);
        if (c.before->oid == after.oid) {  // only the executable bit changed
          if (::fchmodat(dirfd, name.c_str(), mode, 0) != 0)
            throw system_error("cannot chmod " + c.path, errno);
          return;
        }
      }
    }
    std::string tmp = temp_name();
    UniqueFd fd(
        ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (fd.get() < 0) throw system_error("cannot write " + c.path, errno);
    auto give_up = [&](int err) {
      ::unlinkat(dirfd, tmp.c_str(), 0);
      throw system_error("cannot write " + c.path, err);
    };
    // In pieces, in bounded memory; blocks of zeros become holes where the filesystem
    // keeps them (a sparse file comes back sparse), the size set at the end.
    off_t size = 0;
    try {
      repo_.read_blob_in_pieces(git::from_hex(after.oid), [&](const char* data, std::size_t n) {
        for (std::size_t at = 0; at < n;) {
          std::size_t block = std::min<std::size_t>(kBlock, n - at);
          if (block == kBlock && all_zero(data + at, block)) {
            if (::lseek(fd.get(), static_cast<off_t>(block), SEEK_CUR) < 0) give_up(errno);
          } else {
            if (!write_all(fd.get(), data + at, block)) give_up(errno);
          }
          at += block;
        }
        size += static_cast<off_t>(n);
      });
    } catch (const Error&) {
      ::unlinkat(dirfd, tmp.c_str(), 0);
      throw;
    }
    if (::ftruncate(fd.get(), size) != 0) give_up(errno);
    if (::fchmod(fd.get(), mode) != 0) throw system_error("cannot chmod " + c.path, errno);
    fd.reset();
    rename_into_place(dirfd, tmp, name, c.path);
  }

  void rename_into_place(int dirfd, const std::string& tmp, const std::string& name,
                         const std::string& path) {
    if (::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) {
      int err = errno;
      ::unlinkat(dirfd, tmp.c_str(), 0);
      if (err == EISDIR || err == ENOTEMPTY || err == EEXIST) {
        kept_.push_back(path);
        return;
      }
      throw system_error("cannot replace " + path, err);
    }
  }

  std::string temp_name() { return restore_temp_name(::getpid(), counter_++); }

  DirOpener dirs_;
  const ShadowRepo::Impl& repo_;
  const LargeFileWork& large_;
  std::vector<std::string>& kept_;
  std::vector<std::string> blocked_;
  mode_t umask_;
  unsigned counter_ = 0;
};

bool under(const std::string& path, const std::string& top) {
  return path.size() > top.size() && path.compare(0, top.size(), top) == 0 &&
         path[top.size()] == '/';
}

// Whether a component of path is a name reserved for restore's temporary files (a
// checkpoint taken before captures left them out may hold one).
bool has_reserved_name(const std::string& path) {
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (restore_temp_owner(std::string_view(path).substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool Untouchable::covers(const std::string& path, bool is_dir) const {
  if (paths.count(path)) return true;
  for (std::size_t slash = path.find('/'); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string parent = path.substr(0, slash);
    if (paths.count(parent)) return true;
    if (!excludes.empty() && excludes.is_ignored(parent, true)) return true;
  }
  return !excludes.empty() && excludes.is_ignored(path, is_dir);
}

std::vector<TreeChange> without_untouchable(const std::vector<TreeChange>& changes,
                                            const Untouchable& untouchable,
                                            std::vector<std::string>& kept) {
  std::vector<TreeChange> out;
  out.reserve(changes.size());
  std::string last_kept;
  for (const TreeChange& c : changes) {
    if (has_reserved_name(c.path)) continue;  // never written back
    bool is_dir = (c.after && c.after->type == EntryType::kDirectory) ||
                  (c.before && c.before->type == EntryType::kDirectory);
    if (!untouchable.covers(c.path, is_dir)) {
      out.push_back(c);
      continue;
    }
    if (last_kept.empty() || !under(c.path, last_kept)) {
      kept.push_back(c.path);
      last_kept = c.path;
    }
  }
  return out;
}

void apply_changes(const std::string& root, const ShadowRepo::Impl& repo,
                   const std::vector<TreeChange>& changes, const LargeFileWork& large,
                   std::vector<std::string>& kept) {
  Applier(root, repo, large, kept).apply(changes);
}

}  // namespace fsnap
