// The stat cache (issue 2; docs/performance.md): an unchanged workspace is not re-read,
// files modified within the timestamp granularity are (racy guard), and a damaged or
// missing cache costs time, never correctness.
#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

// A HostTest whose captures record their final progress counters, on a test clock.
class StatCacheTest : public HostTest {
 protected:
  StatCacheTest() { use_test_clock(); }

  fsnap::CaptureOptions counting() {
    return {.on_progress = [this](const fsnap::CaptureProgress& p) {
      if (p.done) last_ = p;
    }};
  }
  // Files read by the last capture.
  std::uint64_t hashed() const { return last_.files_hashed; }

  void populate(int files) {
    for (int i = 0; i < files; ++i) {
      write("d" + std::to_string(i % 7) + "/f" + std::to_string(i), "content " + std::to_string(i));
    }
  }

  fsnap::CaptureProgress last_;
};

TEST_F(StatCacheTest, UnchangedWorkspaceIsNotReread) {
  populate(200);
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint first = fs.checkpoint({});
  EXPECT_EQ(hashed(), 200u);
  fsnap::Checkpoint second = fs.checkpoint({});
  EXPECT_EQ(hashed(), 0u);
  EXPECT_EQ(second.tree, first.tree);
  EXPECT_GE(last_.entries_seen, 200u);
}

TEST_F(StatCacheTest, CacheIsSharedBetweenProcessesThroughTheStore) {
  populate(50);
  settle();
  open().checkpoint({});
  fsnap::HostFilesystem again = open(counting());  // a new object, as a new process would
  again.checkpoint({});
  EXPECT_EQ(hashed(), 0u);
}

TEST_F(StatCacheTest, OnlyChangedFilesAreReread) {
  populate(100);
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fs.checkpoint({});
  write("d3/f3", "changed");
  write("d4/new", "new file");
  settle();
  fsnap::Checkpoint cp = fs.checkpoint({});
  EXPECT_EQ(hashed(), 2u);
  EXPECT_EQ(fs.read("d3/f3"), "changed");
  std::vector<fsnap::TreeChange> changes = fs.repo().diff_trees(
      cp.parent.empty() ? "" : fs.repo().read_checkpoint(cp.parent).tree, cp.tree);
  ASSERT_EQ(changes.size(), 2u);
}

TEST_F(StatCacheTest, FilesWrittenJustBeforeACaptureAreRereadNextTime) {
  populate(20);  // no settle: every file is "racy" for this capture
  fsnap::HostFilesystem fs = open(counting());
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 20u);
  settle();
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 20u) << "racy entries must not be trusted by the next capture";
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 0u) << "once old enough, entries are trusted";
}

TEST_F(StatCacheTest, SameSizeChangeWithRestoredMtimeIsDetected) {
  write("f", "aaaa");
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint before = fs.checkpoint({});
  struct stat st;
  ASSERT_EQ(::stat(at("f").c_str(), &st), 0);
  write("f", "bbbb");
  timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, at("f").c_str(), times, 0), 0);
  fsnap::Checkpoint after = fs.checkpoint({});
  EXPECT_NE(after.tree, before.tree);
  fs.restore_checkpoint(before, {});
  EXPECT_EQ(testing_support::read_file(ws_ / "f"), "aaaa");
}

TEST_F(StatCacheTest, ModeChangeIsDetectedWithoutRereading) {
  write("s.sh", "echo\n");
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint before = fs.checkpoint({});
  ASSERT_EQ(::chmod(at("s.sh").c_str(), 0755), 0);
  fsnap::Checkpoint after = fs.checkpoint({});
  ASSERT_NE(after.tree, before.tree);
  std::vector<fsnap::TreeChange> changes = fs.repo().diff_trees(before.tree, after.tree);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_TRUE(changes[0].after->executable);
}

TEST_F(StatCacheTest, CorruptOrMissingCacheOnlyCostsTime) {
  populate(60);
  settle();
  fsnap::Checkpoint reference = open().checkpoint({});
  fsnap::Store store = fsnap::Store::open(store_dir_, ws_, false);
  std::string good = testing_support::read_file(store.stat_cache_file());
  ASSERT_FALSE(good.empty());

  const std::vector<std::string> damaged = {
      "", "garbage", good.substr(0, good.size() / 2),
      good.substr(0, good.size() - 1) + static_cast<char>(good.back() ^ 0x5a)};
  for (const std::string& bytes : damaged) {
    SCOPED_TRACE("cache of " + std::to_string(bytes.size()) + " bytes");
    testing_support::write_file(store.stat_cache_file(), bytes);
    write("d1/f1", "edited " + std::to_string(bytes.size()));
    settle();
    fsnap::HostFilesystem fs = open(counting());
    fsnap::Checkpoint cp = fs.checkpoint({});
    EXPECT_EQ(hashed(), 60u) << "a damaged cache must not be trusted";
    EXPECT_EQ(fs.repo().read_blob(fs.repo().diff_trees(reference.tree, cp.tree).at(0).after->oid),
              "edited " + std::to_string(bytes.size()));
  }
  fs::remove(store.stat_cache_file());
  fsnap::HostFilesystem fs = open(counting());
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 60u);
}

