// RunStats — what a run has done so far, a computed slice (sandbox/computed.hpp) of its
// session: the tool calls that ended and how (from the ToolInvoked log), and
// containment's count of steps and spend (from its state). Recomputed only when one of
// those slices changed, and only when read: `shadowbox runs` reads it from each run's
// newest session; a hook process, which does not read it, pays nothing for it. With a
// window on tool_invoked (config session.windows), calls counts what the window kept.
#pragma once

#include <cstddef>

#include "sandbox/session.hpp"

namespace sandbox {

// A run's statistics.
struct RunStats {
  std::size_t calls = 0;   // tool calls that ended
  std::size_t failed = 0;  // of them, the ones that failed
  std::size_t steps = 0;   // tool calls containment admitted
  double cost_usd = 0;     // the agent's spend as containment last counted it
};

// Installs RunStats in session (again: replaces it).
void install_run_stats(Session& session);

// The statistics of a session snapshot (a run's newest, read back from the ledger).
RunStats run_stats(const SessionSnapshot& snapshot);

}  // namespace sandbox
