#include "agent_guard.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace hooks::agent_guard {

namespace {

// (No allocation, no locks, no stdio below: see agent_guard.hpp.)

constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
// Reset to their defaults in the agent (the supervisor leaves SIGINT and SIGQUIT to it).
constexpr int kAgentDefaults[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGINT, SIGQUIT, SIGCHLD};

volatile sig_atomic_t g_agent = 0;  // the agent while it is not reaped

// The supervisor's signals go on to the agent.
void forward(int sig) {
  if (g_agent > 0) ::kill(static_cast<pid_t>(g_agent), sig);
}
// SIGCHLD only ends a wait (ppoll).
void wake(int) {}

void tell(int channel, int kind, int value) {
  Message m{kind, value};
  ssize_t ignored;
  do {
    ignored = ::send(channel, &m, sizeof m, MSG_NOSIGNAL);
  } while (ignored < 0 && errno == EINTR);
}

long now_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Writes the decimal digits of n at out; returns the end.
char* put_number(char* out, long n) {
  char digits[24];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  while (k > 0) *out++ = digits[--k];
  return out;
}

// A decimal name (a pid, an fd) as a number; -1 if it is not one.
long number_of(const char* name) {
  long n = 0;
  if (*name == '\0') return -1;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9' || n > 100000000) return -1;
    n = n * 10 + (*name - '0');
  }
  return n;
}

// One entry of getdents64.
struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Calls f(number) for every decimal entry of the directory dir; false if it cannot be
// read.
template <typename F>
bool for_each_numbered_entry(const char* dir, F f) {
  int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(8) char buffer[4096];
  for (;;) {
    long got = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long offset = 0; offset < got;) {
      const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + offset);
      offset += entry->d_reclen;
      long n = number_of(entry->d_name);
      if (n >= 0 && n != fd) f(n);
    }
  }
  ::close(fd);
  return true;
}

// Closes this process's descriptors but keep and keep_too; with inheritable_kept, also
// keeps 0-2 and those without close-on-exec (the agent inherits them, as it would from
// the supervisor).
void close_descriptors(bool inheritable_kept, int keep, int keep_too) {
  auto close_one = [&](long n) {
    int fd = static_cast<int>(n);
    if (fd == keep || fd == keep_too) return;
    if (inheritable_kept) {
      int flags = ::fcntl(fd, F_GETFD);
      if (fd <= 2 || flags < 0 || (flags & FD_CLOEXEC) == 0) return;
    }
    ::close(fd);
  };
  if (for_each_numbered_entry("/proc/self/fd", close_one)) return;
  rlimit limit{};
  long last = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                  ? static_cast<long>(limit.rlim_cur)
                  : 65536;
  for (long fd = 0; fd < last; ++fd) close_one(fd);
}

// The parent and state of pid, from /proc/<pid>/stat; false if it is gone.
bool read_stat(long pid, long& ppid, char& state) {
  char path[48] = "/proc/";
  char* end = put_number(path + 6, pid);
  const char tail[] = "/stat";
  for (std::size_t i = 0; i < sizeof tail; ++i) end[i] = tail[i];
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[512];
  ssize_t n = ::read(fd, text, sizeof text);
  ::close(fd);
  if (n <= 0) return false;
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses; nothing after it does.
  ssize_t paren = n - 1;
  while (paren >= 0 && text[paren] != ')') --paren;
  if (paren < 0 || paren + 4 >= n) return false;
  state = text[paren + 2];
  ppid = 0;
  for (ssize_t i = paren + 4; i < n && text[i] >= '0' && text[i] <= '9'; ++i) {
    ppid = ppid * 10 + (text[i] - '0');
  }
  return true;
}

// One scan of /proc: the processes seen (up to kMaxSeen) and which of them descend from
// this process, marked in a bitmap indexed by pid (pid_max is at most 2^22 on Linux).
constexpr std::size_t kMaxSeen = 1 << 16;
constexpr long kMaxPid = 1L << 22;
long g_seen_pid[kMaxSeen];
long g_seen_ppid[kMaxSeen];
unsigned char g_in_tree[kMaxPid / 8];

bool in_tree(long pid) {
  return pid >= 0 && pid < kMaxPid && (g_in_tree[pid / 8] & (1u << (pid % 8))) != 0;
}
void set_in_tree(long pid, bool on) {
  if (pid < 0 || pid >= kMaxPid) return;
  auto bit = static_cast<unsigned char>(1u << (pid % 8));
  g_in_tree[pid / 8] =
      static_cast<unsigned char>(on ? g_in_tree[pid / 8] | bit : g_in_tree[pid / 8] & ~bit);
}

// Sends sig to every live descendant of this process; how many there were. Its children
// are signalled as they are seen (so that a machine with more processes than one scan
// holds still makes progress); deeper descendants once the scan is done.
long signal_tree(int sig) {
  long self = ::getpid();
  std::size_t seen = 0;
  long signalled = 0;
  for_each_numbered_entry("/proc", [&](long pid) {
    long ppid = 0;
    char state = '?';
    if (!read_stat(pid, ppid, state) || state == 'Z' || state == 'X') return;
    if (ppid == self) {
      ::kill(static_cast<pid_t>(pid), sig);
      ++signalled;
    }
    if (seen < kMaxSeen) {
      g_seen_pid[seen] = pid;
      g_seen_ppid[seen] = ppid;
      ++seen;
    }
  });
  // Children mostly follow their parents in /proc's order: a pass or two.
  set_in_tree(self, true);
  for (bool more = true; more;) {
    more = false;
    for (std::size_t i = 0; i < seen; ++i) {
      if (in_tree(g_seen_pid[i]) || !in_tree(g_seen_ppid[i])) continue;
      set_in_tree(g_seen_pid[i], true);
      more = true;
      if (g_seen_ppid[i] != self) {
        ::kill(static_cast<pid_t>(g_seen_pid[i]), sig);
        ++signalled;
      }
    }
  }
  for (std::size_t i = 0; i < seen; ++i) set_in_tree(g_seen_pid[i], false);
  set_in_tree(self, false);
  return signalled;
}

