// SafetyEvent — a normalised record of a limit that tripped: what (event type and
// decision), which check (hook), when, the limit and the value that reached it, and the
// call it concerned (docs/conformance/EXECUTION_CONTEXT.md, section 7).
//
// Thread-safety: a plain value.
#pragma once

#include <string>

#include "policy/decision.hpp"

namespace policy {

// One tripped limit.
struct SafetyEvent {
  StopReason type = StopReason::kAborted;
  Decision decision = Decision::kHalt;
  std::string hook;    // "ExecutionContext", "CircuitBreaker", "BudgetWindowHook", ...
  std::string reason;  // one line, for people and for the model that is stopped
  double limit = 0;    // the limit (USD, steps, retries, ms, calls, failures)
  double value = 0;    // the value that reached it
  TimePoint at;
  std::string node_id;  // the call it concerned, if any
  std::string key;      // the circuit or window key (a tool name), if any

  friend bool operator==(const SafetyEvent&, const SafetyEvent&) = default;
};

}  // namespace policy
