#include "hooks/workspace_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/run_processes.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The run of store on workspace, other than run, of which processes live as wanted says
// (kSupervised: a running run, named with its supervisor's pid; kUnsupervised: one whose
// supervisor died and whose agent's tree is being ended); "" if none.
std::string live_run_of(const fsnap::Store& store, const fs::path& workspace,
                        const std::string& run, RunProcesses wanted) {
  boost::system::error_code ec;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name == run || !fsnap::layout::is_valid_run_name(name)) continue;
    try {
      // The locks first: run.json is read only for a run of which something lives.
      if (wanted == RunProcesses::kUnsupervised &&
          run_processes(store, name, std::nullopt) != wanted) {
        continue;
      }
      std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, name);
      boost::system::error_code same;
      if (meta && run_processes(store, name, meta) == wanted &&
          fs::equivalent(meta->workspace, workspace, same)) {
        return fsnap::quote_input(name) + (wanted == RunProcesses::kSupervised
                                               ? " (pid " + std::to_string(meta->pid) + ")"
                                               : "");
      }
    } catch (const std::exception&) {
      // Unreadable: not the run to name.
    }
  }
  return "";
}

// flock that says why not: 0, EWOULDBLOCK (another holds it), or another errno.
int try_flock(int fd, int operation) {
  while (::flock(fd, operation | LOCK_NB) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

// Whether a flock failed because the filesystem does not lock directories (NFS emulates
// flock with whole-file locks, which need a file open for writing).
bool cannot_lock_here(int err) {
  return err == EBADF || err == ENOLCK || err == EOPNOTSUPP || err == EINVAL;
}

[[noreturn]] void refuse(const fs::path& workspace, const std::string& holder,
                         const std::string& run) {
  throw fsnap::Error(fsnap::ErrorCode::kConflict,
                     "the workspace " + workspace.string() + " has a live run already: " + holder +
                         "; two runs on one workspace would undo each other's work, "
                         "so run " +
                         fsnap::quote_input(run) +
                         " does not start (wait for it to end, or stop it with shadowbox abort "
                         "RUN)");
}

}  // namespace

WorkspaceClaim WorkspaceClaim::take(const fs::path& workspace, const fsnap::Store& store,
                                    const std::string& run) {
  WorkspaceClaim claim;
  claim.fds_.push_back(::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (claim.fds_.back() < 0) {
    throw fsnap::system_error("cannot open the workspace " + workspace.string(), errno);
  }
  int err = try_flock(claim.fds_.back(), LOCK_EX);
  if (err != 0 && cannot_lock_here(err)) {
    // One run at a time of this store, at least: a lock file it holds.
    int fd = ::open((store.dir() / "workspace.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      claim.fds_.push_back(fd);
      err = try_flock(fd, LOCK_EX);
    }
  }
  if (err == EWOULDBLOCK) {
    std::string holder = live_run_of(store, workspace, run, RunProcesses::kSupervised);
    refuse(workspace,
           holder.empty() ? "another shadowbox process supervises an agent there, or in a "
                            "directory inside it"
                          : "run " + holder,
           run);
  }
  if (err != 0) {
    throw fsnap::system_error("cannot lock the workspace " + workspace.string(), err);
  }
  // Each directory above it is shared with every run below it: a run on an enclosing
  // directory (which takes its own exclusively) would change this one's files too.
  for (fs::path dir = workspace.parent_path(); !dir.empty() && dir != dir.root_path();
       dir = dir.parent_path()) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;  // not ours to read: no run there either
    claim.fds_.push_back(fd);
    if (try_flock(fd, LOCK_SH) == EWOULDBLOCK) {
      refuse(workspace, "a run on " + dir.string() + ", which holds it", run);
    }
  }
  // A supervisor that died released its claim, but its agent's tree may still be
  // changing the files for a moment (its guard is ending it): no second agent meanwhile.
  std::string orphaned = live_run_of(store, workspace, run, RunProcesses::kUnsupervised);
  if (!orphaned.empty()) {
    refuse(workspace,
           "run " + orphaned +
               ", whose supervisor ended: its agent's processes are still being ended "
               "(SIGTERM, then SIGKILL after policy.kill_grace)",
           run);
  }
  return claim;
}

WorkspaceClaim::WorkspaceClaim(WorkspaceClaim&& other) noexcept : fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

WorkspaceClaim& WorkspaceClaim::operator=(WorkspaceClaim&& other) noexcept {
  if (this != &other) {
    release();
    fds_ = std::move(other.fds_);
    other.fds_.clear();
  }
  return *this;
}

WorkspaceClaim::~WorkspaceClaim() {
  release();
}

void WorkspaceClaim::release() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
  fds_.clear();
}

}  // namespace hooks
