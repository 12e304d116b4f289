// CancellationToken: cancel() and deadlines on the injected clock, children cancelled
// with their parents or at their own earlier deadline, and wait_for woken by a cancel.
#include <thread>

#include <gtest/gtest.h>

#include "clock_fixture.hpp"
#include "policy/cancellation_token.hpp"

namespace {

using namespace policy;
using namespace std::chrono_literals;

TEST(CancellationTokenTest, CancelAndDeadline) {
  policy_test::TestClock clock;
  CancellationToken plain;
  EXPECT_FALSE(plain.cancelled());
  CancellationToken copy = plain;
  copy.cancel("stop");
  EXPECT_TRUE(plain.cancelled()) << "copies share the state";
  EXPECT_EQ(plain.reason(), "stop");
  copy.cancel("again");
  EXPECT_EQ(plain.reason(), "stop") << "the first reason stays";

  CancellationToken timed(clock.now(), clock.at() + 100ms);
  EXPECT_FALSE(timed.cancelled());
  clock.advance(100ms);
  EXPECT_TRUE(timed.cancelled());
  EXPECT_EQ(timed.reason(), "timeout");
}

TEST(CancellationTokenTest, ChildrenFollowTheirParents) {
  policy_test::TestClock clock;
  CancellationToken parent(clock.now(), clock.at() + 1'000ms);
  CancellationToken child = parent.child(clock.at() + 100ms);
  EXPECT_EQ(child.deadline(), clock.at() + 100ms);
  CancellationToken late = parent.child(clock.at() + 5'000ms);
  EXPECT_EQ(late.deadline(), clock.at() + 1'000ms) << "the earlier deadline applies";
  clock.advance(100ms);
  EXPECT_TRUE(child.cancelled());
  EXPECT_FALSE(parent.cancelled()) << "a child does not cancel its parent";
  parent.cancel("abort");
  EXPECT_TRUE(late.cancelled());
  EXPECT_EQ(late.reason(), "abort");
}

TEST(CancellationTokenTest, WaitForEndsOnCancel) {
  CancellationToken token;
  EXPECT_FALSE(token.wait_for(20ms));
  std::thread canceller([token] {
    std::this_thread::sleep_for(20ms);
    token.cancel("done");
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(token.wait_for(10'000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5'000ms);
  canceller.join();
}

}  // namespace