// Reaps every exited child; false once this process has no child left. The agent's exit
// is told to the supervisor (on channel, if it is still there).
bool reap_children(pid_t agent, int channel) {
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(-1, &status, WNOHANG);
    if (got > 0) {
      if (got == agent) {
        g_agent = 0;
        if (channel >= 0) tell(channel, Message::kExited, status);
      }
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return !(got < 0 && errno == ECHILD);
  }
}

// Waits up to ms for a child to change state (SIGCHLD is blocked but while waiting).
void wait_a_while(long ms, const sigset_t& waiting) {
  timespec t{ms / 1000, (ms % 1000) * 1000000};
  ::ppoll(nullptr, 0, &t, &waiting);
}

// The supervisor is gone: the whole tree ends, SIGTERM first, SIGKILL after grace_ms.
[[noreturn]] void end_tree(long grace_ms, const sigset_t& waiting) {
  g_agent = 0;  // nothing more is forwarded
  signal_tree(SIGTERM);
  long until = now_ms() + grace_ms;
  while (reap_children(-1, -1)) {
    long left = until - now_ms();
    if (left <= 0) break;
    wait_a_while(left < 100 ? left : 100, waiting);
  }
  // What is left, and whatever it forked meanwhile, until no child is left: the
  // subreaper gets every orphan, so an empty wait means an empty tree.
  while (reap_children(-1, -1)) {
    signal_tree(SIGKILL);
    wait_a_while(20, waiting);
  }
  ::_exit(0);
}

// SIGCHLD wakes the guard's waits only: blocked but while it waits, so that none is
// missed between a check and a wait. Sets inherited to the mask the guard was started
// with; returns the mask to wait with.
sigset_t handle_signals(sigset_t& inherited) {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &child, &inherited);
  sigset_t waiting = inherited;
  sigdelset(&waiting, SIGCHLD);
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  action.sa_handler = wake;
  ::sigaction(SIGCHLD, &action, nullptr);
  action.sa_handler = forward;
  for (int sig : kForwarded) ::sigaction(sig, &action, nullptr);
  // (SIGINT and SIGQUIT stay ignored, as the supervisor set them: a terminal sends them
  // to the agent itself.)
  return waiting;
}

// In the forked agent: its signals and mask as the user's shell would give them, then
// the agent's program; what exec failed with is written to report.
[[noreturn]] void exec_agent(const Setup& setup, const sigset_t& inherited, pid_t guard,
                             int report) {
  for (int sig : kAgentDefaults) ::signal(sig, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &inherited, nullptr);
  // The agent does not outlive its guard (which outlives the supervisor to end it).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (::getppid() != guard) ::_exit(127);
  // The agent creates files as the user would (the supervisor's umask keeps the store
  // private: fsnap/user_umask.hpp).
  ::umask(setup.umask);
  if (::chdir(setup.dir) == 0) ::execvpe(setup.argv[0], setup.argv, setup.envp);
  int err = errno;
  ssize_t ignored = ::write(report, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

// Starts the agent; its pid once its program runs. When it cannot be started, tells the
// supervisor why and exits.
pid_t start_agent(const Setup& setup, const sigset_t& inherited) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    tell(setup.channel, Message::kExecFailed, errno);
    ::_exit(127);
  }
  pid_t guard = ::getpid();
  pid_t agent = ::fork();
  if (agent < 0) {
    tell(setup.channel, Message::kExecFailed, errno);
    ::_exit(127);
  }
  if (agent == 0) {
    ::close(report[0]);
    exec_agent(setup, inherited, guard, report[1]);
  }
  ::close(report[1]);
  // The report pipe closes unread when exec succeeds (O_CLOEXEC).
  int exec_error = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_error)) {
    while (::waitpid(agent, nullptr, 0) < 0 && errno == EINTR) {
    }
    tell(setup.channel, Message::kExecFailed, exec_error);
    ::_exit(127);
  }
  return agent;
}

}  // namespace

void run(const Setup& setup) {
  ::prctl(PR_SET_NAME, "shadowbox-guard", 0, 0, 0);
  // Orphans of the agent's tree are reparented here, not to init: they stay findable.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // The supervisor's descriptors are not the guard's to hold (a lock held by one would
  // outlive the supervisor); those the agent inherits stay until it is started.
  close_descriptors(true, setup.channel, setup.keep_fd);
  sigset_t inherited;
  sigset_t waiting = handle_signals(inherited);

  pid_t agent = start_agent(setup, inherited);
  g_agent = agent;
  tell(setup.channel, Message::kStarted, agent);
  close_descriptors(false, setup.channel, setup.keep_fd);

  // Until the agent and everything it left has ended (the supervisor ends the rest when
  // the agent exits), or the supervisor is gone.
  while (reap_children(agent, setup.channel)) {
    pollfd p{setup.channel, POLLIN, 0};
    if (::ppoll(&p, 1, nullptr, &waiting) <= 0) continue;
    char byte;
    ssize_t got = ::recv(setup.channel, &byte, 1, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      end_tree(setup.grace_ms, waiting);
    }
  }
  ::_exit(0);
}

}  // namespace hooks::agent_guard
