#include "hooks/agent_supervisor.hpp"

#include <algorithm>

namespace hooks {

AgentSupervisor::AgentSupervisor(Options options, Halts halts,
                                 std::shared_ptr<const fsnap::Clock> clock,
                                 std::function<void(const std::string&)> inform)
    : options_(std::move(options)),
      halts_(std::move(halts)),
      clock_(std::move(clock)),
      inform_(std::move(inform)) {}

bool AgentSupervisor::tick() {
  if (ended_) return false;
  fsnap::TimePoint now = clock_->now();
  // A request the agent was told of may become urgent (an abort meanwhile): looked at
  // again until one that cannot wait is in hand.
  if (!halt_ || halt_->agent_told) {
    std::optional<runs::HaltRequest> pending = halts_.pending();
    if (!pending && options_.deadline && now >= *options_.deadline) {
      pending = runs::HaltRequest{"timeout", options_.timeout_reason, false};
      halts_.request(*pending);
    }
    if (pending && !halt_ && inform_) inform_("stopping the agent: " + pending->reason);
    if (pending) {
      // An agent told to stop (continue: false) gets the grace to do so itself.
      fsnap::TimePoint at =
          now + (pending->agent_told
                     ? std::chrono::duration_cast<fsnap::TimePoint::duration>(options_.kill_grace)
                     : fsnap::TimePoint::duration::zero());
      end_at_ = end_at_ ? std::min(*end_at_, at) : at;
      halt_ = pending;
    }
  }
  if (end_at_ && now >= *end_at_) {
    ended_ = true;
    return true;
  }
  return false;
}

std::optional<runs::HaltRequest> AgentSupervisor::finish() {
  if (!halt_) halt_ = halts_.pending();
  return halt_;
}

SteadyWallClock::SteadyWallClock()
    : wall_(std::chrono::system_clock::now()), steady_(std::chrono::steady_clock::now()) {}

fsnap::TimePoint SteadyWallClock::now() const {
  return wall_ + std::chrono::duration_cast<fsnap::TimePoint::duration>(
                     std::chrono::steady_clock::now() - steady_);
}

}  // namespace hooks
