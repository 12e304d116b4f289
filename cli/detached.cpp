#include "detached.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "fsnap/user_umask.hpp"

namespace cli {

pid_t spawn_detached(std::vector<std::string> argv, const std::string& output) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const char* out_path = output.empty() ? "/dev/null" : output.c_str();
  mode_t user_mask = fsnap::user_umask();  // the helper narrows it again itself
  // The middle process tells the helper's pid through this pipe.
  int told[2];
  if (::pipe2(told, O_CLOEXEC) != 0) return -1;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(told[0]);
    ::close(told[1]);
    return -1;
  }
  if (child == 0) {
    ::setsid();
    pid_t helper = ::fork();
    if (helper != 0) {
      ssize_t written = ::write(told[1], &helper, sizeof helper);
      ::_exit(written == sizeof helper ? 0 : 1);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::umask(user_mask);
    int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = ::open(out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (in >= 0) ::dup2(in, 0);
    if (out >= 0) {
      ::dup2(out, 1);
      ::dup2(out, 2);
    }
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(told[1]);
  ::waitpid(child, nullptr, 0);
  pid_t helper = -1;
  ssize_t got;
  do {
    got = ::read(told[0], &helper, sizeof helper);
  } while (got < 0 && errno == EINTR);
  // The helper holds this process's descriptors (its locks among them: a run's claim on
  // the workspace) from its fork to its exec, which closes them all (O_CLOEXEC). Its copy
  // of the pipe's end is one of them, so the pipe ends once it has exec'd (or died):
  // until then this process does not go on, and cannot exit leaving a lock of its own
  // held by a helper that has not yet let go of it.
  char rest;
  ssize_t more;
  do {
    more = ::read(told[0], &rest, 1);
  } while (more > 0 || (more < 0 && errno == EINTR));
  ::close(told[0]);
  return got == sizeof helper ? helper : -1;
}

}  // namespace cli
