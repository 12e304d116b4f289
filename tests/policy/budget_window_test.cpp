// BudgetWindowHook: calls and spend in a rolling window — the limit reached exactly, a
// degrade before it, the window rolling past, its entries persisted, and calls close
// together sharing one bounded entry.
#include <gtest/gtest.h>

#include "clock_fixture.hpp"
#include "policy/budget_window.hpp"

namespace {

using namespace policy;
using namespace std::chrono_literals;

TEST(BudgetWindowTest, CallsInTheWindowAreLimited) {
  policy_test::TestClock clock;
  BudgetWindowHook window({60'000ms, 3, 0, 0}, clock.now());
  CallContext call;
  call.key = "Bash";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(window.before_call(call).decision, Decision::kAllow) << i;
    clock.advance(10'000ms);
  }
  CheckVerdict v = window.before_call(call);
  EXPECT_EQ(v.decision, Decision::kHalt);
  ASSERT_TRUE(v.event.has_value());
  EXPECT_EQ(v.event->type, StopReason::kProviderRateLimit);
  EXPECT_EQ(v.event->hook, "BudgetWindowHook");
  EXPECT_EQ(v.event->limit, 3);
  EXPECT_EQ(v.event->value, 3);
  EXPECT_EQ(v.event->key, "Bash");
  // The first call leaves the window 60 s after it was made.
  clock.advance(30'000ms);
  EXPECT_EQ(window.before_call(call).decision, Decision::kAllow);
  EXPECT_EQ(window.before_call(call).decision, Decision::kHalt);
}

TEST(BudgetWindowTest, SpendInTheWindowIsLimitedAndDegradesFirst) {
  policy_test::TestClock clock;
  BudgetWindowHook window({60'000ms, 0, 1.0, 0.5}, clock.now());
  CallContext call;
  EXPECT_EQ(window.before_call(call).decision, Decision::kAllow);
  window.on_charge(call, 0.6);
  CheckVerdict degraded = window.before_call(call);
  EXPECT_EQ(degraded.decision, Decision::kDegrade) << "past half the spend";
  window.on_charge(call, 0.4);  // exactly the limit
  EXPECT_EQ(window.before_call(call).decision, Decision::kHalt);
  clock.advance(60'001ms);
  EXPECT_EQ(window.before_call(call).decision, Decision::kAllow);
}

TEST(BudgetWindowTest, EntriesPersist) {
  policy_test::TestClock clock;
  BudgetWindowHook first({60'000ms, 2, 0, 0}, clock.now());
  CallContext call;
  first.before_call(call);
  first.before_call(call);
  BudgetWindowHook second({60'000ms, 2, 0, 0}, clock.now());
  second.restore(first.entries());
  EXPECT_EQ(second.before_call(call).decision, Decision::kHalt);
  // A charge with no call in the window counts as spend, not as a call.
  BudgetWindowHook spend({1'000ms, 1, 0, 0}, clock.now());
  spend.on_charge(call, 0.5);
  EXPECT_EQ(spend.before_call(call).decision, Decision::kAllow);
  EXPECT_THROW(BudgetWindowHook({0ms, 1, 0, 0}), std::invalid_argument);
}

TEST(BudgetWindowTest, ABusyWindowKeepsFewEntriesAndNeverForgetsEarly) {
  policy_test::TestClock clock;
  // 64 s window: buckets of at most 1 s.
  BudgetWindowHook window({64'000ms, 0, 100.0, 0}, clock.now());
  CallContext call;
  for (int i = 0; i < 10'000; ++i) {
    ASSERT_EQ(window.before_call(call).decision, Decision::kAllow);
    window.on_charge(call, 0.001);
    clock.advance(6ms);  // 10,000 calls in 60 s
  }
  std::vector<WindowEntry> entries = window.entries();
  EXPECT_LE(entries.size(), 61u) << "one entry per second of calls, at most";
  std::size_t calls = 0;
  for (const WindowEntry& e : entries) {
    calls += e.calls;
    EXPECT_LE(e.at - e.from, 1'000ms);
  }
  EXPECT_EQ(calls, 10'000u);
  // A bucket leaves with its newest call: late for its first, never early.
  BudgetWindowHook limited({64'000ms, 2, 0, 0}, clock.now());
  EXPECT_EQ(limited.before_call(call).decision, Decision::kAllow);  // t = 0
  clock.advance(500ms);
  EXPECT_EQ(limited.before_call(call).decision, Decision::kAllow);  // t = 0.5 s, same bucket
  ASSERT_EQ(limited.entries().size(), 1u);
  clock.advance(63'700ms);  // t = 64.2 s: the first call alone would have left
  EXPECT_EQ(limited.before_call(call).decision, Decision::kHalt);
  clock.advance(400ms);  // t = 64.6 s: the whole bucket has
  EXPECT_EQ(limited.before_call(call).decision, Decision::kAllow);
}

}  // namespace
