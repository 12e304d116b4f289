// Pushing a store's refs to a git remote and fetching them into another store: a bare
// repository by path and by file://, and `git daemon` on loopback (git://). Plain git
// reads what arrives; a ref that would not fast-forward is refused alone.
#include "fsnap/remote_transfer.hpp"

#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "host_fixture.hpp"
#include "loopback_services.hpp"

namespace {

using fsnap::RefTransfer;
using fsnap_test::HostTest;
namespace fs = boost::filesystem;

std::string run_ref(const std::string& run) {
  return fsnap::layout::run_ref(run);
}

class RemoteTransferTest : public HostTest {
 protected:
  RemoteTransferTest() : remote_(temp_.path() / "remote.git") {
    testing_support::init_bare_remote(remote_);
  }

  // Writes content to a.txt and checkpoints it in run, with a note.
  fsnap::Checkpoint step(fsnap::HostFilesystem& fs, const std::string& run,
                         const std::string& content) {
    write("a.txt", content);
    return fs.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = run},
                         [&](const fsnap::Checkpoint& c) {
                           return std::vector<fsnap::Note>{{c.commit, "record of " + content}};
                         });
  }

  std::string git(const std::vector<std::string>& args) {
    return testing_support::git_at(remote_, args);
  }

  std::vector<RefTransfer> run_refs(const std::string& run) {
    return {{run_ref(run), run_ref(run)}, {fsnap::layout::kNotesRef, "refs/notes/shadowbox/w1"}};
  }

  fs::path remote_;
};

TEST_F(RemoteTransferTest, PushedRunsAreReadableWithPlainGit) {
  fsnap::HostFilesystem fs = open();
  step(fs, "r1", "one");
  fsnap::Checkpoint second = step(fs, "r1", "two");
  fsnap::PushReport report = fsnap::push_refs(fs.repo(), remote_.string(), run_refs("r1"));
  EXPECT_TRUE(report.rejected.empty());
  EXPECT_EQ(report.updated.size(), 2u);
  EXPECT_GT(report.bytes, 0u);
  EXPECT_GE(report.objects, 6u);  // 2 commits, 2 trees, 2 blobs, and the notes
  EXPECT_EQ(git({"rev-parse", run_ref("r1")}), second.commit + "\n");
  std::string log = git({"log", "--notes=shadowbox/*", "--format=%N", run_ref("r1")});
  EXPECT_NE(log.find("record of two"), std::string::npos) << log;
  EXPECT_NE(log.find("record of one"), std::string::npos) << log;
  git({"fsck", "--strict", "--no-progress"});
  // Nothing new: nothing sent.
  fsnap::PushReport again =
      fsnap::push_refs(fs.repo(), "file://" + remote_.string(), run_refs("r1"));
  EXPECT_TRUE(again.rejected.empty());
  EXPECT_EQ(again.objects, 0u);
  // A ref the store does not have is skipped.
  fsnap::PushReport none =
      fsnap::push_refs(fs.repo(), remote_.string(), {{run_ref("absent"), run_ref("absent")}});
  EXPECT_TRUE(none.updated.empty());
  EXPECT_EQ(fsnap::remote_refs(fs.repo(), remote_.string(), "refs/shadowbox/").size(), 1u);
}

TEST_F(RemoteTransferTest, ARefThatWouldNotFastForwardIsRefusedAndTheOthersArePushed) {
  fsnap::HostFilesystem fs = open();
  step(fs, "r1", "one");
  step(fs, "r2", "two");
  fsnap::push_refs(fs.repo(), remote_.string(), {{run_ref("r1"), run_ref("r1")}});
  // Another store writes an unrelated history to r1 on the remote.
  testing_support::TempDir other_dir;
  fs::create_directories(other_dir.path() / "ws");
  fsnap::HostFilesystem other(
      fsnap::Store::open(other_dir.path() / "store", other_dir.path() / "ws", true), {});
  testing_support::write_file(other_dir.path() / "ws" / "b.txt", "elsewhere");
  fsnap::Checkpoint theirs = other.checkpoint({.phase = fsnap::Phase::kCheckpoint, .run = "r1"});
  fsnap::push_refs(other.repo(), remote_.string(), {{run_ref("r1"), run_ref("r1"), true}});
  step(fs, "r1", "three");
  fsnap::PushReport report =
      fsnap::push_refs(fs.repo(), remote_.string(),
                       {{run_ref("r1"), run_ref("r1")}, {run_ref("r2"), run_ref("r2")}});
  ASSERT_EQ(report.rejected.count(run_ref("r1")), 1u);
  EXPECT_EQ(report.updated, std::vector<std::string>{run_ref("r2")});
  EXPECT_EQ(git({"rev-parse", run_ref("r1")}), theirs.commit + "\n");
}

TEST_F(RemoteTransferTest, AnotherStoreFetchesARunAndReadsItsCheckpoints) {
  fsnap::HostFilesystem fs = open();
  step(fs, "r1", "one");
  fsnap::Checkpoint last = step(fs, "r1", "two");
  fsnap::push_refs(fs.repo(), remote_.string(), run_refs("r1"));

  testing_support::TempDir b;
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(b.path() / "repo.git", true);
  fsnap::fetch_refs(repo, remote_.string(),
                    {{run_ref("r1"), run_ref("r1")}, {"refs/notes/shadowbox/w1", "refs/fleet/w1"}});
  std::vector<fsnap::Checkpoint> log = repo.log("r1", 10);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].commit, last.commit);
  repo.materialize(log[0].tree, b.path() / "out");
  EXPECT_EQ(testing_support::read_file(b.path() / "out" / "a.txt"), "two");
  EXPECT_TRUE(repo.ref_target("refs/fleet/w1"));

  try {
    fsnap::fetch_refs(repo, remote_.string(), {{run_ref("nope"), run_ref("nope")}});
    FAIL() << "fetched a ref the remote does not have";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find(run_ref("nope")), std::string::npos) << e.what();
  }
}

TEST_F(RemoteTransferTest, GitDaemonOnLoopbackCarriesPushesAndFetches) {
  testing_support::GitDaemon daemon(temp_.path());
  std::string url = daemon.url("remote.git");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint c = step(fs, "r1", "over the wire");
  fsnap::PushReport report = fsnap::push_refs(fs.repo(), url, run_refs("r1"));
  EXPECT_TRUE(report.rejected.empty()) << report.rejected.begin()->second;
  EXPECT_EQ(git({"rev-parse", run_ref("r1")}), c.commit + "\n");
  testing_support::TempDir b;
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(b.path() / "repo.git", true);
  fsnap::fetch_refs(repo, url, {{run_ref("r1"), run_ref("r1")}});
  EXPECT_EQ(repo.log("r1", 1).front().commit, c.commit);
}

TEST_F(RemoteTransferTest, AnUnreachableOrUnsupportedRemoteIsAClearError) {
  fsnap::HostFilesystem fs = open();
  step(fs, "r1", "one");
  std::string url =
      "git://127.0.0.1:" + std::to_string(testing_support::free_loopback_port()) + "/x";
  try {
    fsnap::push_refs(fs.repo(), url, run_refs("r1"));
    FAIL() << "pushed to nothing";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find(url), std::string::npos) << e.what();
  }
  try {
    fsnap::push_refs(fs.repo(), "https://git.example/x.git", run_refs("r1"));
    FAIL() << "https accepted";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("ssh://"), std::string::npos) << e.what();
  }
}

}  // namespace
