// HaltRequest files (the first reason stands) and the limits run.json keeps for a run.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"
#include "test_support.hpp"

namespace {

using runs::HaltRequest;

// A store of an empty workspace.
fsnap::Store open_store(const testing_support::TempDir& dir) {
  boost::filesystem::create_directories(dir / "ws");
  return fsnap::Store::open(dir / "store", dir / "ws", true);
}

class RunHaltTest : public ::testing::Test {
 protected:
  testing_support::TempDir dir_;
  fsnap::Store store_ = open_store(dir_);
};

TEST_F(RunHaltTest, TheFirstRequestStandsUntilCleared) {
  EXPECT_FALSE(runs::pending_halt(store_, "r1"));
  runs::request_halt(store_, "r1", {"max_steps", "the step limit is reached: 5 calls", true});
  runs::request_halt(store_, "r1", {"aborted", "later", false});
  std::optional<runs::HaltRequest> halt = runs::pending_halt(store_, "r1");
  ASSERT_TRUE(halt);
  EXPECT_EQ(*halt, (runs::HaltRequest{"max_steps", "the step limit is reached: 5 calls", false}))
      << "the first reason stands; the abort makes it urgent";
  EXPECT_FALSE(runs::pending_halt(store_, "r2")) << "per run";
  runs::clear_halt(store_, "r1");
  EXPECT_FALSE(runs::pending_halt(store_, "r1"));
  runs::clear_halt(store_, "r1");  // nothing to clear is fine
  // Something unreadable still stops the run.
  testing_support::write_file(fsnap::layout::run_halt_file(store_.dir(), "r1"), "stop!");
  EXPECT_EQ(runs::pending_halt(store_, "r1")->halt_reason, "aborted");
}

TEST_F(RunHaltTest, ARequestTheAgentWasToldOfStaysPatientUntilAnUrgentOne) {
  runs::request_halt(store_, "r1", {"max_cost", "first", true});
  runs::request_halt(store_, "r1", {"max_steps", "second", true});
  EXPECT_EQ(*runs::pending_halt(store_, "r1"), (runs::HaltRequest{"max_cost", "first", true}));
}

TEST_F(RunHaltTest, OfRequestsMadeAtOnceExactlyOneStands) {
  constexpr int kRequesters = 8;
  for (int round = 0; round < 50; ++round) {
    std::string run = "r" + std::to_string(round);
    std::atomic<bool> go{false};
    std::vector<int> recorded(kRequesters, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kRequesters; ++i) {
      threads.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        HaltRequest request{"aborted", "requester " + std::to_string(i), true};
        recorded[i] = runs::request_halt(store_, run, request) ? 1 : 0;
      });
    }
    go = true;
    for (std::thread& t : threads) t.join();
    ASSERT_EQ(std::count(recorded.begin(), recorded.end(), 1), 1) << "round " << round;
    int first = static_cast<int>(std::find(recorded.begin(), recorded.end(), 1) - recorded.begin());
    EXPECT_EQ(runs::pending_halt(store_, run)->reason, "requester " + std::to_string(first))
        << "no later request replaced the first";
  }
  // No temporary files are left behind.
  for (const auto& entry : boost::filesystem::recursive_directory_iterator(
           fsnap::layout::run_dir(store_.dir(), "r0"))) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

TEST_F(RunHaltTest, RunJsonKeepsTheRunsOwnLimits) {
  runs::RunMeta meta;
  meta.run = "r1";
  meta.workspace = "/w";
  meta.limits.max_cost_usd = 2.5;
  meta.limits.timeout = std::chrono::seconds(90);
  meta.save(store_);
  std::optional<runs::RunMeta> loaded = runs::RunMeta::load(store_, "r1");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->limits, meta.limits);
  EXPECT_FALSE(loaded->limits.max_steps);
}

}  // namespace
