#include "hooks/process_tree.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "fsnap/posix.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace {

// One process as /proc/<pid>/stat describes it.
struct ProcStat {
  pid_t ppid = 0;
  char state = '?';
};

bool read_stat(pid_t pid, ProcStat& out) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses.
  std::size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 4 >= text.size()) return false;
  out.state = text[paren + 2];
  out.ppid = static_cast<pid_t>(std::strtol(text.c_str() + paren + 4, nullptr, 10));
  return true;
}

// Every process of the system, with its parent and state.
std::map<pid_t, ProcStat> all_processes() {
  std::map<pid_t, ProcStat> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || end == nullptr || *end != '\0') continue;
    ProcStat stat;
    if (read_stat(static_cast<pid_t>(pid), stat)) out.emplace(static_cast<pid_t>(pid), stat);
  }
  ::closedir(dir);
  return out;
}

// The descendants of root in processes, zombies included.
std::vector<pid_t> descendants_of(pid_t root, const std::map<pid_t, ProcStat>& processes) {
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, stat] : processes) children.emplace(stat.ppid, pid);
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    pid_t parent = todo.back();
    todo.pop_back();
    auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      out.push_back(it->second);
      todo.push_back(it->second);
    }
  }
  return out;
}

bool is_zombie(const ProcStat& stat) {
  return stat.state == 'Z' || stat.state == 'X';
}

// The processes end_descendants leaves alone: own and the spared ones.
struct LeftAlone {
  pid_t own;
  const std::vector<pid_t>& spared;

  bool operator()(pid_t pid) const {
    return pid == own || std::find(spared.begin(), spared.end(), pid) != spared.end();
  }
};

// Reaps the exited direct children of this process but those left alone; reap_own
// does it for own.
void reap(const LeftAlone& alone, const std::function<void()>& reap_own) {
  if (reap_own) reap_own();
  pid_t self = ::getpid();
  for (const auto& [pid, stat] : all_processes()) {
    if (!alone(pid) && stat.ppid == self && is_zombie(stat)) ::waitpid(pid, nullptr, WNOHANG);
  }
}

// The live descendants of this process but those left alone.
std::vector<pid_t> live_but(const LeftAlone& alone) {
  std::vector<pid_t> out = live_descendants(::getpid());
  std::erase_if(out, alone);
  return out;
}

// Signals every live descendant of this process but those left alone; how many there
// were.
std::size_t signal_all(int sig, const LeftAlone& alone) {
  std::vector<pid_t> targets = live_but(alone);
  for (pid_t pid : targets) ::kill(pid, sig);
  return targets.size();
}

// Reaps the zombies left once every descendant has died: orphans reach this process
// (the subreaper) only as their parents die, so a few rounds may be needed.
void reap_leftovers(const LeftAlone& alone, const std::function<void()>& reap_own) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  for (;;) {
    reap(alone, reap_own);
    bool left = false;
    for (pid_t pid : descendants_of(::getpid(), all_processes())) left = left || !alone(pid);
    if (!left || std::chrono::steady_clock::now() >= until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Waits up to limit for this process to have no live descendant but those left alone.
bool wait_gone(std::chrono::milliseconds limit, const LeftAlone& alone,
               const std::function<void()>& reap_own) {
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    reap(alone, reap_own);
    if (live_but(alone).empty()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

void become_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    throw fsnap::system_error("cannot become a subreaper", errno);
  }
}

std::vector<pid_t> live_descendants(pid_t pid) {
  std::map<pid_t, ProcStat> processes = all_processes();
  std::vector<pid_t> out;
  for (pid_t p : descendants_of(pid, processes)) {
    if (!is_zombie(processes.at(p))) out.push_back(p);
  }
  return out;
}

TreeEnding end_descendants(std::chrono::milliseconds grace, pid_t own,
                           const std::function<void()>& reap_own,
                           const std::vector<pid_t>& spared) {
  LeftAlone alone{own, spared};
  TreeEnding out;
  out.terminated = signal_all(SIGTERM, alone);
  if (out.terminated == 0 || wait_gone(grace, alone, reap_own)) {
    reap_leftovers(alone, reap_own);
    return out;
  }
  // What is left gets SIGKILL, as do processes forked while we waited.
  auto until = std::chrono::steady_clock::now() + 2 * grace + std::chrono::seconds(1);
  for (;;) {
    out.killed += signal_all(SIGKILL, alone);
    if (wait_gone(std::chrono::milliseconds(100), alone, reap_own)) {
      reap_leftovers(alone, reap_own);
      return out;
    }
    if (std::chrono::steady_clock::now() >= until) {
      out.all_gone = false;
      return out;
    }
  }
}

}  // namespace hooks
