// Trees someone else wrote: a restore, a HOME rebuilt from the store and a fetch from a
// remote refuse every entry name that would write outside the directory or into a git
// repository, before anything is written.
#include <git2.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "crafted_objects.hpp"
#include "fsnap/error.hpp"
#include "fsnap/remote_transfer.hpp"
#include "fsnap/store_layout.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using testing_support::craft_blob;
using testing_support::craft_commit_on;
using testing_support::craft_tree;
using testing_support::RawEntry;
using testing_support::read_file;

class HostileTreeTest : public HostTest {
 protected:
  HostileTreeTest() : outside_(temp_.path() / "outside.txt") {
    testing_support::write_file(outside_, "mine\n");
  }

  fs::path git_dir() const { return fsnap::layout::repo_dir(store_dir_); }
  std::string blob(const std::string& data) { return craft_blob(git_dir(), data); }
  std::string tree(const std::vector<RawEntry>& entries) { return craft_tree(git_dir(), entries); }

  // A checkpoint of tree, as a store someone else wrote could hold one.
  static fsnap::Checkpoint crafted(const std::string& tree_id) {
    fsnap::Checkpoint c;
    c.id = "crafted";
    c.tree = tree_id;
    return c;
  }

  // Restoring tree is refused with code, and leaves the workspace, the file beside it
  // and the store's checkpoints as they were.
  void expect_refused(fsnap::HostFilesystem& fs, const std::string& tree_id,
                      fsnap::ErrorCode code = fsnap::ErrorCode::kPathEscape) {
    Manifest before = manifest(/*include_git=*/true);
    std::size_t checkpoints = fs.repo().log("", 0).size();
    try {
      fs.restore_checkpoint(crafted(tree_id), {});
      ADD_FAILURE() << "restore of a hostile tree succeeded";
    } catch (const fsnap::Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find("refused before anything was written"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(read_file(outside_), "mine\n");
    EXPECT_EQ(testing_support::describe_difference(before, manifest(true)), "");
    EXPECT_EQ(fs.repo().log("", 0).size(), checkpoints) << "a safety checkpoint was taken";
  }

  fs::path outside_;
};

TEST_F(HostileTreeTest, ADotDotDirectoryCannotWriteBesideTheWorkspace) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  std::string up = tree({{"100644", "outside.txt", blob("pwned\n")}});
  expect_refused(fs, tree({{"40000", "..", up}, {"100644", "a.txt", blob("a\n")}}));
}

TEST_F(HostileTreeTest, ANameHoldingSlashesCannotWriteBesideTheWorkspace) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  expect_refused(
      fs, tree({{"100644", "../outside.txt", blob("pwned\n")}, {"100644", "a.txt", blob("a\n")}}));
  expect_refused(fs, tree({{"100644", "a.txt", blob("a\n")},
                           {"100644", "sub/../../outside.txt", blob("pwned\n")}}));
}

TEST_F(HostileTreeTest, NothingIsWrittenIntoTheWorkspacesOwnRepository) {
  write("a.txt", "a\n");
  mkdir(".git/hooks");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  std::string hook = blob("#!/bin/sh\necho owned > /tmp/owned\n");
  std::string hooks = tree({{"100755", "post-checkout", hook}});
  std::string dot_git = tree({{"40000", "hooks", hooks}});
  // Every spelling some filesystem takes for ".git", and ".git" itself.
  for (std::string name : {".git", ".GIT", ".Git", "git~1", "GIT~1", ".git.", ".git ",
                           ".git::$INDEX_ALLOCATION", ".g\xe2\x80\x8cit", "\xef\xbb\xbf.git"}) {
    SCOPED_TRACE(name);
    expect_refused(fs, tree({{"40000", name, dot_git}, {"100644", "a.txt", blob("a\n")}}));
    EXPECT_FALSE(fs::exists(ws_ / ".git/hooks/post-checkout"));
  }
}

TEST_F(HostileTreeTest, ANameTwiceInOneDirectoryIsRefused) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  std::string sub = tree({{"100644", "x", blob("x\n")}});
  expect_refused(fs, tree({{"100644", "a.txt", blob("a\n")}, {"40000", "a.txt", sub}}),
                 fsnap::ErrorCode::kCorrupt);
}

TEST_F(HostileTreeTest, DirectoriesNestedBeyondAnyWorkspaceAreRefusedNotRecursedInto) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({});
  std::string leaf = tree({{"100644", "deep.txt", blob("deep\n")}});
  expect_refused(fs, testing_support::craft_nested_tree(git_dir(), "d", 2100, leaf),
                 fsnap::ErrorCode::kCorrupt);
}

