// The side effects of answering a tool boundary, as data (statekit/effects.hpp): telling
// the agent what was rolled back or why its call is denied, telling the person running
// it what became of the workspace after a failed call, asking the run's supervisor
// to stop it, recording a containment decision in the run's log, warning the user. What
// the hook decides is computed by failure_effects and denial_effects without touching
// anything, so it is tested by looking at the effects; perform_boundary_effects carries
// them out and returns the verdict, which the agent's adapter says in its protocol.
//
//   statekit::Effects effects = failure_effects(event, tx.fail(call, error));
//   // effects[0].as<TellAgent>()->context == "shadowbox rolled back the workspace ..."
//   HookVerdict verdict = perform_boundary_effects(effects, run);
//
// Thread-safety: plain functions; perform_boundary_effects uses run as a hook does.
#pragma once

#include <string>

#include "hooks/agent_event.hpp"
#include "hooks/hook_answer.hpp"
#include "policy/safety_event.hpp"
#include "runs/ledger_run.hpp"
#include "sandbox/tool_transactions.hpp"
#include "statekit/effects.hpp"

namespace hooks {

// Context for the model on the event's answer (additionalContext).
struct TellAgent {
  static constexpr const char* kName = "TellAgent";
  std::string event;  // the hook event answered
  std::string context;
  std::string describe() const { return event; }
};
// A PreToolUse answer denying the call; with stop_reason, the agent's turn ends too.
struct DenyCall {
  static constexpr const char* kName = "DenyCall";
  std::string reason;       // what the model reads
  std::string stop_reason;  // "" to let the agent go on
};
// Asks the run's supervisor to stop the run (runs/run_halt.hpp).
struct RequestHalt {
  static constexpr const char* kName = "RequestHalt";
  std::string halt_reason;  // max_cost, max_steps, ...
  std::string reason;
};
// A line in the run's log.
struct LogToRun {
  static constexpr const char* kName = "LogToRun";
  std::string line;
};
// What the person running the agent is told where the agent shows it to them
// (HookVerdict::notice): what became of the workspace after a failed call.
struct TellUser {
  static constexpr const char* kName = "TellUser";
  std::string text;
};
// A warning for the user (the hook's stderr).
struct WarnUser {
  static constexpr const char* kName = "WarnUser";
  std::string text;
};

// What answering a failed call (after tx.fail) does: the agent is told what was put
// back, or that nothing was and why; the person running it is told too when files were
// put back or a rollback was refused (a failure kept by configuration and a rollback
// with nothing to put back tell them nothing).
statekit::Effects failure_effects(const AgentEvent& event, const sandbox::FailureResult& failure);
// What answering a call containment denied does.
statekit::Effects denial_effects(const AgentEvent& event, const policy::SafetyEvent& safety);

// Performs effects for run; the verdict holds what they said to the agent and the user.
// An effect that fails is a warning in the answer, not an error: the call's outcome is
// already recorded.
HookVerdict perform_boundary_effects(const statekit::Effects& effects, runs::LedgerRun& run);

}  // namespace hooks
