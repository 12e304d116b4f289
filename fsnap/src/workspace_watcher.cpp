#include "workspace_watcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <utility>
#include <vector>

#include "entry_names.hpp"
#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/open_beneath.hpp"

namespace fsnap {

namespace {

constexpr std::uint32_t kWatchMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM |
                                     IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR |
                                     IN_EXCL_UNLINK;

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

bool under(const std::string& path, const std::string& dir) {
  return dir.empty() || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

// The number in a /proc/sys file, if it holds one.
std::optional<std::size_t> read_limit(const std::string& file) {
  try {
    std::optional<std::string> text = read_small_file(file);
    if (!text || text->empty() || (*text)[0] < '0' || (*text)[0] > '9') return std::nullopt;
    return static_cast<std::size_t>(std::stoull(*text));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// What to say when directories need watching and the limit let only added watches in:
// the sysctl and a value that would do, with a quarter to spare for the tree's growth
// (the watches other programs of the user hold, limit - added, stay theirs).
std::string limit_advice(std::size_t directories, std::size_t added,
                         std::optional<std::size_t> limit) {
  std::size_t others = limit && *limit > added ? *limit - added : 0;
  std::size_t wanted = others + directories + directories / 4;
  std::size_t value = (wanted + 1023) / 1024 * 1024;
  std::string message = "the workspace has " + std::to_string(directories) +
                        " directories to watch, and inotify allowed " + std::to_string(added) +
                        " watches (fs.inotify.max_user_watches is " +
                        (limit ? std::to_string(*limit) : std::string("unknown")) +
                        "): every capture looks at the whole workspace instead of what changed. "
                        "To watch it, raise the limit: sudo sysctl fs.inotify.max_user_watches=" +
                        std::to_string(value) + " (and in /etc/sysctl.d/ to keep it)";
  return message;
}

}  // namespace

void ChangedDirs::merge(const ChangedDirs& other) {
  everything = everything || other.everything;
  dirs.insert(other.dirs.begin(), other.dirs.end());
  subtrees.insert(other.subtrees.begin(), other.subtrees.end());
}

WorkspaceWatcher::WorkspaceWatcher(std::string root, IgnoreRules excludes, WatchLimit limit)
    : root_(std::move(root)), excludes_(std::move(excludes)), limit_(std::move(limit)) {
  inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_.valid()) {
    throw system_error("cannot watch the workspace: inotify", errno);
  }
  int err = 0;
  if (!watch_tree("")) err = errno;
  if (scanning_) {  // past the watch limit: it scans, and has said so
    pending_.everything = true;
    return;
  }
  if (err != 0 || dirs_.empty()) {
    std::string hint = err == ENOENT && ::access("/proc/self/fd", F_OK) != 0
                           ? " (directories are watched through /proc/self/fd: mount /proc)"
                           : "";
    throw Error(
        ErrorCode::kIo,
        errno_message("cannot watch the workspace " + root_, err != 0 ? err : ENOENT) + hint);
  }
  pending_.everything = true;
}

WorkspaceWatcher::~WorkspaceWatcher() = default;

bool WorkspaceWatcher::watch_tree(const std::string& dir) {
  if (scanning_ && !counting_) return true;
  UniqueFd root(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return false;
  UniqueFd fd(open_directory_beneath(root.get(), dir));
  // A directory that vanished, or that is now a symlink or reached through one, is no
  // failure: the events of a parent tell what happened to it.
  if (!fd.valid()) return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
  return watch_tree(dir, std::move(fd), 0);
}

bool WorkspaceWatcher::watch_tree(const std::string& dir, UniqueFd fd, std::size_t depth) {
  if (depth > kMaxTreeDepth) return false;   // no capture goes this deep either
  if (scanning_ && !counting_) return true;  // gave up watching on the way
  if (counting_) {
    ++counted_;
  } else {
    int wd = add_watch(fd.get());
    if (wd < 0 && errno == ENOSPC) {
      give_up(dirs_.size());
      return true;
    }
    if (wd < 0) return false;
    // The same directory may be watched already under its old name (moved, with its
    // events not read yet): the watch now belongs to the new name only. A watch the name
    // had (another directory, gone from here) is no longer read: its old parent's
    // events tell what became of it.
    auto known = dirs_.find(wd);
    if (known != dirs_.end() && known->second->first != dir) {
      wds_.erase(known->second);
      dirs_.erase(known);
    }
    auto [named, added] = wds_.try_emplace(dir, wd);
    if (!added && named->second != wd) {
      dirs_.erase(named->second);
      named->second = wd;
    }
    dirs_[wd] = named;
  }
  std::vector<std::string> subdirs;
  {
    DIR* d = ::fdopendir(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
    if (d == nullptr) return false;
    while (dirent* e = ::readdir(d)) {
      const char* n = e->d_name;
      if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
      if (names_git_directory(n)) continue;
      bool is_dir = e->d_type == DT_DIR;
      if (e->d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = ::fstatat(::dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      if (is_dir) subdirs.emplace_back(n);
    }
    ::closedir(d);
  }
  for (const std::string& name : subdirs) {
    std::string path = join(dir, name);
    if (!excludes_.empty() && excludes_.is_ignored(path, true)) continue;
    UniqueFd sub(::openat(fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid()) {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;  // see above
      return false;
    }
    if (!watch_tree(path, std::move(sub), depth + 1)) return false;
  }
  return true;
}

int WorkspaceWatcher::add_watch(int fd) {
  if (limit_.max_watches != 0 && dirs_.size() >= limit_.max_watches) {
    errno = ENOSPC;  // as the kernel answers at its limit
    return -1;
  }
  // The watch is added through the descriptor, never through the path: a path whose
  // parent has just been swapped for a symlink would put the watch on a directory
  // elsewhere (and take it away from that directory when this one goes). The watch
  // comes before the listing: an entry created meanwhile is then listed or reported.
  std::string by_descriptor = "/proc/self/fd/" + std::to_string(fd);
  return ::inotify_add_watch(inotify_.get(), by_descriptor.c_str(), kWatchMask);
}

void WorkspaceWatcher::give_up(std::size_t added) {
  // A partial watch would tell only part of what changed; the watches it holds count
  // against the limit of every other program of the user.
  for (const auto& [wd, dir] : dirs_) ::inotify_rm_watch(inotify_.get(), wd);
  dirs_.clear();
  wds_.clear();
  scanning_ = true;
  pending_.everything = true;
  limit_message_ = limit_advice(count_directories(), added, read_limit(limit_.limit_file));
}

std::size_t WorkspaceWatcher::count_directories() {
  counting_ = true;
  counted_ = 0;
  watch_tree("");
  counting_ = false;
  return counted_;
}

void WorkspaceWatcher::forget_tree(const std::string& dir) {
  auto it = wds_.lower_bound(dir);
  while (it != wds_.end() && (it->first == dir || under(it->first, dir))) {
    ::inotify_rm_watch(inotify_.get(), it->second);
    dirs_.erase(it->second);
    it = wds_.erase(it);
  }
}

void WorkspaceWatcher::rewatch_all() {
  if (scanning_) return;
  for (const auto& [wd, dir] : dirs_) ::inotify_rm_watch(inotify_.get(), wd);
  dirs_.clear();
  wds_.clear();
  pending_.everything = true;
  if (!watch_tree("")) broken_ = true;
}

void WorkspaceWatcher::handle(int wd, std::uint32_t mask, const std::string& name) {
  if (mask & IN_Q_OVERFLOW) {
    rewatch_all();
    return;
  }
  auto it = dirs_.find(wd);
  if (it == dirs_.end()) return;  // a watch already forgotten
  const std::string dir = it->second->first;
  if (mask & IN_IGNORED) {
    wds_.erase(it->second);
    dirs_.erase(it);
    return;
  }
  if (mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
    // Reported for the directory itself: its parent's events cover it, except for the
    // root, which has no parent here.
    if (dir.empty()) pending_.everything = true;
    return;
  }
  if (name.empty() || names_git_directory(name)) return;
  pending_.dirs.insert(dir);
  // A .gitignore can change what is captured anywhere below its directory.
  if (name == ".gitignore") pending_.subtrees.insert(dir);
  if (!(mask & IN_ISDIR)) return;
  std::string path = join(dir, name);
  if (mask & (IN_MOVED_FROM | IN_DELETE)) forget_tree(path);
  if (mask & (IN_CREATE | IN_MOVED_TO)) {
    if (!excludes_.empty() && excludes_.is_ignored(path, true)) return;
    pending_.subtrees.insert(path);
    if (!watch_tree(path)) broken_ = true;
  }
}

ChangedDirs WorkspaceWatcher::take_changes() {
  alignas(struct inotify_event) char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      pending_.everything = true;
      break;
    }
    for (char* p = buf; p < buf + n;) {
      auto* event = reinterpret_cast<struct inotify_event*>(p);
      std::string name = event->len > 0 ? std::string(event->name) : std::string();
      handle(event->wd, event->mask, name);
      p += sizeof(struct inotify_event) + event->len;
    }
  }
  if (broken_ || scanning_) pending_.everything = true;
  return std::exchange(pending_, ChangedDirs{});
}

}  // namespace fsnap
