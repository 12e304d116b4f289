// fleet::SharedBudget against a real redis-server: runs report their totals (never
// counted twice), the budget's limits halt every run that shares it — exactly at the
// step limit however many runs call at once — and an outage lets the run go on.
#include "fleet/shared_budget.hpp"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

using fleet::BudgetTotals;
using fleet::SharedBudget;

class SharedBudgetTest : public ::testing::Test {
 protected:
  std::shared_ptr<fleet::RedisClient> client() {
    return std::make_shared<fleet::RedisClient>(fleet::RedisEndpoint::parse(redis_.url()));
  }
  // The call context of a run's call with steps calls before it and cost spent.
  static policy::CallContext call(std::size_t steps, double cost) {
    policy::CallContext c;
    c.step = steps;
    c.run_cost_usd = cost;
    return c;
  }

  testing_support::TempDir temp_;
  testing_support::RedisServer redis_{temp_.path()};
};

TEST_F(SharedBudgetTest, RunsAddUpAndAReportIsNeverCountedTwice) {
  SharedBudget a(client(), "team", "run-a", std::nullopt, std::nullopt);
  SharedBudget b(client(), "team", "run-b", std::nullopt, std::nullopt);
  BudgetTotals t = a.report(3, 0.25);
  EXPECT_EQ(t.steps, 3u);
  EXPECT_DOUBLE_EQ(t.cost_usd, 0.25);
  t = b.report(2, 1.0);
  EXPECT_EQ(t.steps, 5u);
  EXPECT_DOUBLE_EQ(t.cost_usd, 1.25);
  t = a.report(3, 0.25);  // the same totals again (another process of run-a)
  EXPECT_EQ(t.steps, 5u);
  EXPECT_DOUBLE_EQ(t.cost_usd, 1.25);
  t = a.report(4, 0.5);  // what is new: one call, $0.25
  EXPECT_EQ(t.steps, 6u);
  EXPECT_DOUBLE_EQ(t.cost_usd, 1.5);
  t = a.report(1, 0.1);  // an older report takes nothing back
  EXPECT_EQ(t.steps, 6u);
  EXPECT_DOUBLE_EQ(t.cost_usd, 1.5);
  // Another budget is another count.
  SharedBudget other(client(), "other", "run-a", std::nullopt, std::nullopt);
  EXPECT_EQ(other.totals().steps, 0u);
  EXPECT_EQ(redis_.cli({"HGET", "shadowbox:budget:team", "cost_micros"}), "1500000\n");
}

TEST_F(SharedBudgetTest, TheCeilingHaltsEveryRunThatSharesIt) {
  SharedBudget a(client(), "team", "run-a", 1.0, std::nullopt);
  SharedBudget b(client(), "team", "run-b", 1.0, std::nullopt);
  EXPECT_EQ(a.before_call(call(0, 0.0)).decision, policy::Decision::kAllow);
  EXPECT_EQ(b.before_call(call(0, 0.0)).decision, policy::Decision::kAllow);
  EXPECT_EQ(a.before_call(call(1, 0.6)).decision, policy::Decision::kAllow);
  // run-b's own spend ($0.40) is under the ceiling, the budget's ($1.00) is not.
  policy::CheckVerdict over = b.before_call(call(1, 0.4));
  EXPECT_EQ(over.decision, policy::Decision::kHalt);
  ASSERT_TRUE(over.event);
  EXPECT_EQ(over.event->type, policy::StopReason::kBudgetExceeded);
  EXPECT_NE(over.event->reason.find("shared budget 'team'"), std::string::npos)
      << over.event->reason;
  EXPECT_DOUBLE_EQ(over.event->value, 1.0);
  EXPECT_EQ(a.before_call(call(2, 0.6)).decision, policy::Decision::kHalt);
}

TEST_F(SharedBudgetTest, ManyRunsAtOnceGetExactlyTheStepLimit) {
  constexpr std::size_t kLimit = 37;
  std::atomic<int> allowed{0};
  std::vector<std::thread> runs;
  for (int r = 0; r < 6; ++r) {
    runs.emplace_back([&, r] {
      SharedBudget budget(client(), "team", "run-" + std::to_string(r), std::nullopt, kLimit);
      for (std::size_t step = 0; step < 20; ++step) {
        if (budget.before_call(call(step, 0)).decision == policy::Decision::kAllow) ++allowed;
      }
    });
  }
  for (std::thread& t : runs) t.join();
  EXPECT_EQ(allowed.load(), static_cast<int>(kLimit));
  EXPECT_EQ(SharedBudget(client(), "team", "x", std::nullopt, std::nullopt).totals().steps, 120u);
}

TEST_F(SharedBudgetTest, AnOutageLetsTheRunGoOnAndItsTotalsArriveLater) {
  SharedBudget a(client(), "team", "run-a", 10.0, 100);
  EXPECT_EQ(a.before_call(call(0, 0)).decision, policy::Decision::kAllow);
  redis_.stop();
  EXPECT_EQ(a.before_call(call(1, 2.0)).decision, policy::Decision::kAllow);
  EXPECT_EQ(a.before_call(call(2, 3.0)).decision, policy::Decision::kAllow);
  redis_.start();  // empty
  EXPECT_EQ(a.before_call(call(3, 4.0)).decision, policy::Decision::kAllow);
  BudgetTotals t = a.totals();
  EXPECT_EQ(t.steps, 4u);  // every call of the run, the ones made during the outage too
  EXPECT_DOUBLE_EQ(t.cost_usd, 4.0);
}

}  // namespace
