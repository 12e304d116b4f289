// CircuitBreaker — stops a kind of call that keeps failing. Per key (a tool's name, a
// provider): after failure_threshold consecutive failures the circuit opens and calls
// are refused; once recovery_timeout has passed it is half-open and exactly one trial
// call is let through; that call's success closes it, its failure opens it again.
//
// Thread-safety: every method may be called from any thread; allow() hands the single
// half-open trial to exactly one caller.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>

#include "policy/decision.hpp"

namespace policy {

// When a circuit opens, and for how long.
struct CircuitBreakerConfig {
  std::size_t failure_threshold = 5;                   // consecutive failures that open it
  std::chrono::milliseconds recovery_timeout{30'000};  // open this long before a trial
};

// The three states of a circuit.
enum class CircuitState { kClosed, kOpen, kHalfOpen };
// "closed", "open", "half_open".
std::string_view to_string(CircuitState state);

// One key's circuit, as it stands (and as it is persisted).
struct CircuitStatus {
  CircuitState state = CircuitState::kClosed;
  std::size_t consecutive_failures = 0;
  TimePoint opened_at;           // when it last opened
  bool trial_in_flight = false;  // half-open: the one trial call was let through
  TimePoint trial_at;            // when; a trial with no outcome after recovery_timeout
                                 // is taken for lost (a call interrupted, never ended)
  friend bool operator==(const CircuitStatus&, const CircuitStatus&) = default;
};

// What allow() answers.
struct CircuitAdmission {
  bool allowed = true;
  CircuitState state = CircuitState::kClosed;
  bool trial = false;                        // this call is the half-open trial
  std::chrono::milliseconds retry_after{0};  // refused: until the next trial may go
  std::size_t failures = 0;                  // consecutive failures so far
};

// Circuits by key.
class CircuitBreaker {
 public:
  explicit CircuitBreaker(CircuitBreakerConfig config, Now now = {});

  // Whether a call under key may go now. Open: no, until recovery_timeout has passed;
  // then the circuit is half-open and the first caller gets the trial, the others no —
  // until the trial ends, or recovery_timeout after it began (then the next caller gets
  // a new trial: a trial whose outcome never comes must not close the key for good).
  CircuitAdmission allow(const std::string& key);
  // The call under key succeeded: the circuit closes, its failure count starts again.
  void record_success(const std::string& key);
  // The call under key failed: failure_threshold in a row open the circuit; a failed
  // trial opens it again at once.
  void record_failure(const std::string& key);

  // How key's circuit stands now (an open one past its recovery time is half-open).
  CircuitStatus status(const std::string& key) const;
  // Every circuit that is not closed with no failures, by key (to persist).
  std::map<std::string, CircuitStatus> statuses() const;
  // Makes the circuits those persisted (replacing all).
  void restore(std::map<std::string, CircuitStatus> statuses);
  const CircuitBreakerConfig& config() const { return config_; }

 private:
  CircuitStatus current(const CircuitStatus& stored) const;

  CircuitBreakerConfig config_;
  Now now_;
  mutable std::mutex mutex_;
  std::map<std::string, CircuitStatus> circuits_;
};

}  // namespace policy
