// fleet::RunMirror: a run's refs pushed to a bare remote, the queue that is the
// difference from what was pushed (and survives a crash), the lag, and another store
// fetching the run with its records.
#include "fleet/run_mirror.hpp"

#include <gtest/gtest.h>

#include <boost/filesystem.hpp>

#include "crafted_objects.hpp"
#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store_layout.hpp"
#include "loopback_services.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
namespace layout = fsnap::layout;

fs::path made(const fs::path& dir) {
  fs::create_directories(dir);
  return dir;
}

class RunMirrorTest : public ::testing::Test {
 protected:
  RunMirrorTest() { testing_support::init_bare_remote(remote_); }

  fsnap::Checkpoint step(const std::string& content) {
    testing_support::write_file(ws_ / "a.txt", content);
    return host_.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = "r1"},
                            [&](const fsnap::Checkpoint& c) {
                              return std::vector<fsnap::Note>{{c.commit, "record: " + content}};
                            });
  }

  std::string git(const std::vector<std::string>& args) {
    return testing_support::git_at(remote_, args);
  }

  testing_support::TempDir temp_;
  fs::path ws_ = made(temp_.path() / "ws");
  fs::path remote_ = temp_.path() / "remote.git";
  fsnap::Store store_ = fsnap::Store::open(temp_.path() / "store", ws_, true);
  fsnap::HostFilesystem host_{store_, {}};
  fleet::RunMirror mirror_{store_, host_.shared_repo(), remote_.string(), "worker-a"};
};

TEST_F(RunMirrorTest, APushSendsWhatIsPendingAndTheLagSaysWhatIsLeft) {
  EXPECT_TRUE(mirror_.lag("r1").up_to_date());
  step("one");
  step("two");
  fleet::PushLag lag = mirror_.lag("r1");
  EXPECT_FALSE(lag.up_to_date());
  EXPECT_EQ(lag.checkpoints, 2u);
  EXPECT_EQ(lag.pushed_checkpoint, "");
  fleet::RunPush pushed = mirror_.push("r1");
  EXPECT_TRUE(pushed.report.rejected.empty());
  EXPECT_TRUE(pushed.left.up_to_date());
  EXPECT_EQ(pushed.left.checkpoints, 0u);
  EXPECT_EQ(pushed.left.pushed_checkpoint, pushed.left.last_checkpoint);
  EXPECT_EQ(git({"rev-parse", layout::run_ref("r1")}), pushed.left.last_checkpoint + "\n");
  std::string log = git({"log", "--notes=shadowbox/*", "--format=%N", layout::run_ref("r1")});
  EXPECT_NE(log.find("record: two"), std::string::npos) << log;
  step("three");
  EXPECT_EQ(mirror_.lag("r1").checkpoints, 1u);
}

TEST_F(RunMirrorTest, WhatWasNotPushedBeforeACrashIsPushedByTheNextProcess) {
  step("one");
  mirror_.push("r1");
  fsnap::Checkpoint unpushed = step("two");  // ... and the process dies here
  fleet::RunMirror after(store_, host_.shared_repo(), remote_.string(), "worker-a");
  EXPECT_EQ(after.lag("r1").checkpoints, 1u);
  after.push("r1");
  EXPECT_EQ(git({"rev-parse", layout::run_ref("r1")}), unpushed.commit + "\n");
  // A damaged record of the pushes makes everything pending: pushing again is harmless.
  testing_support::write_file(layout::fleet_pushed_file(store_.dir()), "{not json");
  EXPECT_FALSE(after.lag("r1").up_to_date());
  fleet::RunPush again = after.push("r1");
  EXPECT_TRUE(again.report.rejected.empty());
  EXPECT_EQ(again.report.objects, 0u);
  EXPECT_TRUE(after.lag("r1").up_to_date());
}

TEST_F(RunMirrorTest, AnUnreachableRemoteLeavesEverythingPending) {
  step("one");
  fleet::RunMirror lost(store_, host_.shared_repo(), (temp_.path() / "nowhere.git").string(),
                        "worker-a");
  EXPECT_THROW(lost.push("r1"), fsnap::Error);
  EXPECT_EQ(lost.lag("r1").checkpoints, 1u);
  EXPECT_EQ(mirror_.lag("r1").checkpoints, 1u);  // per remote
}

// Retention (gc) rewrites the run's history: the new one replaces the remote's, as long
// as the remote still holds what this store pushed last.
TEST_F(RunMirrorTest, AHistoryGcRewroteReplacesTheRemotesWithALease) {
  step("one");
  step("two");
  step("three");
  mirror_.push("r1");
  {
    fsnap::StoreLock lock = store_.lock();
    host_.repo().collect_garbage({.keep_last = 1, .prune_grace = std::chrono::seconds(0)},
                                 std::chrono::system_clock::now());
  }
  std::string tip = *host_.repo().ref_target(layout::run_ref("r1"));
  ASSERT_EQ(host_.repo().log("r1", 0).size(), 1u);
  fleet::RunPush pushed = mirror_.push("r1");
  EXPECT_TRUE(pushed.report.rejected.empty()) << pushed.report.rejected.begin()->second;
  EXPECT_TRUE(pushed.left.up_to_date());
  EXPECT_EQ(git({"rev-parse", layout::run_ref("r1")}), tip + "\n");
  EXPECT_EQ(git({"rev-list", "--count", layout::run_ref("r1")}), "1\n");
  std::string log = git({"log", "--notes=shadowbox/*", "--format=%N", layout::run_ref("r1")});
  EXPECT_NE(log.find("record: three"), std::string::npos) << log;
}

