// ShadowRepo::merge_trees and tree_with_paths_of on captured workspaces, and a restore
// whose safety checkpoint was taken already (RestoreOptions::safety): the pieces of
// `shadowbox undo`.
#include <gtest/gtest.h>

#include "fsnap/error.hpp"
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

std::string lines(int changed_line, const std::string& text, int other = 0,
                  const std::string& other_text = "") {
  std::string out;
  for (int i = 1; i <= 12; ++i) {
    if (i == changed_line) {
      out += text + "\n";
    } else if (i == other) {
      out += other_text + "\n";
    } else {
      out += "line " + std::to_string(i) + "\n";
    }
  }
  return out;
}

class TreeMergeTest : public HostTest {
 protected:
  // The tree of the workspace as it is now.
  std::string capture(fsnap::HostFilesystem& host) { return host.capture_tree(); }
  // The paths whose entries differ between two trees.
  std::vector<std::string> paths_between(fsnap::HostFilesystem& host, const std::string& a,
                                         const std::string& b) {
    std::vector<std::string> out;
    for (const fsnap::TreeChange& c : host.repo().diff_trees(a, b)) out.push_back(c.path);
    return out;
  }
};

TEST_F(TreeMergeTest, ChangesToOtherLinesOfATextFileMerge) {
  write("f.txt", lines(0, ""));
  write("g.txt", "g\n");
  fsnap::HostFilesystem host = open();
  std::string ancestor = capture(host);
  write("f.txt", lines(2, "ours"));
  std::string ours = capture(host);
  write("f.txt", lines(10, "theirs"));
  write("g.txt", "theirs\n");
  std::string theirs = capture(host);

  fsnap::TreeMerge merge = host.repo().merge_trees(ancestor, ours, theirs);
  ASSERT_TRUE(merge.conflicts.empty());
  ASSERT_FALSE(merge.tree.empty());
  write("f.txt", lines(2, "ours", 10, "theirs"));
  write("g.txt", "theirs\n");
  EXPECT_EQ(merge.tree, capture(host)) << "both sides' changes, line by line";
}

TEST_F(TreeMergeTest, TheSameLinesABinaryFileAndARemovedFileConflict) {
  write("f.txt", lines(0, ""));
  write("b.bin", std::string("\0\1\2", 3));
  write("gone.txt", "here\n");
  write("same.txt", "same\n");
  fsnap::HostFilesystem host = open();
  std::string ancestor = capture(host);
  write("f.txt", lines(5, "ours"));
  write("b.bin", std::string("\0ours", 5));
  remove("gone.txt");
  std::string ours = capture(host);
  write("f.txt", lines(5, "theirs"));
  write("b.bin", std::string("\0theirs", 7));
  write("gone.txt", "changed\n");
  write("same.txt", "theirs\n");
  std::string theirs = capture(host);

  fsnap::TreeMerge merge = host.repo().merge_trees(ancestor, ours, theirs);
  EXPECT_TRUE(merge.tree.empty());
  ASSERT_EQ(merge.conflicts.size(), 3u);
  EXPECT_EQ(merge.conflicts[0].path, "b.bin");
  EXPECT_TRUE(merge.conflicts[0].binary);
  EXPECT_EQ(merge.conflicts[1].path, "f.txt");
  EXPECT_FALSE(merge.conflicts[1].binary);
  EXPECT_TRUE(merge.conflicts[1].ancestor && merge.conflicts[1].ours && merge.conflicts[1].theirs);
  EXPECT_EQ(merge.conflicts[2].path, "gone.txt");
  EXPECT_TRUE(merge.conflicts[2].ancestor.has_value());
  EXPECT_FALSE(merge.conflicts[2].ours.has_value()) << "ours removed it";
  EXPECT_TRUE(merge.conflicts[2].theirs.has_value());
}

TEST_F(TreeMergeTest, AddedRemovedExecutableAndSymlinkEntriesMergeAsGitDoes) {
  write("keep.txt", "keep\n");
  write("old.txt", "old\n");
  write("run.sh", "#!/bin/sh\n");
  fsnap::HostFilesystem host = open();
  std::string ancestor = capture(host);
  write("ours.txt", "ours\n");
  std::string ours = capture(host);
  remove("ours.txt");
  remove("old.txt");
  write("dir/new.txt", "new\n");
  write("run.sh", "#!/bin/sh\n", /*exec=*/true);
  link("keep.txt", "to-keep");
  std::string theirs = capture(host);

  fsnap::TreeMerge merge = host.repo().merge_trees(ancestor, ours, theirs);
  ASSERT_TRUE(merge.conflicts.empty());
  write("ours.txt", "ours\n");
  EXPECT_EQ(merge.tree, capture(host));
}

TEST_F(TreeMergeTest, ATreeWithSomePathsOfAnotherTakesThoseOnly) {
  write("a.txt", "a\n");
  write("b.txt", "b\n");
  write("d/x.txt", "x\n");
  fsnap::HostFilesystem host = open();
  std::string source = capture(host);
  write("a.txt", "a2\n");
  write("b.txt", "b2\n");
  remove("d");
  write("e/y.txt", "y\n");
  std::string base = capture(host);

  std::string mixed =
      host.repo().tree_with_paths_of(base, source, {"a.txt", "d", "d/x.txt", "e", "e/y.txt"});
  write("a.txt", "a\n");
  write("d/x.txt", "x\n");
  remove("e");
  EXPECT_EQ(mixed, capture(host)) << "a.txt, d and e as the source has them; b.txt as base";
  EXPECT_TRUE(paths_between(host, mixed, capture(host)).empty());
}

TEST_F(TreeMergeTest, ARestoreOnATakenSafetyCheckpointRefusesAWorkspaceChangedSince) {
  write("a.txt", "a\n");
  fsnap::HostFilesystem host = open();
  fsnap::Checkpoint target = host.checkpoint({});
  write("a.txt", "now\n");
  fsnap::Checkpoint taken = host.checkpoint({});
  std::size_t checkpoints = host.repo().log("default", 0).size();

  write("a.txt", "changed after it\n");
  fsnap::RestoreOptions options;
  options.safety = taken;
  try {
    host.restore_checkpoint(target, options);
    FAIL() << "restored over a change the caller did not see";
  } catch (const fsnap::Error& e) {
    EXPECT_EQ(e.code(), fsnap::ErrorCode::kConflict);
    EXPECT_NE(std::string(e.what()).find(taken.id), std::string::npos) << e.what();
  }
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "changed after it\n");

  write("a.txt", "now\n");
  fsnap::RestoreReport report = host.restore_checkpoint(target, options);
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  ASSERT_TRUE(report.safety.has_value());
  EXPECT_EQ(report.safety->id, taken.id) << "the taken checkpoint is the safety checkpoint";
  EXPECT_EQ(host.repo().log("default", 0).size(), checkpoints) << "no other was taken";
}

}  // namespace
}  // namespace fsnap_test
