#include "hooks/agent_process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "agent_guard.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/user_umask.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

using sandbox::Error;
using sandbox::ErrorCode;

namespace {

volatile sig_atomic_t g_child = 0;  // the guard, while it is not reaped

// To the guard, which passes the signal on to the agent.
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
  // Forwards the signals meant for the agent to its guard and ignores those a terminal
  // sends the agent itself, keeping this process's own actions for restore().
  void take() {
    struct sigaction forward_action {};
    forward_action.sa_handler = forward;
    sigemptyset(&forward_action.sa_mask);
    struct sigaction ignore_action {};
    ignore_action.sa_handler = SIG_IGN;
    sigemptyset(&ignore_action.sa_mask);
    int k = 0;
    for (int sig : kForwarded) ::sigaction(sig, &forward_action, &actions[k++]);
    for (int sig : kLeftToChild) ::sigaction(sig, &ignore_action, &actions[k++]);
  }
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
                           const std::vector<std::string>& env, AgentGuardOptions guard) {
  if (argv.empty()) throw Error(ErrorCode::kInvalidArgument, "no command to run");
  // The guard's lifeline: when this process dies, the kernel closes its end and the
  // guard reads end-of-file — no signal, timer or pid is needed to learn of it.
  int channel[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    throw fsnap::system_error("socketpair failed", errno);
  }

  saved_ = new SavedSignals;
  saved_->take();
  auto give_up = [&] {
    saved_->restore();
    delete saved_;
    saved_ = nullptr;
  };

  // Everything the guard and the agent need is made before fork: this process may have
  // other threads (the hook server), so the child must not allocate.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string& dir = cwd.string();
  agent_guard::Setup setup;
  setup.argv = args.data();
  setup.envp = envp.data();
  setup.dir = dir.c_str();
  setup.umask = fsnap::user_umask();
  setup.channel = channel[1];
  setup.keep_fd = guard.keep_fd;
  setup.grace_ms = static_cast<long>(guard.grace.count());

  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(channel[0]);
    ::close(channel[1]);
    give_up();
    throw fsnap::system_error("fork failed", err);
  }
  if (pid == 0) {
    ::close(channel[0]);
    agent_guard::run(setup);
  }
  ::close(channel[1]);
  guard_ = pid;
  channel_ = channel[0];
  g_child = pid;
  // The guard says whether the agent started.
  agent_guard::Message started;
  ssize_t n;
  do {
    n = ::recv(channel_, &started, sizeof started, MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof started) && started.kind == agent_guard::Message::kStarted) {
    pid_ = started.value;
    return;
  }
  ::close(channel_);
  channel_ = -1;
  reap_guard(0);
  give_up();
  if (n != static_cast<ssize_t>(sizeof started)) {
    throw Error(ErrorCode::kIo, "cannot run " + fsnap::quote_input(argv[0]) +
                                    ": the process that starts it ended first");
  }
  int err = started.value;
  throw fsnap::system_error("cannot run " + fsnap::quote_input(argv[0]), err,
                            err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo);
}

AgentProcess::~AgentProcess() {
  // An agent still running is given up: its guard ends its tree.
  if (channel_ >= 0) ::close(channel_);
  if (guard_ > 0) reap_guard(WNOHANG);
  if (saved_ != nullptr) {
    saved_->restore();
    delete saved_;
  }
}

void AgentProcess::reap_guard(int options) {
  if (guard_ <= 0) return;
  pid_t got;
  do {
    got = ::waitpid(guard_, nullptr, options);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return;
  // Reaped (or reaped elsewhere: ECHILD): its pid is no longer ours to signal.
  g_child = 0;
  guard_ = -1;
}

bool AgentProcess::read_news(int timeout_ms) {
  if (exit_) return true;
  pollfd p{channel_, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  if (ready <= 0) return false;
  agent_guard::Message news;
  ssize_t n;
  do {
    n = ::recv(channel_, &news, sizeof news, MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof news) && news.kind == agent_guard::Message::kExited) {
    exit_ = exit_of(news.value);
  } else if (n <= 0) {
    // The guard died before the agent's exit: the agent was killed with it
    // (PR_SET_PDEATHSIG SIGKILL).
    exit_ = AgentExit{0, SIGKILL};
  } else {
    return false;
  }
  reap_guard(WNOHANG);
  return true;
}

void AgentProcess::reap() {
  read_news(0);
  reap_guard(WNOHANG);
}

std::optional<AgentExit> AgentProcess::wait_for(std::chrono::milliseconds timeout) {
  if (read_news(static_cast<int>(timeout.count()))) return exit_;
  return std::nullopt;
}

TreeEnding AgentProcess::end_tree(std::chrono::milliseconds grace,
                                  const std::vector<pid_t>& spared) {
  pid_t guard = guard_;
  TreeEnding ending = end_descendants(
      grace, guard, [this] { reap(); }, spared);
  if (guard_ > 0 && ending.all_gone) {
    // Its tree is empty, so it is exiting; a guard that does not (stopped, say) has
    // nothing left to guard.
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (guard_ > 0 && std::chrono::steady_clock::now() < until) {
      reap();
      if (guard_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (guard_ > 0) {
      ::kill(guard_, SIGKILL);
      reap_guard(0);
    }
  }
  read_news(0);
  return ending;
}

}  // namespace hooks
