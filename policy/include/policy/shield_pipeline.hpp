// ShieldPipeline — ordered per-call checks (hooks) consulted before each call; the
// first that halts wins, and a degrade is kept unless a later hook halts. Hooks also
// hear what a call cost (on_charge) and that it failed (on_error, whose answer says
// whether the failure may be retried or stops the run), and report the limits they
// tripped as SafetyEvents. A hook checks every call, or only model calls or only tool
// calls (add_model_check, add_tool_check).
//
// Thread-safety: a pipeline may be consulted from several threads; each hook guards its
// own state.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "policy/decision.hpp"
#include "policy/run_metadata.hpp"
#include "policy/safety_event.hpp"

namespace policy {

// What kind of call a node is.
enum class NodeKind { kLlm, kTool };
// "llm", "tool".
std::string_view to_string(NodeKind kind);

// What a hook is told about one call.
struct CallContext {
  std::string node_id;
  NodeKind kind = NodeKind::kTool;
  std::string operation_name;
  std::string key;  // the call's circuit and window key (a tool's name); may be ""
  double cost_estimate_usd = 0;
  std::size_t step = 0;  // the run's step count before this call
  double run_cost_usd = 0;
  TimePoint at;
  RunMetadata run;  // the run the call is part of (its model, its tags...)
};

// A hook's answer: the decision, and the event when it did not allow.
struct CheckVerdict {
  Decision decision = Decision::kAllow;
  std::optional<SafetyEvent> event;
};

// One per-call check.
class ShieldHook {
 public:
  virtual ~ShieldHook() = default;
  // The hook's name, as SafetyEvent::hook says it.
  virtual std::string_view name() const = 0;
  // Before a call: may it go?
  virtual CheckVerdict before_call(const CallContext& call) = 0;
  // After a call: what it cost.
  virtual void on_charge(const CallContext& call, double cost_usd) {
    (void)call;
    (void)cost_usd;
  }
  // After a call: it failed. kRetry (the default): the call may be tried again, the
  // retry budget counting it; kHalt, with the event that says why: a failure the hook
  // knows no retry mends (a revoked key, an account out of credit) — the run stops if
  // the event's reason stops a run (policy::stops_run), else the call is not retried.
  virtual CheckVerdict on_error(const CallContext& call, const std::string& error) {
    (void)call;
    (void)error;
    return {Decision::kRetry, std::nullopt};
  }
};

// Which calls a hook of a pipeline checks.
enum class CallsChecked { kEvery, kModel, kTool };

// Hooks in order.
class ShieldPipeline {
 public:
  // Adds a hook after the others, for the calls it checks (every call by default).
  void add(std::shared_ptr<ShieldHook> hook, CallsChecked calls = CallsChecked::kEvery);
  // A hook of model calls only (wrap_llm_call, a model's cost charged), of tool calls only.
  void add_model_check(std::shared_ptr<ShieldHook> hook) {
    add(std::move(hook), CallsChecked::kModel);
  }
  void add_tool_check(std::shared_ptr<ShieldHook> hook) {
    add(std::move(hook), CallsChecked::kTool);
  }
  // Asks every hook of the call's kind in order; the first halt wins (later hooks are
  // not asked), a degrade is kept unless a later hook halts. Events are kept (see
  // take_events()).
  CheckVerdict before_call(const CallContext& call);
  void on_charge(const CallContext& call, double cost_usd);
  // Tells every hook of the call's kind; the first halt is the answer (its event kept),
  // else kRetry.
  CheckVerdict on_error(const CallContext& call, const std::string& error);
  // The events hooks reported, oldest first, and forgets them (the ExecutionContext
  // moves them into the run's log after each call).
  std::vector<SafetyEvent> take_events();

 private:
  // Each hook with the calls it checks.
  std::vector<std::pair<std::shared_ptr<ShieldHook>, CallsChecked>> hooks_;
  // The hooks of call's kind, in order.
  std::vector<ShieldHook*> hooks_of(const CallContext& call) const;
  std::mutex mutex_;  // guards events_
  std::vector<SafetyEvent> events_;
};

}  // namespace policy