TEST_F(RunMirrorTest, ARewrittenHistoryNeverReplacesWhatAnotherWorkerPushed) {
  step("one");
  step("two");
  mirror_.push("r1");
  // Another store puts a history of its own at r1 on the remote.
  testing_support::TempDir other;
  fs::path other_ws = made(other.path() / "ws");
  fsnap::HostFilesystem elsewhere(fsnap::Store::open(other.path() / "store", other_ws, true), {});
  testing_support::write_file(other_ws / "b.txt", "elsewhere");
  fsnap::Checkpoint theirs =
      elsewhere.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = "r1"});
  fsnap::push_refs(elsewhere.repo(), remote_.string(),
                   {{layout::run_ref("r1"), layout::run_ref("r1"), /*force=*/true}});
  {
    fsnap::StoreLock lock = store_.lock();
    host_.repo().collect_garbage({.keep_last = 1, .prune_grace = std::chrono::seconds(0)},
                                 std::chrono::system_clock::now());
  }
  fleet::RunPush pushed = mirror_.push("r1");
  EXPECT_EQ(pushed.report.rejected.count(layout::run_ref("r1")), 1u);
  EXPECT_FALSE(pushed.left.up_to_date());
  EXPECT_EQ(git({"rev-parse", layout::run_ref("r1")}), theirs.commit + "\n");
}

TEST_F(RunMirrorTest, AnotherStoreFetchesTheRunWithItsRecords) {
  step("one");
  fsnap::Checkpoint last = step("two");
  mirror_.push("r1");
  testing_support::TempDir b;
  fs::create_directories(b.path() / "ws");
  fsnap::Store store_b = fsnap::Store::open(b.path() / "store", b.path() / "ws", true);
  fsnap::HostFilesystem host_b(store_b, {});
  fleet::RunMirror mirror_b(store_b, host_b.shared_repo(), remote_.string(), "worker-b");
  EXPECT_EQ(mirror_b.fetch("r1", "worker-a"), last.commit);
  std::vector<fsnap::Checkpoint> log = host_b.repo().log("r1", 0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(host_b.repo().note(log[0].commit).value_or(""), "record: two");
  EXPECT_EQ(host_b.repo().note(log[1].commit).value_or(""), "record: one");
  // Fetched means on the remote: nothing of the run to push back, only B's own notes
  // (the records it copied into its ledger), which go to B's notes ref.
  fleet::PushLag lag_b = mirror_b.lag("r1");
  ASSERT_EQ(lag_b.refs.size(), 1u);
  EXPECT_EQ(lag_b.refs[0].to, "refs/notes/shadowbox/worker-b");
  EXPECT_EQ(mirror_b.lag("r1").checkpoints, 0u);
  try {
    mirror_b.fetch("r9", "worker-a");
    FAIL() << "fetched a run the remote lacks";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("'r9'"), std::string::npos) << e.what();
  }
}

TEST_F(RunMirrorTest, ARunSomeoneElsePushedAHookIntoIsNotFetched) {
  step("one");
  mirror_.push("r1");
  // Anyone who can push to the remote adds a checkpoint whose tree writes a git hook.
  std::string hook = testing_support::craft_blob(remote_, "#!/bin/sh\necho owned\n");
  std::string hooks = testing_support::craft_tree(remote_, {{"100755", "post-checkout", hook}});
  std::string dot_git = testing_support::craft_tree(remote_, {{"40000", "hooks", hooks}});
  std::string a = testing_support::craft_blob(remote_, "one");
  std::string tree =
      testing_support::craft_tree(remote_, {{"40000", ".git", dot_git}, {"100644", "a.txt", a}});
  testing_support::craft_commit_on(remote_, layout::run_ref("r1"), tree, "crafted");

  fs::path other_ws = made(temp_.path() / "other-ws");
  fsnap::Store other_store = fsnap::Store::open(temp_.path() / "other-store", other_ws, true);
  fsnap::HostFilesystem other(other_store, {});
  fleet::RunMirror recovering(other_store, other.shared_repo(), remote_.string(), "worker-b");
  try {
    recovering.fetch("r1", "worker-a");
    ADD_FAILURE() << "fetched a run with a hostile tree";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kPathEscape) << e.what();
  }
  EXPECT_FALSE(other.shared_repo()->has_run("r1")) << "no ref of the run was moved";
}

}  // namespace
