// CancellationToken — what a caller passes to its own work so that the work can stop
// when the run is aborted or its time is up. Copies share one state; a child token is
// cancelled with its parent, or at its own (earlier) deadline.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "policy/decision.hpp"

namespace policy {

// A flag tripped by cancel() or by a deadline passing on the injected clock.
class CancellationToken {
 public:
  // A token that is cancelled only by cancel().
  CancellationToken();
  // A token also cancelled once now() reaches deadline (if given).
  CancellationToken(Now now, std::optional<TimePoint> deadline);

  // Whether cancel() was called (on it or a parent) or a deadline has passed.
  bool cancelled() const;
  // Why: the reason given to cancel(), "timeout" for a deadline, "" if not cancelled.
  std::string reason() const;
  // Cancels it (and its children) with a reason; the first reason stays.
  void cancel(const std::string& reason) const;
  // The earliest deadline of it and its parents, if any.
  std::optional<TimePoint> deadline() const;
  // A token cancelled when this one is, or at deadline, whichever comes first.
  CancellationToken child(std::optional<TimePoint> deadline) const;
  // Waits (real time) until it is cancelled or timeout has passed; returns cancelled().
  bool wait_for(std::chrono::milliseconds timeout) const;

  struct State;

 private:
  explicit CancellationToken(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace policy
