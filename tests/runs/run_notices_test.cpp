// Notices for a live run's agent: taken once, oldest first, bounded in size and number
// (the store is anyone's to write), and the runs live on a workspace found by run.json.
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_notices.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using namespace runs;

class RunNoticesTest : public ::testing::Test {
 protected:
  RunNoticesTest() {
    fs::create_directories(temp_ / "ws");
    store_ = fsnap::Store::open(temp_ / "store", temp_ / "ws", true);
  }
  testing_support::TempDir temp_;
  std::optional<fsnap::Store> store_;
};

TEST_F(RunNoticesTest, EachNoticeIsTakenOnceOldestFirst) {
  EXPECT_TRUE(take_run_notices(*store_, "r").empty());
  post_run_notice(*store_, "r", "first");
  post_run_notice(*store_, "r", "second");
  post_run_notice(*store_, "other", "not r's");
  EXPECT_EQ(take_run_notices(*store_, "r"), std::vector<std::string>({"first", "second"}));
  EXPECT_TRUE(take_run_notices(*store_, "r").empty());
  EXPECT_EQ(take_run_notices(*store_, "other"), std::vector<std::string>({"not r's"}));
}

TEST_F(RunNoticesTest, WhatOthersWroteThereIsBounded) {
  fs::path dir = fsnap::layout::run_notices_dir(store_->dir(), "r");
  fs::create_directories(dir);
  testing_support::write_file(dir / "00000000000000000001-1-0", std::string(100000, 'x'));
  testing_support::write_file(dir / "README", "not a notice");
  fs::create_directory_symlink("/", dir / "00000000000000000002-1-0");
  for (int i = 0; i < 10; ++i) post_run_notice(*store_, "r", "n" + std::to_string(i));
  std::vector<std::string> taken = take_run_notices(*store_, "r");
  ASSERT_EQ(taken.size(), kMaxNoticesTaken + 1);
  EXPECT_EQ(taken[0].size(), kMaxNoticeBytes);
  EXPECT_EQ(taken[1], "n0");
  EXPECT_EQ(taken.back(), "3 more notices of changes made from outside were left out");
  EXPECT_TRUE(fs::exists(dir / "README"));
  EXPECT_TRUE(take_run_notices(*store_, "r").empty());
}

TEST_F(RunNoticesTest, LiveRunsAreThoseWhoseSupervisorLivesOnTheWorkspace) {
  RunMeta live;
  live.run = "live";
  live.workspace = (temp_ / "ws").string();
  live.pid = ::getpid();
  live.save(*store_);
  RunMeta ended = live;
  ended.run = "ended";
  ended.exit_code = 0;
  ended.save(*store_);
  RunMeta elsewhere = live;
  elsewhere.run = "elsewhere";
  elsewhere.workspace = "/somewhere/else";
  elsewhere.save(*store_);
  EXPECT_EQ(live_runs_on(*store_, (temp_ / "ws").string()), std::vector<std::string>({"live"}));
}

}  // namespace