TEST_F(StatCacheTest, RestoredFilesAreTrustedAfterwards) {
  populate(30);
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint cp = fs.checkpoint({});
  write("d2/f2", "changed");
  remove("d5");
  fs.restore_checkpoint(cp, {});
  settle();
  fs.checkpoint({});
  fsnap::Checkpoint again = fs.checkpoint({});
  EXPECT_EQ(hashed(), 0u);
  EXPECT_EQ(again.tree, cp.tree);
}

// Each directory's names are held in one buffer (issue 37): names of every length and
// of bytes other than letters are looked up, trusted, and kept right when their
// directory's record is rebuilt.
TEST_F(StatCacheTest, LongAndOddNamesAreTrustedAndRebuilt) {
  const std::vector<std::string> names = {std::string(255, 'n'), "a name over fifteen bytes.txt",
                                          "new\nline",           "\x01\xff odd bytes",
                                          "\xc3\xa9t\xc3\xa9",   "s"};
  for (const std::string& name : names) {
    write("d/" + name, "in d: " + name);
    write("d/sub/" + name, "in d/sub: " + name);
  }
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fsnap::Checkpoint first = fs.checkpoint({});
  EXPECT_EQ(hashed(), 2 * names.size());
  EXPECT_EQ(fs.checkpoint({}).tree, first.tree);
  EXPECT_EQ(hashed(), 0u);
  open(counting()).checkpoint({});
  EXPECT_EQ(hashed(), 0u) << "the cache file gives every name back";

  remove("d/" + names[1]);
  write("d/m between the others", "new");
  write("d/" + names[0], "changed");
  remove("d/sub/" + names[3]);
  settle();
  fsnap::Checkpoint changed = fs.checkpoint({});
  EXPECT_EQ(hashed(), 2u);
  EXPECT_EQ(fs.read("d/" + names[0]), "changed");
  EXPECT_EQ(fs.read("d/" + names[2]), "in d: " + names[2]);
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 0u) << "the rebuilt records are trusted";

  fs::remove(fsnap::Store::open(store_dir_, ws_, false).stat_cache_file());
  EXPECT_EQ(open().checkpoint({}).tree, changed.tree) << "as a walk with no cache finds it";
}

// A tree whose files are under one directory, as a repository's under src/: a capture
// splits the directories above the wide levels among its threads (several levels deep,
// and deeper than it splits). What it records is what git would, and every directory it
// split has its record in the cache: nothing is read again, but what changed.
TEST_F(StatCacheTest, ATreeUnderOneDirectoryIsCapturedWholeAndCachedWhole) {
  const std::string deep = "src/a/b/c/d/e/f/g";
  for (std::string dir = deep; !dir.empty(); dir = fs::path(dir).parent_path().string()) {
    write(dir + "/at-" + fs::path(dir).filename().string() + ".txt", "in " + dir);
  }
  for (int i = 0; i < 60; ++i) {
    write("src/a/wide" + std::to_string(i) + "/f.txt", "wide " + std::to_string(i));
    write("src/a/wide" + std::to_string(i) + "/sub/g.txt", "below wide " + std::to_string(i));
  }
  write("src/a/b/run.sh", "#!/bin/sh\n", true);
  link("at-c.txt", "src/a/b/c/latest");
  write("top.txt", "at the root");
  settle();
  const std::size_t files = 8 + 120 + 3;

  // What git makes of the same files, in a git directory of its own.
  auto git_tree = [&] {
    fs::path git_dir = temp_.path() / "git";
    std::vector<std::string> env{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
                                 "GIT_DIR=" + git_dir.string(), "GIT_WORK_TREE=" + ws_.string()};
    EXPECT_EQ(testing_support::run_command({"git", "init", "-q"}, ws_, env).exit_code, 0);
    EXPECT_EQ(testing_support::run_command({"git", "add", "-A"}, ws_, env).exit_code, 0);
    testing_support::CommandResult r =
        testing_support::run_command({"git", "write-tree"}, ws_, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find('\n'));
  };

  fsnap::HostFilesystem fs = open(counting());
  EXPECT_EQ(fs.checkpoint({}).tree, git_tree());
  EXPECT_EQ(hashed(), files);
  fs.checkpoint({});
  EXPECT_EQ(hashed(), 0u);
  open(counting()).checkpoint({});
  EXPECT_EQ(hashed(), 0u) << "the cache file has a record of every directory";

  write(deep + "/at-g.txt", "changed below every split");
  write("src/a/at-a.txt", "changed in a directory split");
  fs::remove_all(ws_ / "src/a/wide7");
  settle();
  EXPECT_EQ(open(counting()).checkpoint({}).tree, git_tree());
  EXPECT_EQ(hashed(), 2u);
}

}  // namespace
}  // namespace fsnap_test
