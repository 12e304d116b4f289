#include "hooks/agent_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

}  // namespace

std::vector<std::string> agent_environment(const std::vector<std::string>& names,
                                           const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (const std::string& name : names) {
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

AgentExit run_agent_process(const std::vector<std::string>& argv,
                            const boost::filesystem::path& cwd, const std::vector<std::string>& env,
                            const std::function<void(pid_t)>& on_start) {
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
  struct sigaction saved[6];
  int i = 0;
  for (int sig : kForwarded) ::sigaction(sig, &forward_action, &saved[i++]);
  for (int sig : kLeftToChild) ::sigaction(sig, &ignore_action, &saved[i++]);
  auto restore_signals = [&] {
    int k = 0;
    for (int sig : kForwarded) ::sigaction(sig, &saved[k++], nullptr);
    for (int sig : kLeftToChild) ::sigaction(sig, &saved[k++], nullptr);
  };

  // Everything the child needs is made before fork: this process may have other
  // threads (the hook server), so the child must not allocate.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string dir = cwd.string();
  pid_t parent = ::getpid();

  pid_t pid = ::fork();
  if (pid < 0) {
    restore_signals();
    throw Error(ErrorCode::kIo, std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    for (int sig : kForwarded) ::signal(sig, SIG_DFL);
    for (int sig : kLeftToChild) ::signal(sig, SIG_DFL);
    ::close(report[0]);
    // The agent does not outlive its supervisor: without it, its tool calls would go
    // unrecorded and could not be rolled back.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
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
    restore_signals();
    throw Error(exec_error == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo,
                "cannot run " + fsnap::quote_input(argv[0]) + ": " + std::strerror(exec_error));
  }
  g_child = pid;
  if (on_start) on_start(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      status = 0;
      break;
    }
  }
  g_child = 0;
  restore_signals();
  if (WIFEXITED(status)) return AgentExit{WEXITSTATUS(status), 0};
  if (WIFSIGNALED(status)) return AgentExit{0, WTERMSIG(status)};
  return AgentExit{1, 0};
}

}  // namespace hooks
