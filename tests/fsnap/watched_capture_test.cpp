// A watched workspace (HostFilesystem::watch): captures read only the directories
// inotify saw change, and still capture exactly what a full walk would.
#include <sys/stat.h>

#include <string>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

class WatchedTest : public HostTest {
 protected:
  WatchedTest() { use_test_clock(); }

  // Options whose progress callback records the last capture's counters.
  fsnap::CaptureOptions counting() {
    fsnap::CaptureOptions options;
    options.on_progress = [this](const fsnap::CaptureProgress& p) {
      if (p.done) last_ = p;
    };
    return options;
  }

  // The tree a fresh, unwatched HostFilesystem captures with no stat cache.
  std::string full_walk(fsnap::CaptureOptions options = {}) {
    fs::remove(store_dir_ / "stat-cache");
    return open(std::move(options)).capture_tree();
  }

  // 20 directories of 50 files each.
  void populate() {
    for (int d = 0; d < 20; ++d) {
      for (int f = 0; f < 50; ++f) {
        write("dir" + std::to_string(d) + "/sub/file" + std::to_string(f), std::to_string(d * f));
      }
    }
  }

  fsnap::CaptureProgress last_;
};

TEST_F(WatchedTest, OnlyChangedDirectoriesAreRead) {
  populate();
  // Past the racy margin, so that no file of dir7 is re-read for its timestamps alone.
  settle();
  fsnap::HostFilesystem fs = open(counting());
  fs.watch();
  ASSERT_TRUE(fs.watching());
  fs.checkpoint({});
  EXPECT_GT(last_.entries_seen, 1000u) << "the first capture walks everything";

  write("dir7/sub/file3", "changed");
  fsnap::Checkpoint changed = fs.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 1u);
  // dir7/sub's 50 entries: the directories above it (the root's 20 entries, dir7's one)
  // are taken from the stat cache, not listed again.
  EXPECT_EQ(last_.entries_seen, 50u);
  EXPECT_EQ(changed.tree, full_walk());

  fsnap::Checkpoint same = fs.checkpoint({});
  EXPECT_EQ(last_.entries_seen, 0u) << "nothing changed: nothing is listed";
  EXPECT_EQ(same.tree, changed.tree);
}

// A directory above a change is not listed again, and what the capture before reported
// of its own entries still stands: a file over the size limit and an excluded path in
// the root are reported as they were, and the tree is a full walk's.
TEST_F(WatchedTest, ADirectoryAboveAChangeKeepsWhatItsEntriesWere) {
  populate();
  write("big.bin", std::string(4096, 'b'));
  write("secret/key", "excluded");
  write("dir7/sub/.gitignore", "");
  settle();
  fsnap::CaptureOptions options = counting();
  options.max_file_size = 1024;
  options.excludes = {"secret"};
  fsnap::HostFilesystem fs = open(options);
  fs.watch();
  fs.checkpoint({});

  write("dir7/sub/file3", "changed");
  write("dir9/sub/new-file", "added");
  fsnap::CaptureReport report = fs.capture_report();
  EXPECT_EQ(last_.entries_seen, 50u + 51u + 1u) << "dir7/sub and dir9/sub, 51 entries each";
  ASSERT_EQ(report.skipped.size(), 1u);
  EXPECT_EQ(report.skipped[0].path, "big.bin");
  EXPECT_EQ(report.uncaptured, std::vector<std::string>{"secret"});
  fsnap::CaptureOptions plain;
  plain.max_file_size = 1024;
  plain.excludes = {"secret"};
  EXPECT_EQ(report.tree, full_walk(plain));

  // A file changed in a directory above: that directory is listed, the rest is not.
  write("dir7/top.txt", "in dir7 itself");
  fs.checkpoint({});
  EXPECT_EQ(last_.entries_seen, 2u) << "dir7's two entries";
  EXPECT_EQ(fs.capture_tree(), full_walk(plain));
}

TEST_F(WatchedTest, NewDeletedAndMovedDirectories) {
  populate();
  testing_support::TempDir outside;
  testing_support::write_file(outside.path() / "brought/in/deep.txt", "from outside");
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fs.checkpoint({});

  write("new/a/b/c/file", "created below a new directory");
  mkdir("new/empty");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  remove("dir3");
  fs::rename(ws_ / "dir4", ws_ / "new/a/dir4-moved");
  write("new/a/dir4-moved/sub/file9", "changed after the move");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  fs::rename(ws_ / "dir5", outside.path() / "dir5");
  fs::rename(outside.path() / "brought", ws_ / "brought");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  // Changes inside directories that moved are still seen: their watches moved along.
  write("brought/in/deep.txt", "changed in place");
  write("new/a/dir4-moved/sub/file1", "changed again");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
}

TEST_F(WatchedTest, ADirectoryReachedThroughASymlinkKeepsItsOwnWatch) {
  // x/sub is made in the watched x, and x swapped for a symlink to d, before the
  // watcher reads the events. Watching "x/sub" by its path put that watch on d/sub,
  // and forgetting x took it away from d/sub: d/sub's later changes went unseen.
  write("d/sub/old", "old");
  mkdir("x");
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fs.checkpoint({});

  mkdir("x/sub");
  remove("x");
  link("d", "x");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  write("d/sub/new", "written after x went");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
}

