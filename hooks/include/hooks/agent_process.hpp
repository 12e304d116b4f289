// Running the agent as a child process: an environment made only of what the config
// lets through, signal forwarding, waiting with a time limit, the child's exit status as
// ours, and a guard that ends the agent's whole tree if its supervisor dies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/process_tree.hpp"

namespace hooks {

// NAME=VALUE entries for the variables in names that are set (and not in extra), then
// extra entries.
std::vector<std::string> agent_environment(const std::vector<std::string>& names,
                                           const std::vector<std::string>& extra);

// How the agent process ended.
struct AgentExit {
  int status = 0;  // its exit status, when it exited
  int signal = 0;  // the signal that killed it, or 0
  // The status a shell would report: status, or 128 + signal.
  int code() const { return signal != 0 ? 128 + signal : status; }
};

// What becomes of the agent's tree when its supervisor (this process) is gone.
struct AgentGuardOptions {
  // How long the tree gets between SIGTERM and SIGKILL (the run's policy.kill_grace).
  std::chrono::milliseconds grace{5000};
  // A descriptor the guard keeps open until every process of the tree has ended (the
  // run's processes lock, hooks/run_processes.hpp), or -1. Close-on-exec: the agent does
  // not get it.
  int keep_fd = -1;
};

// The agent, started and not yet waited for. It runs below its guard (src/agent_guard.hpp):
// this process -> guard -> agent. When this process dies, however it dies (kill -9
// too), or destroys the AgentProcess while the agent runs, the guard ends the agent's
// whole tree — SIGTERM, SIGKILL after the grace — and exits once nothing of it is left.
// While it runs, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to this process are
// forwarded to it (through the guard); SIGINT and SIGQUIT are left to it (a terminal
// sends them to both).
//
// Thread-safety: one thread at a time; one AgentProcess per process at a time.
class AgentProcess {
 public:
  // Starts argv[0] (looked up in PATH) in cwd with exactly env and the user's umask
  // (fsnap/user_umask.hpp). Error kNotFound / kIo if the command cannot be started.
  AgentProcess(const std::vector<std::string>& argv, const boost::filesystem::path& cwd,
               const std::vector<std::string>& env, AgentGuardOptions guard = {});
  // Restores this process's signal handling. An agent still running is ended by its
  // guard (this process gives it up), which is not waited for.
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // The agent's pid.
  pid_t pid() const { return pid_; }
  // Its guard's pid (this process's child; the agent's parent).
  pid_t guard_pid() const { return guard_; }
  // Waits up to timeout for the agent to exit: how it ended, or nullopt if it still
  // runs. Once it has ended, answers the same at once.
  std::optional<AgentExit> wait_for(std::chrono::milliseconds timeout);
  // Reaps the agent if it has exited, without waiting.
  void reap();
  // Whether it has ended (and been reaped).
  bool ended() const { return exit_.has_value(); }
  // How it ended, once it has.
  const std::optional<AgentExit>& exit() const { return exit_; }
  // Ends every descendant of this process — the agent's tree, and whatever was
  // reparented here — but spared, as end_descendants does (the guard is left to exit by
  // itself once its tree is empty, and reaped), with the agent's exit status kept.
  TreeEnding end_tree(std::chrono::milliseconds grace, const std::vector<pid_t>& spared = {});

 private:
  bool read_news(int timeout_ms);  // what the guard said, up to timeout_ms; true once ended
  void reap_guard(int options);    // waitpid on the guard with options

  pid_t pid_ = -1;
  pid_t guard_ = -1;  // -1 once reaped
  int channel_ = -1;  // this process's end of the socket pair with the guard
  std::optional<AgentExit> exit_;
  struct SavedSignals;
  SavedSignals* saved_ = nullptr;
};

}  // namespace hooks
