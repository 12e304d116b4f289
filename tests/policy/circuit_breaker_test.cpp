// CircuitBreaker: opens after the threshold of consecutive failures (per key), refuses
// while open, lets exactly one trial through once half-open (also to concurrent
// callers), closes on the trial's success, opens again on its failure, and gives a new
// trial when one's outcome never comes.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "clock_fixture.hpp"
#include "policy/circuit_breaker.hpp"

namespace {

using namespace policy;
using namespace std::chrono_literals;

TEST(CircuitBreakerTest, OpensAfterTheThresholdOfConsecutiveFailures) {
  policy_test::TestClock clock;
  CircuitBreaker breaker({3, 10'000ms}, clock.now());
  breaker.record_failure("Bash");
  breaker.record_failure("Bash");
  EXPECT_TRUE(breaker.allow("Bash").allowed) << "two failures are under the threshold";
  breaker.record_success("Bash");  // a success in between starts the count again
  breaker.record_failure("Bash");
  breaker.record_failure("Bash");
  EXPECT_EQ(breaker.status("Bash").state, CircuitState::kClosed);
  breaker.record_failure("Bash");
  CircuitAdmission a = breaker.allow("Bash");
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.state, CircuitState::kOpen);
  EXPECT_EQ(a.failures, 3u);
  EXPECT_EQ(a.retry_after, 10'000ms);
  EXPECT_TRUE(breaker.allow("Read").allowed) << "circuits are per key";
}

TEST(CircuitBreakerTest, HalfOpenLetsExactlyOneTrialThrough) {
  policy_test::TestClock clock;
  CircuitBreaker breaker({1, 5'000ms}, clock.now());
  breaker.record_failure("Bash");
  clock.advance(4'999ms);
  EXPECT_FALSE(breaker.allow("Bash").allowed) << "not yet";
  clock.advance(1ms);
  EXPECT_EQ(breaker.status("Bash").state, CircuitState::kHalfOpen);
  CircuitAdmission trial = breaker.allow("Bash");
  EXPECT_TRUE(trial.allowed);
  EXPECT_TRUE(trial.trial);
  EXPECT_FALSE(breaker.allow("Bash").allowed) << "one trial at a time";
  // The trial fails: open again, for a whole recovery time.
  breaker.record_failure("Bash");
  EXPECT_EQ(breaker.status("Bash").state, CircuitState::kOpen);
  clock.advance(4'000ms);
  EXPECT_FALSE(breaker.allow("Bash").allowed);
  clock.advance(1'000ms);
  ASSERT_TRUE(breaker.allow("Bash").trial);
  // This trial succeeds: closed.
  breaker.record_success("Bash");
  EXPECT_EQ(breaker.status("Bash").state, CircuitState::kClosed);
  EXPECT_TRUE(breaker.allow("Bash").allowed);
  EXPECT_TRUE(breaker.allow("Bash").allowed);
}

TEST(CircuitBreakerTest, ATrialWhoseOutcomeNeverComesIsTakenForLost) {
  policy_test::TestClock clock;
  CircuitBreaker breaker({1, 5'000ms}, clock.now());
  breaker.record_failure("Bash");
  clock.advance(5'000ms);
  ASSERT_TRUE(breaker.allow("Bash").trial);  // ... and the call is interrupted
  clock.advance(4'999ms);
  EXPECT_FALSE(breaker.allow("Bash").allowed) << "the trial may still be under way";
  clock.advance(1ms);
  CircuitAdmission again = breaker.allow("Bash");
  EXPECT_TRUE(again.allowed) << "a recovery time after it began, the trial is lost";
  EXPECT_TRUE(again.trial);
  EXPECT_FALSE(breaker.allow("Bash").allowed) << "still one trial at a time";
  breaker.record_success("Bash");
  EXPECT_EQ(breaker.status("Bash").state, CircuitState::kClosed);
}

TEST(CircuitBreakerTest, ConcurrentCallersGetOneTrial) {
  policy_test::TestClock clock;
  CircuitBreaker breaker({1, 1'000ms}, clock.now());
  breaker.record_failure("Bash");
  clock.advance(1'000ms);
  std::atomic<int> trials{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (breaker.allow("Bash").allowed) ++trials;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(trials.load(), 1);
}

TEST(CircuitBreakerTest, StatusesPersistAndRestore) {
  policy_test::TestClock clock;
  CircuitBreaker first({2, 1'000ms}, clock.now());
  first.record_failure("Bash");
  first.record_failure("Bash");
  first.record_failure("Edit");
  CircuitBreaker second({2, 1'000ms}, clock.now());
  second.restore(first.statuses());
  EXPECT_FALSE(second.allow("Bash").allowed);
  second.record_failure("Edit");
  EXPECT_FALSE(second.allow("Edit").allowed) << "the failure count carried over";
  EXPECT_THROW(CircuitBreaker({0, 1'000ms}), std::invalid_argument);
}

}  // namespace
