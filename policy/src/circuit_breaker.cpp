#include "policy/circuit_breaker.hpp"

#include <stdexcept>

namespace policy {

std::string_view to_string(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "unknown";
}

CircuitBreaker::CircuitBreaker(CircuitBreakerConfig config, Now now)
    : config_(config), now_(std::move(now)) {
  if (config_.failure_threshold == 0) {
    throw std::invalid_argument("a circuit breaker's failure threshold must be at least 1");
  }
}

CircuitStatus CircuitBreaker::current(const CircuitStatus& stored) const {
  CircuitStatus s = stored;
  TimePoint now = now_of(now_);
  if (s.state == CircuitState::kOpen &&
      now >= saturating_add(s.opened_at, config_.recovery_timeout)) {
    s.state = CircuitState::kHalfOpen;
    s.trial_in_flight = false;
  }
  if (s.state == CircuitState::kHalfOpen && s.trial_in_flight &&
      now >= saturating_add(s.trial_at, config_.recovery_timeout)) {
    s.trial_in_flight = false;  // lost: its outcome never came
  }
  return s;
}

CircuitAdmission CircuitBreaker::allow(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = circuits_.find(key);
  if (it == circuits_.end()) return CircuitAdmission{};
  CircuitStatus& s = it->second;
  s = current(s);
  CircuitAdmission a;
  a.state = s.state;
  a.failures = s.consecutive_failures;
  switch (s.state) {
    case CircuitState::kClosed:
      return a;
    case CircuitState::kOpen:
      a.allowed = false;
      a.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(
          config_.recovery_timeout - (now_of(now_) - s.opened_at));
      return a;
    case CircuitState::kHalfOpen:
      if (s.trial_in_flight) {
        a.allowed = false;  // one trial at a time
        return a;
      }
      s.trial_in_flight = true;
      s.trial_at = now_of(now_);
      a.trial = true;
      return a;
  }
  return a;
}

void CircuitBreaker::record_success(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  circuits_.erase(key);  // closed, no failures: nothing to remember
}

void CircuitBreaker::record_failure(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  CircuitStatus& s = circuits_[key];
  s = current(s);
  ++s.consecutive_failures;
  if (s.state == CircuitState::kHalfOpen ||
      (s.state == CircuitState::kClosed && s.consecutive_failures >= config_.failure_threshold)) {
    s.state = CircuitState::kOpen;
    s.opened_at = now_of(now_);
    s.trial_in_flight = false;
  }
}

CircuitStatus CircuitBreaker::status(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = circuits_.find(key);
  return it == circuits_.end() ? CircuitStatus{} : current(it->second);
}

std::map<std::string, CircuitStatus> CircuitBreaker::statuses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return circuits_;
}

void CircuitBreaker::restore(std::map<std::string, CircuitStatus> statuses) {
  std::lock_guard<std::mutex> lock(mutex_);
  circuits_ = std::move(statuses);
}

}  // namespace policy
