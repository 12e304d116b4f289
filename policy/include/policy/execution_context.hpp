// ExecutionContext — run-level containment (docs/conformance/EXECUTION_CONTEXT.md):
// the limits of one agent run (or request) across all its model and tool calls — a cost
// ceiling, a step limit, a total retry budget, a wall-clock timeout — plus a circuit
// breaker per kind of call and an optional ShieldPipeline of per-call checks. Every call
// goes through it and gets a Decision; a halted call is not run.
//
//   ExecutionContext context({.max_cost_usd = 2.0, .max_steps = 20});
//   Decision d = context.wrap_tool_call([&](const CancellationToken& token) {
//     return run_tool(token);  // returns what it cost (USD); throws when it fails
//   }, {.operation_name = "grep", .key = "Bash"});
//
// Calls that run elsewhere — a wrapped agent's tools — use the two halves: admit()
// before the call, complete() after it; costs learned after the fact (a model
// request's usage) go to charge(). A step is a call that was allowed to run, whether
// it then succeeds or fails (counting only successes would let a failing loop run
// forever); a call refused by a limit is no step — it is counted as refused. So that an
// agent that keeps asking for refused calls cannot loop forever either, the step limit
// also stops the run once as many calls in a row were refused as it allows steps.
// The state can be taken out (state()) and put into a new context (another process, a
// resumed run).
//
// Thread-safety: every method may be called from any thread; concurrent callers are
// admitted one at a time, so a limit admits exactly as many calls as it allows. A
// wrapped function runs outside the context's lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "policy/budget_window.hpp"
#include "policy/cancellation_token.hpp"
#include "policy/circuit_breaker.hpp"
#include "policy/decision.hpp"
#include "policy/repeat_guard.hpp"
#include "policy/run_metadata.hpp"
#include "policy/safety_event.hpp"
#include "policy/shield_pipeline.hpp"

namespace policy {

// Hard limits of one run; a limit not set does not apply.
struct ExecutionConfig {
  std::optional<double> max_cost_usd;                   // cost ceiling (USD), > 0
  std::optional<std::size_t> max_steps;                 // calls allowed to run, >= 1
  std::optional<std::size_t> max_retries_total;         // failed calls across the run, >= 1
  std::chrono::milliseconds timeout{0};                 // wall clock from the run's start; 0: none
  std::optional<CircuitBreakerConfig> circuit_breaker;  // per call key
  std::optional<BudgetWindowConfig> budget_window;      // calls and spend per window
  RepeatConfig repeat;  // identical calls in a row refused, then the run stopped (off: 0s)
};

// Per-call options.
struct WrapOptions {
  std::string operation_name;     // a label for the node
  std::string key;                // the call's circuit key (a tool's name); "" for none
  double cost_estimate_hint = 0;  // USD: a call that would cross the ceiling is halted
  std::optional<std::chrono::milliseconds> timeout;  // this call's own time limit
  std::optional<std::size_t> retry_policy_override;  // retries of this call (wrap_*)
  std::string parent_node_id;
  // A digest of the call's input in a canonical form, which the repeat guard compares
  // (with key): "" leaves the call out of its count.
  std::string input_fingerprint;
};

// How a node ended.
enum class NodeStatus { kInFlight, kOk, kHalted, kAborted, kTimeout, kError };
// "in_flight", "ok", "halted", "aborted", "timeout", "error".
std::string_view to_string(NodeStatus status);

// One model or tool call of the run.
struct NodeRecord {
  std::string node_id;
  std::string parent_id;
  NodeKind kind = NodeKind::kTool;
  std::string operation_name;
  std::string key;
  TimePoint start;
  std::optional<TimePoint> end;
  NodeStatus status = NodeStatus::kInFlight;
  double cost_usd = 0;
  std::size_t retries_used = 0;
};

// What a context has counted: enough to continue it in another process or a resumed
// run (nodes are not part of it; the ledger records every call).
struct ContainmentState {
  std::size_t step_count = 0;        // calls allowed to run (steps)
  std::size_t refused_count = 0;     // calls refused by a limit (never run, no step)
  std::size_t refused_in_a_row = 0;  // refusals since the last call allowed to run
  std::size_t retries_used = 0;
  double cost_usd = 0;
  bool aborted = false;
  std::string abort_reason;
  std::optional<StopReason> halted_by;  // the first run-wide stop
  TimePoint started_at;                 // the run's start (its timeout counts from it)
  RepeatStreak repeat;                  // the newest identical calls in a row
  std::map<std::string, CircuitStatus> circuits;
  std::vector<WindowEntry> window;
  std::vector<SafetyEvent> events;
  std::size_t next_node = 1;  // node ids stay unique across the contexts of a run
};

// The run at one moment (get_snapshot in the spec).
struct ContextSnapshot {
  std::string run_id;
  std::string request_id;
  std::size_t step_count = 0;     // calls allowed to run
  std::size_t refused_count = 0;  // calls refused
  double cost_usd = 0;
  std::size_t retries_used = 0;
  bool aborted = false;
  std::string abort_reason;
  std::optional<StopReason> halted_by;
  std::chrono::milliseconds elapsed{0};
  std::vector<NodeRecord> nodes;
  std::vector<SafetyEvent> events;
};

// What admit() answers.
struct Admission {
  Decision decision = Decision::kAllow;  // kAllow, kDegrade or kHalt
  std::string node_id;
  std::optional<SafetyEvent> event;  // why it was halted (or degraded)
  CancellationToken token;           // the call's: the run's, with the call's own deadline
};

// How a call ended (complete()).
struct CallResult {
  bool success = true;
  double cost_usd = 0;  // what it cost, if known
  std::string error;    // failed: why
  bool timed_out = false;
  // The call's key: needed when the call was admitted by another context (another
  // process of the same run), whose node this one does not know.
  std::string key;
};

// Containment of one run.
class ExecutionContext {
 public:
  // A new run, or — with from — one that continues a run counted elsewhere.
  // std::invalid_argument for limits out of range.
  explicit ExecutionContext(ExecutionConfig config, RunMetadata metadata = {},
                            std::shared_ptr<ShieldPipeline> pipeline = nullptr, Now now = {},
                            std::optional<ContainmentState> from = std::nullopt);

