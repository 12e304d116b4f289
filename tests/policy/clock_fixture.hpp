// A clock the policy tests move by hand.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>

#include "policy/decision.hpp"

namespace policy_test {

// Starts at a fixed time; advance() moves it.
struct TestClock {
  std::shared_ptr<std::atomic<std::int64_t>> ms =
      std::make_shared<std::atomic<std::int64_t>>(1'800'000'000'000);
  policy::Now now() const {
    auto t = ms;
    return [t] { return policy::TimePoint(std::chrono::milliseconds(t->load())); };
  }
  void advance(std::chrono::milliseconds d) const { ms->fetch_add(d.count()); }
  policy::TimePoint at() const { return policy::TimePoint(std::chrono::milliseconds(ms->load())); }
};

}  // namespace policy_test
