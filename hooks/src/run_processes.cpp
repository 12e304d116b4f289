#include "hooks/run_processes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/store_layout.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The byte of the lock file each lock covers. (Open-file-description locks: a forked
// process shares them, unlike POSIX record locks; byte ranges, unlike flock, so that
// one file holds both.)
constexpr off_t kSupervisorByte = 0;
constexpr off_t kTreeByte = 1;

struct flock write_lock(off_t byte) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = byte;
  lock.l_len = 1;
  return lock;
}

// Locks byte through fd: 0, or the errno (EAGAIN or EACCES: another holds it).
int try_lock(int fd, off_t byte) {
  struct flock lock = write_lock(byte);
  while (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

bool held_by_another(int err) {
  return err == EAGAIN || err == EACCES;
}

// Whether a process holds byte of the file open as fd; nullopt if the filesystem cannot
// tell.
std::optional<bool> held(int fd, off_t byte) {
  struct flock lock = write_lock(byte);
  if (::fcntl(fd, F_OFD_GETLK, &lock) != 0) return std::nullopt;
  return lock.l_type != F_UNLCK;
}

}  // namespace

RunProcessLocks RunProcessLocks::take(const fsnap::Store& store, const std::string& run) {
  fs::path file = fsnap::layout::run_processes_lock_file(store.dir(), run);
  boost::system::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  RunProcessLocks locks;
  // Opened twice: two open file descriptions, so that the guard's copy of one holds
  // that lock alone.
  for (int* fd : {&locks.own_, &locks.tree_}) {
    *fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (*fd < 0) {
      throw fsnap::system_error("cannot open " + file.string(), errno);
    }
  }
  std::string quoted = fsnap::quote_input(run);
  int err = try_lock(locks.own_, kSupervisorByte);
  if (held_by_another(err)) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "run " + quoted + " is running: another shadowbox process supervises it");
  }
  if (err == 0) err = try_lock(locks.tree_, kTreeByte);
  if (held_by_another(err)) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict,
                       "processes of run " + quoted +
                           " are still running: its supervisor ended, and they are being ended "
                           "(SIGTERM, then SIGKILL after policy.kill_grace); try again once "
                           "they are gone");
  }
  if (err != 0) locks.release();  // no such locks on this filesystem: the pid tells
  return locks;
}

RunProcessLocks::RunProcessLocks(RunProcessLocks&& other) noexcept
    : own_(other.own_), tree_(other.tree_) {
  other.own_ = -1;
  other.tree_ = -1;
}

RunProcessLocks& RunProcessLocks::operator=(RunProcessLocks&& other) noexcept {
  if (this != &other) {
    release();
    own_ = other.own_;
    tree_ = other.tree_;
    other.own_ = -1;
    other.tree_ = -1;
  }
  return *this;
}

RunProcessLocks::~RunProcessLocks() {
  release();
}

void RunProcessLocks::release() {
  for (int* fd : {&tree_, &own_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

RunProcesses run_processes(const fsnap::Store& store, const std::string& run,
                           const std::optional<runs::RunMeta>& meta) {
  auto by_pid = [&] {
    return meta && meta->running() ? RunProcesses::kSupervised : RunProcesses::kNone;
  };
  int fd = ::open(fsnap::layout::run_processes_lock_file(store.dir(), run).c_str(),
                  O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return by_pid();
  std::optional<bool> supervisor = held(fd, kSupervisorByte);
  std::optional<bool> tree = held(fd, kTreeByte);
  ::close(fd);
  if (!supervisor || !tree) return by_pid();
  if (*supervisor) return RunProcesses::kSupervised;
  return *tree ? RunProcesses::kUnsupervised : RunProcesses::kNone;
}

}  // namespace hooks