  // Before a call: checks, in order, abort, an earlier stop, timeout, the cost ceiling
  // (with the call's estimate), the step limit (steps, then refusals in a row) and the
  // retry budget (a run stop: this and every later call halt), the repeat guard (a
  // call with an input fingerprint is counted in the streak of identical calls: refused
  // at its deny threshold, a run stop at its halt threshold), the budget window, the
  // pipeline (a hook's halt for a reason that stops_run is a run stop too), and the
  // call key's circuit. An admitted call is a step and counts in the window; a halted
  // one is counted as refused.
  Admission admit(NodeKind kind, const WrapOptions& options = {});
  // A call that ran without being admitted (its admission was lost, as when a hook was
  // killed before it answered): a step, counted in the window, whatever the limits say;
  // returns its node id, for complete().
  std::string count_unadmitted(NodeKind kind, const WrapOptions& options = {});
  // An admitted call that did not run after all (the agent's own permissions refused
  // it): it is no step. Its node, if this context admitted it, ends halted; the step is
  // given back either way (another process of the run may have admitted it). The
  // caller withdraws a call once.
  void withdraw(const std::string& node_id);
  // After an admitted call: its cost is charged; a success closes its circuit, a
  // failure (or a call past its own deadline) uses one retry and counts toward its
  // circuit, and the failure that uses up the retry budget stops the run
  // (provider_error). A call that did not succeed because the run's time ran out
  // during it (or the run was aborted) uses no retry and is no failure of its tool:
  // it ends as timed out, and the timeout stops the run then and there (its event,
  // its stop snapshot), not at the next call. A failure is told to the pipeline's
  // hooks of its kind (ShieldHook::on_error), whose halt stops the run (or, for a
  // reason that stops no run, only this call's retries). Returns kAllow for a success,
  // kRetry for a failure that may be tried again, kHalt otherwise.
  Decision complete(const std::string& node_id, const CallResult& result);
  // Cost learned after the fact (a model request's usage), charged to the run (and to
  // node_id if it is one).
  void charge(double cost_usd, const std::string& node_id = "");

