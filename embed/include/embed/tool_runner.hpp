// ToolRunner — every in-process tool call as a transaction
// (docs/conformance/EXECUTION_STATE.md, Tool Transaction Semantics), through the
// transaction core (ToolTransactions) that the hook path and the CLI use too:
//
//   handler throws                 -> failed ToolResult with the message
//   ToolResult.success == false    -> the result as returned
//   ToolValidationError            -> failed ToolResult
//   a non-standard exception       -> recorded as a failure, then re-thrown
//   VisibilityExpansionRequired    -> as if never run (nothing logged), re-thrown for the
//                                     caller to retry
//   deadline exceeded              -> PromptEvaluationError
//
// Under containment (ExecutionState::set_containment) every call is admitted first: a
// denied call runs nothing (ToolResult::denied_by says why; one `denied` boundary
// records it), and a call's cost_usd is charged to the run. Every failure goes to the
// core's one rollback decision (RollbackPolicy): rolled back to the pre-tool boundary,
// refused (a call nested in this one changed files since it began) or kept by
// configuration. Every call ends with a boundary of its own —
// post_tool after a success, phase checkpoint after a rollback — so the newest
// boundary is always the current state. Every call is recorded in the state's
// CheckpointStore (if any) and as a ToolInvoked event in the session's LOG slice.
// Telemetry failures (a publish callback) are reported on stderr and never roll
// anything back.
//
// Thread-safety: one call at a time per ExecutionState (a handler may call execute for
// a nested call).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "embed/memory_boundary_log.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/execution_state.hpp"
#include "sandbox/rollback_policy.hpp"
#include "sandbox/tool_transactions.hpp"

namespace embed {

// What a tool returns.
struct ToolResult {
  bool success = true;
  std::string message;  // summary shown to the model
  std::string value;    // optional payload (JSON text)
  double cost_usd = 0;  // what the call cost, for containment (a paid API, a sub-model)
  // Set by the runner when containment denied the call: it did not run.
  std::optional<policy::SafetyEvent> denied_by;
};

// The exceptions below are the protocol between a handler and the runner (the rollback
// triggers of docs/conformance/EXECUTION_STATE.md), not errors of the library, which
// throws fsnap::Error.

// The parameters do not fit the tool.
class ToolValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The tool needs more of the prompt made visible; the caller retries after expanding.
class VisibilityExpansionRequired : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The evaluation's deadline passed (thrown by handlers that notice it themselves).
class DeadlineExceededError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The prompt evaluation cannot continue (a deadline passed during a tool call).
class PromptEvaluationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ToolRunner;

// What a handler gets besides its call.
struct ToolContext {
  sandbox::ExecutionState& state;
  const sandbox::ToolCall& call;
  std::optional<fsnap::TimePoint> deadline;
  ToolRunner& runner;  // for nested calls
};

// A tool: an optional parameter check and the handler.
struct Tool {
  std::function<void(const sandbox::ToolCall&)> validate;  // throws ToolValidationError
  std::function<ToolResult(const sandbox::ToolCall&, ToolContext&)> handler;
};

// Runs tool calls against one ExecutionState with transaction semantics.
class ToolRunner {
 public:
  ToolRunner(sandbox::ExecutionState& state, std::map<std::string, Tool> tools,
             std::string prompt_name, std::string run = std::string(fsnap::kDefaultRun),
             sandbox::RollbackPolicy policy = {});

  // Executes call; see the table above.
  ToolResult execute(const sandbox::ToolCall& call,
                     std::optional<fsnap::TimePoint> deadline = std::nullopt);

  // What became of the last failed call (rolled back, refused, kept), or nullopt.
  const std::optional<sandbox::RollbackDecision>& last_decision() const { return last_decision_; }

  // Best-effort observer of every ToolInvoked event.
  void set_publisher(std::function<void(const sandbox::ToolInvoked&)> publish) {
    publish_ = std::move(publish);
  }

 private:
  ToolResult fail(const sandbox::ToolCall& call, const ToolResult& result);
  void publish(const sandbox::ToolCall& call, const ToolResult& result, fsnap::TimePoint start);

  sandbox::ExecutionState& state_;
  std::map<std::string, Tool> tools_;
  std::string prompt_name_;
  MemoryBoundaryLog log_;
  sandbox::ToolTransactions transactions_;
  std::optional<sandbox::RollbackDecision> last_decision_;
  std::function<void(const sandbox::ToolInvoked&)> publish_;
  std::vector<std::string> running_;  // the calls running, outermost first
};

}  // namespace embed
