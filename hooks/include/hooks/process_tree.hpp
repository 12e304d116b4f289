// The processes an agent leaves behind. The supervisor makes itself a child subreaper
// (as the agent's guard is: src/agent_guard.hpp), so that every descendant of the agent —
// a backgrounded shell, a daemonised server — stays its descendant when its parent
// exits, and can be found (in /proc) and ended: no agent process outlives a stopped run.
//
// Thread-safety: plain functions; end_descendants is meant for one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <vector>

namespace hooks {

// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER): orphaned
// descendants are reparented to it instead of to init. Error kIo if refused.
void become_subreaper();

// Every live (not zombie) descendant of pid, from /proc; pid itself excluded.
std::vector<pid_t> live_descendants(pid_t pid);

// What end_descendants did.
struct TreeEnding {
  std::size_t terminated = 0;  // processes sent SIGTERM
  std::size_t killed = 0;      // processes still there after the grace, sent SIGKILL
  bool all_gone = true;        // false: some survived even SIGKILL within the time given
};

// Ends every descendant of this process but own and spared: SIGTERM, up to grace for
// them to exit, then SIGKILL for what is left, again and again for processes forked
// meanwhile, until none is left (or grace has passed twice more). Descendants that were
// reparented here are reaped — all but own (the agent's guard, src/agent_guard.hpp: it
// exits by itself once its tree is empty, with the agent's exit status told first),
// which is neither signalled nor reaped here: reap_own is called to reap it. spared are
// helpers this process started itself (a detached maintenance of the store, reparented
// here): neither signalled, nor waited for, nor reaped — their caller reaps them, so
// that no process of the agent can be given one of their pids meanwhile.
TreeEnding end_descendants(std::chrono::milliseconds grace, pid_t own,
                           const std::function<void()>& reap_own,
                           const std::vector<pid_t>& spared = {});

}  // namespace hooks