  // Runs fn under containment (fn returns what it cost, in USD; it throws when it
  // fails). Halted: fn is not run, kHalt. Failed: kRetry, or kHalt if a hook's on_error
  // said so — or, with retry_policy_override N, fn is tried again up to N times (each
  // try a step) first.
  // fn past its deadline counts as failed (kHalt when the run's time is up).
  Decision wrap_llm_call(const std::function<double(const CancellationToken&)>& fn,
                         const WrapOptions& options = {});
  Decision wrap_tool_call(const std::function<double(const CancellationToken&)>& fn,
                          const WrapOptions& options = {});

  // Adds an event someone else detected to the run's log.
  void record_event(SafetyEvent event);
  // Stops the run: every later call halts, and the token is cancelled.
  void abort(const std::string& reason);
  // Checks the timeout between calls (a supervisor's clock): once the run's time is
  // up, stops the run (if no call did yet) and returns the timeout event; nullopt
  // while there is time left or without a timeout.
  std::optional<SafetyEvent> check_deadline();

  // The run now (safe at any time).
  ContextSnapshot snapshot() const;
  // The run as it was just before its first run-wide stop (partial results), or
  // nullopt if it has not stopped.
  std::optional<ContextSnapshot> stop_snapshot() const;
  // What it has counted, to continue elsewhere.
  ContainmentState state() const;
  // The run's token: cancelled by abort() and at the timeout.
  CancellationToken token() const { return token_; }
  // When the run's time is up, if it has a timeout.
  std::optional<TimePoint> deadline() const;
  const ExecutionConfig& config() const { return config_; }
  const RunMetadata& metadata() const { return metadata_; }

 private:
  Decision wrap(NodeKind kind, const std::function<double(const CancellationToken&)>& fn,
                const WrapOptions& options);
  // The run-wide limit a call would hit, with its event, or nullopt (mutex_ held).
  std::optional<SafetyEvent> run_limit(const WrapOptions& options, std::size_t steps_before,
                                       const std::string& node_id) const;
  // The timeout event at now (mutex_ held).
  SafetyEvent timeout_event(TimePoint now) const;
  // Records a run-wide stop (the first one is the run's halt reason); mutex_ held.
  void stop(const SafetyEvent& event);
  NodeRecord* node(const std::string& node_id);  // mutex_ held
  ContextSnapshot snapshot_locked() const;       // mutex_ held
  CallContext call_context(NodeKind kind, const WrapOptions& options, const std::string& node_id,
                           std::size_t steps_before) const;  // mutex_ held
  // A refusal of the per-call checks: its event, and whether it stops the whole run.
  struct Refusal {
    SafetyEvent event;
    bool stops_run = false;
  };
  // Asks the shield pipeline about call; a refusal, or nullopt with out's decision
  // degraded where it says so (mutex_ held).
  // The pipeline's answer to a failed call: the event of a hook that halts, or nullopt.
  std::optional<SafetyEvent> failure_halt(const CallContext& call, const std::string& error);
  std::optional<Refusal> pipeline_check(const CallContext& call, const WrapOptions& options,
                                        Admission& out);
  // The repeat guard's refusal of a call (the streak counted), or nullopt (mutex_ held).
  std::optional<Refusal> repeated_call(const WrapOptions& options, const std::string& node_id);
  // The open circuit of options.key that refuses call, or nullopt (mutex_ held).
  std::optional<SafetyEvent> open_circuit(const CallContext& call, const WrapOptions& options,
                                          const std::string& node_id);
  // Records record as refused with event (a run-wide stop when stops_run) and makes out
  // the halt it answers (mutex_ held).
  Admission refuse(NodeRecord record, Admission out, SafetyEvent event, NodeStatus status,
                   bool stops_run);

  ExecutionConfig config_;
  RunMetadata metadata_;
  std::shared_ptr<ShieldPipeline> pipeline_;
  Now now_;
  std::optional<CircuitBreaker> circuits_;
  std::shared_ptr<BudgetWindowHook> window_;
  CancellationToken token_;
  mutable std::mutex mutex_;
  ContainmentState state_;
  std::vector<NodeRecord> nodes_;
  std::optional<ContextSnapshot> stop_snapshot_;
};

}  // namespace policy
