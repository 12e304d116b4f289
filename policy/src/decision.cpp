#include "policy/decision.hpp"

#include <array>
#include <limits>
#include <utility>

namespace policy {

namespace {

struct Names {
  StopReason reason;
  std::string_view event_type;
  std::string_view halt_reason;
};

constexpr std::array<Names, 10> kNames = {{
    {StopReason::kBudgetExceeded, "budget_exceeded", "max_cost"},
    {StopReason::kRetryBudgetExceeded, "retry_budget_exceeded", "retry_budget"},
    {StopReason::kCircuitOpen, "circuit_open", "circuit_open"},
    {StopReason::kStepLimitExceeded, "step_limit_exceeded", "max_steps"},
    {StopReason::kTimeout, "timeout", "timeout"},
    {StopReason::kAborted, "aborted", "aborted"},
    {StopReason::kProviderRateLimit, "provider_rate_limit", "rate_limit"},
    {StopReason::kProviderError, "provider_error", "provider_error"},
    {StopReason::kRepeatedCall, "repeated_call", "repeated_call"},
    {StopReason::kLoop, "loop_detected", "loop"},
}};

}  // namespace

TimePoint now_of(const Now& now) {
  return now ? now() : std::chrono::system_clock::now();
}

TimePoint saturating_add(TimePoint t, std::chrono::milliseconds d) {
  using Ticks = TimePoint::duration;
  constexpr Ticks::rep kPerMs =
      std::chrono::duration_cast<Ticks>(std::chrono::milliseconds(1)).count();
  constexpr Ticks::rep kMost = std::numeric_limits<Ticks::rep>::max() / kPerMs;
  TimePoint beyond = d.count() < 0 ? TimePoint::min() : TimePoint::max();
  if (d.count() > kMost || d.count() < -kMost) return beyond;
  Ticks::rep sum = 0;
  if (__builtin_add_overflow(t.time_since_epoch().count(), d.count() * kPerMs, &sum)) return beyond;
  return TimePoint(Ticks(sum));
}

std::string_view to_string(Decision decision) {
  switch (decision) {
    case Decision::kAllow:
      return "allow";
    case Decision::kDegrade:
      return "degrade";
    case Decision::kRetry:
      return "retry";
    case Decision::kHalt:
      return "halt";
  }
  return "unknown";
}

std::string_view to_string(StopReason reason) {
  for (const Names& n : kNames) {
    if (n.reason == reason) return n.event_type;
  }
  return "unknown";
}

std::optional<StopReason> parse_stop_reason(std::string_view text) {
  for (const Names& n : kNames) {
    if (n.event_type == text) return n.reason;
  }
  return std::nullopt;
}

std::string_view halt_reason_name(StopReason reason) {
  for (const Names& n : kNames) {
    if (n.reason == reason) return n.halt_reason;
  }
  return "unknown";
}

bool stops_run(StopReason reason) {
  return reason != StopReason::kCircuitOpen && reason != StopReason::kProviderRateLimit &&
         reason != StopReason::kRepeatedCall;
}

}  // namespace policy
