// The agent's guard: a small process between a run's supervisor and its agent, so that
// the agent's whole process tree ends when the supervisor dies, however it dies.
//
// Why a process of its own: the supervisor cannot end anything once it is dead (kill -9
// leaves it no last word), and PR_SET_PDEATHSIG reaches only a direct child, with a
// signal the agent may ignore (Claude Code ignores SIGTERM while busy) — its descendants
// are reparented to init and live on. The guard is the agent's parent and a child
// subreaper, so every process the agent starts stays its descendant, orphans included.
// It holds one end of a socket pair whose other end only the supervisor holds: when the
// supervisor dies (or gives the agent up) the guard reads end-of-file at once, sends
// SIGTERM to every descendant, SIGKILL after the grace to what is left (and to what was
// forked meanwhile), reaps them all, and only then exits. It keeps the run's processes
// lock (hooks/run_processes.hpp) until then, so that no command takes the run for ended
// while a process of it lives. The agent has PR_SET_PDEATHSIG SIGKILL towards the
// guard, for the one case the guard cannot handle (it was killed itself).
//
// The guard is forked from a process with threads and does not exec: it must not
// allocate nor take a lock. Everything here uses system calls and static storage only.
//
// Thread-safety: run() is the body of a forked process.
#pragma once

#include <sys/types.h>

namespace hooks::agent_guard {

// What the guard tells the supervisor over the socket pair, in order: kStarted (the
// agent's pid) or kExecFailed (the errno of the exec), then kExited (the agent's raw
// wait status) when the agent has exited.
struct Message {
  enum Kind : int { kStarted = 1, kExecFailed = 2, kExited = 3 };
  int kind = 0;
  int value = 0;
};

// Everything the guard needs, made before the fork.
struct Setup {
  char* const* argv = nullptr;  // the agent's command, null-terminated (argv[0] looked up in PATH)
  char* const* envp = nullptr;  // its whole environment, null-terminated
  const char* dir = nullptr;    // where it starts
  mode_t umask = 022;           // the user's (fsnap/user_umask.hpp)
  int channel = -1;             // the guard's end of the socket pair
  int keep_fd = -1;             // kept open until every process of the tree has ended (or -1)
  long grace_ms = 5000;         // SIGTERM to SIGKILL once the supervisor is gone
};

// The body of the guard: starts the agent, then guards its tree as described above, and
// exits when no process of it is left.
[[noreturn]] void run(const Setup& setup);

}  // namespace hooks::agent_guard
