// The lifecycle of an agent run as a state machine (sandbox/state_machine.hpp), kept in
// the run's session as the LOG slice RunLifecycle: one item per move, stamped with the
// session's clock, so `shadowbox states RUN` shows where a run went and when.
//
//   [*] --> created
//   created --> running: agent_started          (shadowbox run, or the first SessionStart)
//   state active { running, resumed }
//   state ended { complete, failed, killed, halted, crashed }
//   active --> complete|failed|killed: agent_ended [outcome == ...]
//   active --> halted: halt                     (containment, shadowbox abort)
//   active --> crashed: crash_detected          (its supervisor died; found by resume)
//   ended --> resumed: agent_started            (shadowbox resume, a new agent session)
//
// A run's agent may end more than once per session (Claude Code's SessionEnd, then the
// agent's exit), so ended accepts agent_ended and halt too: the later word on how it
// ended wins. What the machine rejects — a halt or a crash of a run that never started,
// a crash of an ended run, an outcome it does not know — is an InvalidTransition.
#pragma once

#include <string>

#include "sandbox/builtin_slices.hpp"
#include "sandbox/session.hpp"
#include "sandbox/state_machine.hpp"

namespace sandbox {

// The run's agent started (or a new agent session of it began).
struct AgentStarted {
  std::string summary;
};
// The run's agent (or its session) ended: outcome is "complete", "failed" or "killed".
struct AgentEnded {
  std::string outcome;
  std::string reason;
};
// Containment or `shadowbox abort` stopped the run.
struct RunHalted {
  std::string reason;
};
// The run's supervisor ended without recording how the agent ended.
struct RunCrashed {
  std::string reason;
};

// One move of a run's lifecycle (LOG slice "run.lifecycle"), with the event's reason.
struct RunLifecycle : MachineState {
  std::string reason;
  friend bool operator==(const RunLifecycle&, const RunLifecycle&) = default;
};

using RunLifecycleMachine = StateMachine<AgentStarted, AgentEnded, RunHalted, RunCrashed>;

// The machine (defined once).
const RunLifecycleMachine& run_lifecycle();

// Installs the machine in session as slice RunLifecycle (once; idempotent).
void install_run_lifecycle(Session& session);

}  // namespace sandbox
