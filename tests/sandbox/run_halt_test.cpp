// HaltRequest files (the first reason stands) and the limits run.json keeps for a run.
#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "sandbox/run_halt.hpp"
#include "sandbox/run_meta.hpp"
#include "test_support.hpp"

namespace {

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
  EXPECT_FALSE(sandbox::pending_halt(store_, "r1"));
  sandbox::request_halt(store_, "r1", {"max_steps", "the step limit is reached: 5 calls", true});
  sandbox::request_halt(store_, "r1", {"aborted", "later", false});
  std::optional<sandbox::HaltRequest> halt = sandbox::pending_halt(store_, "r1");
  ASSERT_TRUE(halt);
  EXPECT_EQ(*halt, (sandbox::HaltRequest{"max_steps", "the step limit is reached: 5 calls", true}));
  EXPECT_FALSE(sandbox::pending_halt(store_, "r2")) << "per run";
  sandbox::clear_halt(store_, "r1");
  EXPECT_FALSE(sandbox::pending_halt(store_, "r1"));
  sandbox::clear_halt(store_, "r1");  // nothing to clear is fine
  // Something unreadable still stops the run.
  testing_support::write_file(fsnap::layout::run_halt_file(store_.dir(), "r1"), "stop!");
  EXPECT_EQ(sandbox::pending_halt(store_, "r1")->halt_reason, "aborted");
}

TEST_F(RunHaltTest, RunJsonKeepsTheRunsOwnLimits) {
  sandbox::RunMeta meta;
  meta.run = "r1";
  meta.workspace = "/w";
  meta.limits.max_cost_usd = 2.5;
  meta.limits.timeout = std::chrono::seconds(90);
  meta.save(store_);
  std::optional<sandbox::RunMeta> loaded = sandbox::RunMeta::load(store_, "r1");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->limits, meta.limits);
  EXPECT_FALSE(loaded->limits.max_steps);
}

}  // namespace
