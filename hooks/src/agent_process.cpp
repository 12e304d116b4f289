#include "hooks/agent_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "fsnap/user_umask.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

using sandbox::Error;
using sandbox::ErrorCode;

namespace {

volatile sig_atomic_t g_child = 0;

void forward(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr int kLeftToChild[] = {SIGINT, SIGQUIT};

AgentExit exit_of(int status) {
  if (WIFEXITED(status)) return AgentExit{WEXITSTATUS(status), 0};
  if (WIFSIGNALED(status)) return AgentExit{0, WTERMSIG(status)};
  return AgentExit{1, 0};
}

}  // namespace

struct AgentProcess::SavedSignals {
  struct sigaction actions[6];
  void restore() {
    int k = 0;
    for (int sig : kForwarded) ::sigaction(sig, &actions[k++], nullptr);
    for (int sig : kLeftToChild) ::sigaction(sig, &actions[k++], nullptr);
  }
};

std::vector<std::string> agent_environment(const std::vector<std::string>& names,
                                           const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  auto set_by_extra = [&](const std::string& name) {
    for (const std::string& e : extra) {
      if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
        return true;
      }
    }
    return false;
  };
  for (const std::string& name : names) {
    if (set_by_extra(name)) continue;
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

AgentProcess::AgentProcess(const std::vector<std::string>& argv, const boost::filesystem::path& cwd,
                           const std::vector<std::string>& env) {
  if (argv.empty()) throw Error(ErrorCode::kInvalidArgument, "no command to run");
  // Report exec failures through a close-on-exec pipe.
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kIo, std::string("pipe failed: ") + std::strerror(errno));
  }

  struct sigaction forward_action {};
  forward_action.sa_handler = forward;
  sigemptyset(&forward_action.sa_mask);
  struct sigaction ignore_action {};
  ignore_action.sa_handler = SIG_IGN;
  sigemptyset(&ignore_action.sa_mask);
  saved_ = new SavedSignals;
  int i = 0;
  for (int sig : kForwarded) ::sigaction(sig, &forward_action, &saved_->actions[i++]);
  for (int sig : kLeftToChild) ::sigaction(sig, &ignore_action, &saved_->actions[i++]);
  auto give_up = [&] {
    saved_->restore();
    delete saved_;
    saved_ = nullptr;
  };

  // Everything the child needs is made before fork: this process may have other
  // threads (the hook server), so the child must not allocate.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string& dir = cwd.string();
  pid_t parent = ::getpid();
  mode_t user_mask = fsnap::user_umask();

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    give_up();
    throw Error(ErrorCode::kIo, std::string("fork failed: ") + std::strerror(err));
  }
  if (pid == 0) {
    for (int sig : kForwarded) ::signal(sig, SIG_DFL);
    for (int sig : kLeftToChild) ::signal(sig, SIG_DFL);
    ::close(report[0]);
    // The agent does not outlive its supervisor: without it, its tool calls would go
    // unrecorded and could not be rolled back.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    // The agent creates files as the user would (this process's umask keeps the store
    // private: fsnap/user_umask.hpp).
    ::umask(user_mask);
    if (::chdir(dir.c_str()) == 0) ::execvpe(args[0], args.data(), envp.data());
    int err = errno;
    ssize_t ignored = ::write(report[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::close(report[1]);
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_error)) {
    ::waitpid(pid, nullptr, 0);
    give_up();
    throw Error(exec_error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                "cannot run " + fsnap::quote_input(argv[0]) + ": " + std::strerror(exec_error));
  }
  pid_ = pid;
  g_child = pid;
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

AgentProcess::~AgentProcess() {
  g_child = 0;
  if (pidfd_ >= 0) ::close(pidfd_);
  if (saved_ != nullptr) {
    saved_->restore();
    delete saved_;
  }
}

bool AgentProcess::collect(int options) {
  if (exit_) return true;
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, options);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return false;
  // got < 0 (ECHILD): reaped elsewhere; nothing more can be learnt.
  exit_ = got == pid_ ? exit_of(status) : AgentExit{1, 0};
  g_child = 0;
  return true;
}

void AgentProcess::reap() {
  collect(WNOHANG);
}

std::optional<AgentExit> AgentProcess::wait_for(std::chrono::milliseconds timeout) {
  if (collect(WNOHANG)) return exit_;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    int ready;
    do {
      ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    } while (ready < 0 && errno == EINTR);
  } else {
    std::this_thread::sleep_for(std::min(timeout, std::chrono::milliseconds(50)));
  }
  if (collect(WNOHANG)) return exit_;
  return std::nullopt;
}

}  // namespace hooks
