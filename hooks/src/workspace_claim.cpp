#include "hooks/workspace_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "sandbox/run_meta.hpp"

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The running run of store whose workspace is workspace, other than run; "" if none.
std::string running_run_of(const fsnap::Store& store, const fs::path& workspace,
                           const std::string& run) {
  boost::system::error_code ec;
  fs::path runs = fsnap::layout::runs_dir(store.dir());
  for (fs::directory_iterator it(runs, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name == run || !fsnap::layout::is_valid_run_name(name)) continue;
    try {
      std::optional<sandbox::RunMeta> meta = sandbox::RunMeta::load(store, name);
      boost::system::error_code same;
      if (meta && meta->running() && fs::equivalent(meta->workspace, workspace, same)) {
        return name + " (pid " + std::to_string(meta->pid) + ")";
      }
    } catch (const std::exception&) {
      // Unreadable: not the run to name.
    }
  }
  return "";
}

}  // namespace

WorkspaceClaim WorkspaceClaim::take(const fs::path& workspace, const fsnap::Store& store,
                                    const std::string& run) {
  int fd = ::open(workspace.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw fsnap::Error(fsnap::ErrorCode::kIo, "cannot open the workspace " + workspace.string() +
                                                  ": " + std::strerror(errno));
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err != EWOULDBLOCK) {
      throw fsnap::Error(fsnap::ErrorCode::kIo, "cannot lock the workspace " + workspace.string() +
                                                    ": " + std::strerror(err));
    }
    std::string holder = running_run_of(store, workspace, run);
    throw fsnap::Error(
        fsnap::ErrorCode::kConflict,
        "the workspace " + workspace.string() + " has a live run already: " +
            (holder.empty() ? "another shadowbox process supervises an agent there (of another "
                              "store?)"
                            : "run " + holder) +
            "; two runs on one workspace would undo each other's work, so run " + run +
            " does not start (wait for it to end, or stop it with shadowbox abort RUN)");
  }
  return WorkspaceClaim(fd);
}

WorkspaceClaim::WorkspaceClaim(WorkspaceClaim&& other) noexcept : fd_(other.fd_) {
  other.fd_ = -1;
}

WorkspaceClaim& WorkspaceClaim::operator=(WorkspaceClaim&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

WorkspaceClaim::~WorkspaceClaim() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace hooks
