// Running the agent as a child process: an environment made only of what the config
// lets through, signal forwarding, waiting with a time limit, and the child's exit
// status as ours.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

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

// The agent, started and not yet waited for. While it runs, SIGTERM, SIGHUP, SIGUSR1
// and SIGUSR2 sent to this process are forwarded to it; SIGINT and SIGQUIT are left to
// it (a terminal sends them to both). It is sent SIGTERM if this process dies.
//
// Thread-safety: one thread at a time; one AgentProcess per process at a time.
class AgentProcess {
 public:
  // Starts argv[0] (looked up in PATH) in cwd with exactly env and the user's umask
  // (fsnap/user_umask.hpp). Error kNotFound / kIo if the command cannot be started.
  AgentProcess(const std::vector<std::string>& argv, const boost::filesystem::path& cwd,
               const std::vector<std::string>& env);
  // Restores this process's signal handling (the agent, if still running, is left).
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Waits up to timeout for the agent to exit: how it ended, or nullopt if it still
  // runs. Once it has ended, answers the same at once.
  std::optional<AgentExit> wait_for(std::chrono::milliseconds timeout);
  // Reaps the agent if it has exited, without waiting.
  void reap();
  // Whether it has ended (and been reaped).
  bool ended() const { return exit_.has_value(); }
  // How it ended, once it has.
  const std::optional<AgentExit>& exit() const { return exit_; }

 private:
  bool collect(int options);  // waitpid with options; true once reaped

  pid_t pid_ = -1;
  int pidfd_ = -1;  // -1 where pidfd_open is unavailable: wait_for polls instead
  std::optional<AgentExit> exit_;
  struct SavedSignals;
  SavedSignals* saved_ = nullptr;
};

}  // namespace hooks
