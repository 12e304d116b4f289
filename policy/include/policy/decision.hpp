// Decision and StopReason — what containment answers for a call, and why a run stops
// (docs/conformance/EXECUTION_CONTEXT.md, section 6), with the names the ledger, the CLI
// and the agent see.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string_view>

namespace policy {

using TimePoint = std::chrono::system_clock::time_point;
// The injected clock: what time it is. Empty means the system clock.
using Now = std::function<TimePoint()>;
// now() if set, else the system clock's.
TimePoint now_of(const Now& now);
// t + d, or the latest (for a negative d, the earliest) TimePoint where that is beyond
// what a TimePoint holds: a deadline however far away never wraps into the past.
TimePoint saturating_add(TimePoint t, std::chrono::milliseconds d);

// What a call may do.
enum class Decision {
  kAllow,    // go ahead
  kDegrade,  // go ahead, but a limit is near (a budget window past its degrade level)
  kRetry,    // the call failed; it may be tried again
  kHalt,     // do not run it: the run (or, for a circuit, this kind of call) is stopped
};

// "allow", "degrade", "retry", "halt".
std::string_view to_string(Decision decision);

// Why a call was halted (the error taxonomy of docs/conformance/EXECUTION_CONTEXT.md).
enum class StopReason {
  kBudgetExceeded,       // cost ceiling reached
  kRetryBudgetExceeded,  // run-wide retry budget used up
  kCircuitOpen,          // the circuit of this kind of call is open
  kStepLimitExceeded,    // step limit reached
  kTimeout,              // the run's (or the call's) time is up
  kAborted,              // abort() was called
  kProviderRateLimit,    // a budget window is full
  kProviderError,        // failures used up the retry budget
  // Beyond the document: the repeat guard (repeat_guard.hpp).
  kRepeatedCall,  // the same call with the same input asked too often in a row: refused
  kLoop,          // ... so often that the agent is taken to be looping: the run stops
};

// The spec's event_type: "budget_exceeded", "retry_budget_exceeded", "circuit_open",
// "step_limit_exceeded", "timeout", "aborted", "provider_rate_limit", "provider_error";
// and ours, "repeated_call", "loop_detected".
std::string_view to_string(StopReason reason);
// The inverse of to_string, or nullopt.
std::optional<StopReason> parse_stop_reason(std::string_view text);
// The short name a person reads in `shadowbox runs` (halt_reason): "max_cost",
// "retry_budget", "circuit_open", "max_steps", "timeout", "aborted", "rate_limit",
// "provider_error", "repeated_call", "loop".
std::string_view halt_reason_name(StopReason reason);
// Whether a halt for this reason stops the whole run (every later call), rather than
// one kind of call (an open circuit), one window of time (a rate limit) or one repeated
// call (the repeat guard's refusal).
bool stops_run(StopReason reason);

}  // namespace policy
