#include "policy/cancellation_token.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace policy {

struct CancellationToken::State {
  Now now;
  std::optional<TimePoint> deadline;
  std::shared_ptr<State> parent;
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::string reason;  // set once, by cancel()

  std::string cancelled_because() const {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!reason.empty()) return reason;
    }
    if (deadline && now_of(now) >= *deadline) return "timeout";
    return parent ? parent->cancelled_because() : std::string();
  }
};

CancellationToken::CancellationToken() : state_(std::make_shared<State>()) {}

CancellationToken::CancellationToken(Now now, std::optional<TimePoint> deadline)
    : state_(std::make_shared<State>()) {
  state_->now = std::move(now);
  state_->deadline = deadline;
}

CancellationToken::CancellationToken(std::shared_ptr<State> state) : state_(std::move(state)) {}

bool CancellationToken::cancelled() const {
  return !state_->cancelled_because().empty();
}

std::string CancellationToken::reason() const {
  return state_->cancelled_because();
}

void CancellationToken::cancel(const std::string& reason) const {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->reason.empty()) state_->reason = reason.empty() ? "cancelled" : reason;
  }
  state_->changed.notify_all();
}

std::optional<TimePoint> CancellationToken::deadline() const {
  std::optional<TimePoint> out;
  for (const State* s = state_.get(); s != nullptr; s = s->parent.get()) {
    if (s->deadline && (!out || *s->deadline < *out)) out = s->deadline;
  }
  return out;
}

CancellationToken CancellationToken::child(std::optional<TimePoint> deadline) const {
  auto state = std::make_shared<State>();
  state->now = state_->now;
  state->deadline = deadline;
  state->parent = state_;
  return CancellationToken(std::move(state));
}

bool CancellationToken::wait_for(std::chrono::milliseconds timeout) const {
  // A parent's cancel or a deadline wakes no condition variable of ours: look again at
  // short intervals.
  constexpr std::chrono::milliseconds kSlice{10};
  auto until = std::chrono::steady_clock::now() + timeout;
  while (!cancelled()) {
    auto left = until - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->changed.wait_for(lock, std::min<std::chrono::steady_clock::duration>(left, kSlice),
                             [&] { return !state_->reason.empty(); });
  }
  return true;
}

}  // namespace policy
