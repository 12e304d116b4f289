// WorkspaceClaim — one supervised run at a time on a workspace.
//
// Two runs on one workspace undo each other's work: a rollback of one puts back files
// the other changed since. `run`, `resume` and `recover` claim the workspace for as
// long as they supervise an agent: an advisory lock (flock) on the workspace directory
// itself — so nothing is written into the workspace, every store of that directory sees
// the same lock, and it is released when the process ends, however it ends — and a
// shared one on every directory above it, so that a run on an enclosing directory and
// one inside it refuse each other too. Where directories cannot be locked (NFS), a lock
// file in the store stands in: one run at a time of that store. A run of the store on
// the workspace whose supervisor died while its agent's tree is still being ended
// (hooks/run_processes.hpp) refuses a claim too: its agent may still change the files.
//
// Thread-safety: a claim is owned by one thread; it is not inherited by the agent.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"

namespace hooks {

// The claim of one supervised run on its workspace, released when destroyed.
class WorkspaceClaim {
 public:
  // Claims workspace for run. Error kConflict when another process holds it, naming
  // the run of store that does (a running run of this workspace) when there is one;
  // kIo when the directory cannot be opened.
  static WorkspaceClaim take(const boost::filesystem::path& workspace, const fsnap::Store& store,
                             const std::string& run);

  WorkspaceClaim(WorkspaceClaim&& other) noexcept;
  WorkspaceClaim& operator=(WorkspaceClaim&& other) noexcept;
  WorkspaceClaim(const WorkspaceClaim&) = delete;
  WorkspaceClaim& operator=(const WorkspaceClaim&) = delete;
  ~WorkspaceClaim();

 private:
  WorkspaceClaim() = default;
  void release();
  std::vector<int> fds_;  // the workspace's (or the store's lock file), then its parents
};

}  // namespace hooks
