// AgentSupervisor on a clock the test moves, in microseconds: nothing pending ends
// nothing; the run's timeout ends the tree at once and is recorded for others; an agent
// told to stop gets the kill grace, which an abort meanwhile cuts short (the first
// reason standing); the tree is ended once; a request made as the agent exits is the
// run's halt.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fsnap/clock.hpp"
#include "hooks/agent_supervisor.hpp"
#include "runs/run_halt.hpp"

namespace {

using namespace std::chrono_literals;
using runs::HaltRequest;

class AgentSupervisorTest : public ::testing::Test {
 protected:
  // A supervisor with a 5 s kill grace, over the pending request pending_ (recording one
  // as runs::request_halt does: the first reason stands, a request that cannot wait
  // makes it urgent).
  hooks::AgentSupervisor supervisor(std::optional<fsnap::TimePoint> deadline = std::nullopt) {
    return hooks::AgentSupervisor({5s, deadline, "the run's time is up (timeout 10 s)"},
                                  {[this] { return pending_; },
                                   [this](const HaltRequest& request) {
                                     requested_.push_back(request);
                                     if (!pending_) pending_ = request;
                                     if (!request.agent_told) pending_->agent_told = false;
                                   }},
                                  clock_,
                                  [this](const std::string& text) { said_.push_back(text); });
  }
  void advance(std::chrono::milliseconds d) { clock_->advance(d); }

  std::shared_ptr<fsnap::FixedClock> clock_ =
      std::make_shared<fsnap::FixedClock>(fsnap::TimePoint(std::chrono::hours(500000)));
  std::optional<HaltRequest> pending_;
  std::vector<HaltRequest> requested_;
  std::vector<std::string> said_;
};

TEST_F(AgentSupervisorTest, NothingPendingEndsNothing) {
  hooks::AgentSupervisor s = supervisor();
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(s.tick());
    advance(std::chrono::hours(1));
  }
  EXPECT_FALSE(s.finish());
  EXPECT_TRUE(said_.empty());
  EXPECT_TRUE(requested_.empty());
}

TEST_F(AgentSupervisorTest, TheTimeoutEndsTheTreeAtOnceAndIsRecordedForOthers) {
  hooks::AgentSupervisor s = supervisor(clock_->now() + 10s);
  advance(9999ms);
  EXPECT_FALSE(s.tick());
  advance(1ms);
  EXPECT_TRUE(s.tick()) << "no grace: the agent was not told";
  ASSERT_EQ(requested_.size(), 1u);
  EXPECT_EQ(requested_[0], (HaltRequest{"timeout", "the run's time is up (timeout 10 s)", false}));
  EXPECT_EQ(said_,
            std::vector<std::string>{"stopping the agent: the run's time is up (timeout 10 s)"});
  advance(1h);
  EXPECT_FALSE(s.tick()) << "the tree is ended once; the agent's exit is on its way";
  EXPECT_EQ(s.finish()->halt_reason, "timeout");
}

TEST_F(AgentSupervisorTest, AnAgentToldToStopGetsTheKillGrace) {
  hooks::AgentSupervisor s = supervisor();
  EXPECT_FALSE(s.tick());
  pending_ = HaltRequest{"max_steps", "the step limit is reached", true};
  EXPECT_FALSE(s.tick());
  advance(4999ms);
  EXPECT_FALSE(s.tick());
  advance(1ms);
  EXPECT_TRUE(s.tick());
  EXPECT_EQ(said_.size(), 1u);
  EXPECT_TRUE(requested_.empty());
}

TEST_F(AgentSupervisorTest, AnAbortCutsTheGraceShortAndTheFirstReasonStands) {
  hooks::AgentSupervisor s = supervisor(clock_->now() + 1h);
  pending_ = HaltRequest{"max_steps", "the step limit is reached", true};
  EXPECT_FALSE(s.tick());
  advance(1s);
  EXPECT_FALSE(s.tick());
  pending_->agent_told = false;  // `shadowbox abort` meanwhile
  EXPECT_TRUE(s.tick());
  std::optional<HaltRequest> halt = s.finish();
  ASSERT_TRUE(halt);
  EXPECT_EQ(halt->halt_reason, "max_steps");
  EXPECT_EQ(said_, std::vector<std::string>{"stopping the agent: the step limit is reached"});
  EXPECT_TRUE(requested_.empty()) << "the timeout was not reached";
}

TEST_F(AgentSupervisorTest, ARequestMadeAsTheAgentExitsIsTheRunsHalt) {
  hooks::AgentSupervisor s = supervisor();
  EXPECT_FALSE(s.tick());
  pending_ = HaltRequest{"aborted", "aborted: enough", false};
  std::optional<HaltRequest> halt = s.finish();
  ASSERT_TRUE(halt);
  EXPECT_EQ(halt->reason, "aborted: enough");
}

TEST(SteadyWallClockTest, StartsAtTheWallTimeAndNeverGoesBack) {
  auto before = std::chrono::system_clock::now();
  hooks::SteadyWallClock clock;
  fsnap::TimePoint first = clock.now();
  EXPECT_GE(first, before);
  EXPECT_LT(first - before, 10s);
  EXPECT_GE(clock.now(), first);
}

}  // namespace
