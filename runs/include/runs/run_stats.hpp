// The figures of a run, each defined once (docs/figures.md) and shown the same by every
// command (`runs`, `states RUN`, `run`'s own end, the fleet's record):
//
//   calls         every tool call the agent asked for that shadowbox saw:
//                 steps + refused + agent denied
//   steps         calls allowed to run (counted when they start; what --max-steps limits)
//   failed        steps that ended failed (the tool's error, a command's non-zero exit)
//   rolled back   failed calls whose changes shadowbox put back (all or some of them)
//   refused       calls shadowbox refused at a limit: they never ran and did not fail
//   agent denied  calls the agent's own permissions refused: they never ran
//   cost          the agent's model requests, in USD, as last counted (runs/pricing.hpp
//                 prices them; hooks::AgentSpend says when an unpriced model makes it an
//                 estimate)
//
// CallTally (sandbox/call_tally.hpp) holds the counts. RunStats is computed from it,
// containment's state (the cost) and, for runs recorded before the tally, the
// ToolInvoked log.
//
// Thread-safety: plain values and functions; the slice type is registered once,
// thread-safely.
#pragma once

#include <cstddef>
#include <optional>

#include "sandbox/call_tally.hpp"
#include "sandbox/session.hpp"

namespace runs {

// A run's figures (see above): the tally's counts, the calls they add up to, the cost.
struct RunStats : sandbox::CallTally {
  std::size_t calls = 0;
  double cost_usd = 0;
  friend bool operator==(const RunStats&, const RunStats&) = default;
};

// Installs RunStats in session as a computed slice (again: replaces it).
void install_run_stats(sandbox::Session& session);

// The statistics of a session snapshot (a run's newest, read back from the ledger).
RunStats run_stats(const sandbox::SessionSnapshot& snapshot);

}  // namespace runs