TEST_F(WatchedTest, ADirectoryReplacedByAnotherOfItsNameIsWatchedAsTheNewOne) {
  populate();
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fs.checkpoint({});

  // Both before the watcher reads the events: the watch of the name is the new one's.
  fs::rename(ws_ / "dir1", ws_ / "dir1-old");
  write("dir1/sub/fresh", "the new dir1");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  write("dir1/sub/fresh", "changed in the new dir1");
  write("dir1-old/sub/file2", "changed in the old dir1");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());

  remove("dir1-old");
  write("dir1/sub/another", "after the old one went");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
}

TEST_F(WatchedTest, TypeChangesAndModes) {
  populate();
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fs.checkpoint({});

  remove("dir1/sub/file1");
  link("file2", "dir1/sub/file1");
  remove("dir2");
  write("dir2", "a directory became a file");
  ASSERT_EQ(::chmod(at("dir6/sub/file6").c_str(), 0755), 0);
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
}

TEST_F(WatchedTest, SkippedAndExcludedPathsAreStillReportedWhenNotReread) {
  fsnap::CaptureOptions options;
  options.max_file_size = 10;
  options.excludes = {"build/"};
  write("big/large.bin", std::string(100, 'x'));
  write("build/out.o", "object");
  write("src/main.c", "int main;");
  fsnap::HostFilesystem fs = open(options);
  fs.watch();
  fsnap::Checkpoint first = fs.checkpoint({});
  ASSERT_EQ(first.skipped.size(), 1u);

  write("src/main.c", "int main2;");
  write("build/out.o", "changed, but excluded");
  fsnap::Checkpoint second = fs.checkpoint({});
  ASSERT_EQ(second.skipped.size(), 1u) << "big/ was not read again, its report stands";
  EXPECT_EQ(second.skipped[0].path, "big/large.bin");
  EXPECT_EQ(second.tree, full_walk(options));

  remove("big");
  EXPECT_TRUE(fs.checkpoint({}).skipped.empty());
}

TEST_F(WatchedTest, ChangedGitignoreIsAppliedBelowIt) {
  fsnap::CaptureOptions options;
  options.respect_gitignore = true;
  write("pkg/.gitignore", "");
  write("pkg/deep/er/app.log", "log");
  write("pkg/deep/er/app.c", "code");
  fsnap::HostFilesystem fs = open(options);
  fs.watch();
  fs.checkpoint({});

  write("pkg/.gitignore", "*.log\n");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk(options));
  write("pkg/.gitignore", "");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk(options));
}

TEST_F(WatchedTest, RestoresAreSeen) {
  populate();
  fsnap::HostFilesystem fs = open();
  fs.watch();
  fsnap::Checkpoint before = fs.checkpoint({});
  write("dir0/sub/file0", "changed");
  remove("dir9");
  fsnap::Checkpoint after = fs.checkpoint({});
  fs.restore_checkpoint(before, {});
  EXPECT_EQ(fs.capture_tree(), before.tree);
  fs.restore_checkpoint(after, {});
  EXPECT_EQ(fs.capture_tree(), after.tree);
}

TEST_F(WatchedTest, StatCacheIsWrittenForTheProcessesAfter) {
  populate();
  // Files written within the racy margin of a capture are re-read by the next one that
  // looks at them; let the clock move past it.
  settle();
  {
    fsnap::HostFilesystem fs = open();
    fs.watch();
    fs.checkpoint({});
    write("dir0/sub/file0", "changed");
    settle();
    fs.checkpoint({});
  }
  fsnap::HostFilesystem later = open(counting());
  later.checkpoint({});
  EXPECT_EQ(last_.files_hashed, 0u) << "the watched object left its stat cache behind";
}

TEST_F(WatchedTest, RecordsOfDirectoriesThatWentAreDropped) {
  populate();
  write("dir9/sub/deeper/still/file", "three levels below dir9");
  settle();
  {
    fsnap::HostFilesystem fs = open();
    fs.watch();
    fs.checkpoint({});
    remove("dir3");  // a directory and its subdirectory
    remove("dir2");  // one that became a file
    write("dir2", "a file now");
    fs::rename(ws_ / "dir9/sub", ws_ / "moved-sub");  // moved out from below dir9
    remove("dir5/sub");                               // recreated, without what it held
    write("dir5/sub/other", "new");
    settle();
    fs.checkpoint({});
  }  // the watched object writes its cache
  std::uintmax_t watched = fs::file_size(store_dir_ / "stat-cache");
  fs::remove(store_dir_ / "stat-cache");
  open().checkpoint({});  // a walk of the whole tree writes the cache it finds
  EXPECT_EQ(watched, fs::file_size(store_dir_ / "stat-cache"))
      << "the watched cache kept records of directories that are gone";
}

}  // namespace
}  // namespace fsnap_test