TEST_F(HostileTreeTest, NamesCaptureNeverRecordsAreLeftOutOfCheckpoints) {
  // A git directory in another spelling is as much the user's repository as ".git" is:
  // not captured, and so never restored over nor deleted.
  write(".GIT/config", "[core]\n");
  write("git~1/HEAD", "ref: refs/heads/main\n");
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fsnap::Checkpoint first = fs.checkpoint({});
  std::vector<fsnap::TreeChange> all = fs.repo().diff_trees("", first.tree);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].path, "a.txt");
  remove("a.txt");
  fs.restore_checkpoint(first, {});
  EXPECT_EQ(read_file(ws_ / ".GIT/config"), "[core]\n");
  EXPECT_EQ(read_file(ws_ / "a.txt"), "a\n");
}

TEST_F(HostileTreeTest, AHomeTreeIsCheckedWholeBeforeAnythingIsWritten) {
  fsnap::HostFilesystem fs = open();
  std::string up = tree({{"100644", "outside.txt", blob("pwned\n")}});
  // "a" sorts first: a writer that checks as it goes would have written it.
  std::string hostile = tree({{"100644", "a", blob("a\n")}, {"40000", "..", up}});
  fs::path home = temp_.path() / "home" / "rebuilt";
  try {
    fs.repo().materialize(hostile, home);
    ADD_FAILURE() << "materialized a hostile tree";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kPathEscape) << e.what();
  }
  EXPECT_FALSE(fs::exists(home));
  EXPECT_EQ(read_file(outside_), "mine\n");
}

// A bare repository standing for a fleet's remote that someone else can push to.
class HostileRemoteTest : public HostileTreeTest {
 protected:
  HostileRemoteTest() : remote_(temp_.path() / "remote.git") {
    git_libgit2_init();
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_init(&raw, remote_.c_str(), /*is_bare=*/1), 0);
    git_repository_free(raw);
  }
  ~HostileRemoteTest() override { git_libgit2_shutdown(); }

  fs::path remote_;
};

TEST_F(HostileRemoteTest, AFetchedRunWithAHostileTreeIsRefusedAndMovesNoRef) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem fs = open();
  fs.checkpoint({.run = "r"});
  const std::string run_ref = fsnap::layout::run_ref("r");
  fsnap::PushReport pushed = fsnap::push_refs(fs.repo(), remote_.string(), {{run_ref, run_ref}});
  ASSERT_EQ(pushed.updated.size(), 1u);
  // Someone with push access adds a checkpoint that writes a git hook.
  std::string hook = craft_blob(remote_, "#!/bin/sh\necho owned\n");
  std::string hooks = craft_tree(remote_, {{"100755", "post-checkout", hook}});
  std::string dot_git = craft_tree(remote_, {{"40000", "hooks", hooks}});
  std::string a = craft_blob(remote_, "a\n");
  std::string hostile = craft_tree(remote_, {{"40000", ".git", dot_git}, {"100644", "a.txt", a}});
  std::string commit = craft_commit_on(remote_, run_ref, hostile, "crafted");

  // Another store fetches the run (as `recover` does).
  fs::path other_store = temp_.path() / "other-store";
  fs::path other_ws = temp_.path() / "other-ws";
  fs::create_directories(other_ws);
  fsnap::HostFilesystem other(fsnap::Store::open(other_store, other_ws, true), {}, {});
  try {
    fsnap::fetch_refs(other.repo(), remote_.string(), {{run_ref, run_ref}});
    ADD_FAILURE() << "fetched a hostile run";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kPathEscape) << e.what();
    EXPECT_NE(std::string(e.what()).find(commit), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".git"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(other.repo().ref_target(run_ref).has_value());
  EXPECT_TRUE(other.repo().log("", 0).empty());
  git_repository* raw = nullptr;
  ASSERT_EQ(git_repository_open_bare(&raw, fsnap::layout::repo_dir(other_store).c_str()), 0);
  git_reference_iterator* it = nullptr;
  ASSERT_EQ(git_reference_iterator_glob_new(&it, raw, "refs/shadowbox/incoming/*"), 0);
  const char* name = nullptr;
  EXPECT_NE(git_reference_next_name(&name, it), 0) << "left behind: " << name;
  git_reference_iterator_free(it);
  git_repository_free(raw);

  // The run as its owner pushed it, before the crafted commit, still fetches.
  fsnap::Checkpoint honest = fs.repo().log("r", 1).front();
  std::string honest_ref = "refs/shadowbox/runs/honest";
  fsnap::push_refs(fs.repo(), remote_.string(), {{run_ref, honest_ref}});
  fsnap::fetch_refs(other.repo(), remote_.string(), {{honest_ref, fsnap::layout::run_ref("r")}});
  EXPECT_EQ(other.repo().ref_target(run_ref), honest.commit);
}

}  // namespace
}  // namespace fsnap_test
