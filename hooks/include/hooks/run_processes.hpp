// Whether processes of a run still live, as every command sees it (`runs`, `resume`,
// the workspace's claim): told by locks that only the run's own processes hold, never by
// a recorded pid alone — the kernel hands a dead process's pid to another, so a pid says
// "alive" for a run long gone, and "gone" for nothing that proves its agent is.
//
// A run's supervisor (`run`, `resume`, `recover`) holds two open-file-description locks
// on <store>/runs/<run>/processes.lock while it supervises the run: one of its own (the
// supervisor lives), and one it hands to its agent's guard (hooks/agent_process.hpp),
// which keeps it until every process of the agent's tree has ended. The kernel drops a
// lock when the last process holding it ends, however it ends (kill -9 too): nothing is
// left to clean up, nothing goes stale, and a reused pid changes nothing.
//
// Thread-safety: RunProcessLocks is owned by one thread; run_processes may be called
// from any.
#pragma once

#include <optional>
#include <string>

#include "fsnap/store.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

// What lives of a run.
enum class RunProcesses {
  kNone,        // no process of it
  kSupervised,  // its supervisor (it is running)
  // Processes of its agent, its supervisor dead: its guard is ending them (within the
  // run's policy.kill_grace, then SIGKILL).
  kUnsupervised,
};

// The locks a run's supervisor holds, released when destroyed (or when the process ends).
class RunProcessLocks {
 public:
  // Takes both locks of run (making its lock file). Error kConflict when a process of
  // the run lives, saying which; kIo when the file cannot be made. Where the filesystem
  // has no such locks, holds none (run_processes then goes by the recorded pid).
  static RunProcessLocks take(const fsnap::Store& store, const std::string& run);

  RunProcessLocks(RunProcessLocks&& other) noexcept;
  RunProcessLocks& operator=(RunProcessLocks&& other) noexcept;
  RunProcessLocks(const RunProcessLocks&) = delete;
  RunProcessLocks& operator=(const RunProcessLocks&) = delete;
  ~RunProcessLocks();

  // The descriptor of the lock the agent's guard keeps (AgentGuardOptions::keep_fd), or
  // -1. Close-on-exec.
  int tree_fd() const { return tree_; }

 private:
  RunProcessLocks() = default;
  void release();
  int own_ = -1;   // the supervisor's alone
  int tree_ = -1;  // shared with the agent's guard
};

// What lives of run now. For a run whose supervisor took no lock (one recorded by an
// older shadowbox, or on a filesystem without such locks): kSupervised if meta names a
// live supervisor and no exit, else kNone — as before.
RunProcesses run_processes(const fsnap::Store& store, const std::string& run,
                           const std::optional<runs::RunMeta>& meta);

}  // namespace hooks
