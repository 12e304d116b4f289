// Running the agent as a child process: an environment made only of what the config
// lets through, signal forwarding, and the child's exit status as ours.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

namespace hooks {

// NAME=VALUE entries for the variables in names that are set, then extra entries.
std::vector<std::string> agent_environment(const std::vector<std::string>& names,
                                           const std::vector<std::string>& extra);

// How the agent process ended.
struct AgentExit {
  int status = 0;  // its exit status, when it exited
  int signal = 0;  // the signal that killed it, or 0
  // The status a shell would report: status, or 128 + signal.
  int code() const { return signal != 0 ? 128 + signal : status; }
};

// Starts argv[0] (looked up in PATH) in cwd with exactly env; calls on_start with the
// child's pid, then waits for it. SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to this
// process are forwarded to the child; SIGINT and SIGQUIT are left to the child (a
// terminal sends them to both). The child is sent SIGTERM if this process dies.
// Error kNotFound / kIo if the command cannot be started.
AgentExit run_agent_process(const std::vector<std::string>& argv,
                            const boost::filesystem::path& cwd, const std::vector<std::string>& env,
                            const std::function<void(pid_t)>& on_start);

}  // namespace hooks
