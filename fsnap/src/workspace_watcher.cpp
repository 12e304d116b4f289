#include "workspace_watcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "entry_names.hpp"
#include "fsnap/error.hpp"
#include "open_beneath.hpp"

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

}  // namespace

void ChangedDirs::merge(const ChangedDirs& other) {
  everything = everything || other.everything;
  dirs.insert(other.dirs.begin(), other.dirs.end());
  subtrees.insert(other.subtrees.begin(), other.subtrees.end());
}

WorkspaceWatcher::WorkspaceWatcher(std::string root, IgnoreRules excludes)
    : root_(std::move(root)), excludes_(std::move(excludes)) {
  inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_.valid()) {
    throw system_error("cannot watch the workspace: inotify", errno);
  }
  int err = 0;
  if (!watch_tree("")) err = errno;
  if (err != 0 || dirs_.empty()) {
    std::string hint = err == ENOSPC ? " (raise the limit: sysctl fs.inotify.max_user_watches)"
                       : err == ENOENT && ::access("/proc/self/fd", F_OK) != 0
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
  UniqueFd root(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return false;
  UniqueFd fd(open_directory_beneath(root.get(), dir));
  // A directory that vanished, or that is now a symlink or reached through one, is no
  // failure: the events of a parent tell what happened to it.
  if (!fd.valid()) return errno == ENOENT || errno == ENOTDIR || errno == ELOOP;
  return watch_tree(dir, std::move(fd), 0);
}

bool WorkspaceWatcher::watch_tree(const std::string& dir, UniqueFd fd, std::size_t depth) {
  if (depth > kMaxTreeDepth) return false;  // no capture goes this deep either
  // The watch is added through the descriptor, never through the path: a path whose
  // parent has just been swapped for a symlink would put the watch on a directory
  // elsewhere (and take it away from that directory when this one goes). The watch
  // comes before the listing: an entry created meanwhile is then listed or reported.
  std::string by_descriptor = "/proc/self/fd/" + std::to_string(fd.get());
  int wd = ::inotify_add_watch(inotify_.get(), by_descriptor.c_str(), kWatchMask);
  if (wd < 0) return false;
  // The same directory may be watched already under its old name (moved, with its
  // events not read yet): the watch now belongs to the new name only.
  auto known = dirs_.find(wd);
  if (known != dirs_.end() && known->second != dir) wds_.erase(known->second);
  dirs_[wd] = dir;
  wds_[dir] = wd;
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

void WorkspaceWatcher::forget_tree(const std::string& dir) {
  auto it = wds_.lower_bound(dir);
  while (it != wds_.end() && (it->first == dir || under(it->first, dir))) {
    ::inotify_rm_watch(inotify_.get(), it->second);
    dirs_.erase(it->second);
    it = wds_.erase(it);
  }
}

void WorkspaceWatcher::rewatch_all() {
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
  const std::string dir = it->second;
  if (mask & IN_IGNORED) {
    auto named = wds_.find(dir);
    if (named != wds_.end() && named->second == wd) wds_.erase(named);
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
  if (broken_) pending_.everything = true;
  return std::exchange(pending_, ChangedDirs{});
}

}  // namespace fsnap
