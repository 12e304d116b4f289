// The lifecycle of an agent run as a state machine (statekit/state_machine.hpp), kept in
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
// RunStatus, the word `runs` shows, moves with it: record_run_status() moves the machine
// first and records the status only if the machine allowed the move.
//
// A run's agent may end more than once per session (Claude Code's SessionEnd, then the
// agent's exit), so ended accepts agent_ended and halt too: the later word on how it
// ended wins. What the machine rejects — a halt or a crash of a run that never started,
// a crash of an ended run, an outcome it does not know — is an InvalidTransition.
#pragma once

#include <optional>
#include <string>

#include "sandbox/session.hpp"
#include "statekit/state_machine.hpp"

namespace runs {

// Where an agent run stands (LOG: the newest item is the current status).
struct RunStatus {
  // "running", "complete" (the agent exited with status 0, or its session ended),
  // "failed" (it exited with another status), "killed" (by a signal), "halted" (stopped
  // by containment or `shadowbox abort`), "crashed" (its supervisor died while the
  // agent ran; recorded when the run is resumed).
  std::string status;
  std::string reason;
  friend bool operator==(const RunStatus&, const RunStatus&) = default;
};

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
struct RunLifecycle : statekit::MachineState {
  std::string reason;
  friend bool operator==(const RunLifecycle&, const RunLifecycle&) = default;
};

using RunLifecycleMachine = statekit::StateMachine<AgentStarted, AgentEnded, RunHalted, RunCrashed>;

// The machine (defined once).
const RunLifecycleMachine& run_lifecycle();

// Installs the machine in session as slice RunLifecycle (once; idempotent).
void install_run_lifecycle(sandbox::Session& session);

// Registers RunStatus ("run.status") and RunLifecycle ("run.lifecycle") in SliceTypes,
// both LOG. Idempotent and thread-safe; a program calls it once at its start (through
// hooks::register_agent_run_slice_types), before it writes or reads a run's session.
void register_run_slice_types();

// Appends status to the session's RunStatus slice (a LOG slice: rollbacks keep it),
// after moving the run's lifecycle (runs/run_lifecycle.hpp) accordingly.
// InvalidTransition, recording nothing, if the lifecycle does not allow the move;
// Error kInvalidArgument for a status it does not know.
void record_run_status(sandbox::Session& session, RunStatus status);
// Records that the run's agent is starting (`run`, `resume`). A run whose lifecycle
// says its agent is still active had its supervisor die: it is recorded as crashed
// first.
void record_run_start(sandbox::Session& session, const std::string& summary);
// The newest RunStatus of a session snapshot, or nullopt.
std::optional<RunStatus> latest_run_status(const sandbox::SessionSnapshot& session);

}  // namespace runs
