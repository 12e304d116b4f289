// The counts of a run's tool calls (docs/figures.md defines each). ToolTransactions —
// the one path of every tool call — keeps them in the run's session as the LOG slice
// "run.calls" (newest current), written with the boundary of each step: no rollback
// gives a count back, and every process of the run (the next hook, a resume) continues
// it. runs/run_stats.hpp turns them into a run's figures.
//
// Thread-safety: plain values and functions; the slice type is registered once,
// thread-safely.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "sandbox/session.hpp"

namespace sandbox {

// The counts of a run's tool calls of runs/run_stats.hpp.
struct CallTally {
  std::size_t steps = 0;
  std::size_t failed = 0;
  std::size_t rolled_back = 0;
  std::size_t refused = 0;
  std::size_t agent_denied = 0;
  friend bool operator==(const CallTally&, const CallTally&) = default;
};

// Registers CallTally as the slice type "run.calls" (LOG). Idempotent;
// register_builtin_slice_types does it.
void register_call_tally_slice_type();
// Changes the session's tally with change (a tally of zeros if it has none).
void update_call_tally(Session& session, const std::function<void(CallTally&)>& change);
// The tally a session snapshot holds, or nullopt (a run recorded before it).
std::optional<CallTally> call_tally(const SessionSnapshot& session);

}  // namespace sandbox
