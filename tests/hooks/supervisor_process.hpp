// A run's supervisor in a process of its own, as `shadowbox run` is, for tests of what
// outlives it: it holds the run's processes locks (when given a store), starts an agent
// under its guard, and waits to be killed.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"
#include "hooks/agent_process.hpp"
#include "hooks/run_processes.hpp"
#include "runs/run_meta.hpp"

namespace testing_support {

// Waits up to limit for pred, looking every few milliseconds; whether it came true.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class SupervisorProcess {
 public:
  // Forks the supervisor: it takes the locks of run in store (if store is set), starts
  // argv in dir with PATH only, its guard ending the tree with grace, and waits.
  SupervisorProcess(const std::vector<std::string>& argv, const boost::filesystem::path& dir,
                    std::chrono::milliseconds grace, const fsnap::Store* store = nullptr,
                    const std::string& run = "") {
    int ready[2];
    if (::pipe(ready) != 0) throw std::runtime_error("pipe failed");
    const char* path = std::getenv("PATH");
    std::vector<std::string> env = {std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::close(ready[0]);
      try {
        std::optional<hooks::RunProcessLocks> locks;
        if (store != nullptr) locks = hooks::RunProcessLocks::take(*store, run);
        hooks::AgentProcess agent(argv, dir, env, {grace, locks ? locks->tree_fd() : -1});
        pid_t pids[2] = {agent.guard_pid(), agent.pid()};
        if (::write(ready[1], pids, sizeof pids) != static_cast<ssize_t>(sizeof pids)) ::_exit(1);
        for (;;) ::pause();
      } catch (...) {
        ::_exit(1);
      }
    }
    ::close(ready[1]);
    pid_t pids[2] = {0, 0};
    ssize_t n = ::read(ready[0], pids, sizeof pids);
    ::close(ready[0]);
    if (n != static_cast<ssize_t>(sizeof pids)) {
      kill();
      throw std::runtime_error("the supervisor did not start its agent");
    }
    guard_ = pids[0];
    agent_ = pids[1];
  }
  ~SupervisorProcess() {
    kill();
    // Its guard, if the test stopped it, ends what is left; reaped if it became ours.
    ::kill(guard_, SIGCONT);
    eventually([&] { return !runs::process_alive(guard_); });
    ::waitpid(guard_, nullptr, WNOHANG);
  }
  SupervisorProcess(const SupervisorProcess&) = delete;
  SupervisorProcess& operator=(const SupervisorProcess&) = delete;

  pid_t pid() const { return pid_; }
  pid_t guard() const { return guard_; }
  pid_t agent() const { return agent_; }
  // kill -9 of the supervisor alone; waits until it is dead.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  pid_t guard_ = -1;
  pid_t agent_ = -1;
};

}  // namespace testing_support
