// A watched workspace with more directories than the inotify watch limit leaves room
// for: captures still see every change (they walk, as unwatched ones do), and the
// watch says once what to raise. The limit is injected (HostEnv::watch_limit): no
// sysctl is changed.
#include <string>
#include <vector>

#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

class WatchLimitTest : public HostTest {
 protected:
  // dirs directories, each with a subdirectory of 5 files: 2 x dirs + 1 to watch.
  void populate(int dirs, const std::string& prefix = "dir") {
    for (int d = 0; d < dirs; ++d) {
      for (int f = 0; f < 5; ++f) {
        write(prefix + std::to_string(d) + "/sub/file" + std::to_string(f), std::to_string(d * f));
      }
    }
  }

  // The limit as the kernel would have it: max_watches, and the sysctl's file saying
  // system_limit.
  void limit_to(std::size_t max_watches, const std::string& system_limit) {
    testing_support::write_file(temp_.path() / "max_user_watches", system_limit + "\n");
    watch_limit_.max_watches = max_watches;
    watch_limit_.limit_file = (temp_.path() / "max_user_watches").string();
  }

  // The tree a fresh, unwatched HostFilesystem captures with no stat cache.
  std::string full_walk() {
    fs::remove(store_dir_ / "stat-cache");
    watch_limit_ = {};
    return open().capture_tree();
  }

  std::vector<std::string> told_;
};

TEST_F(WatchLimitTest, PastTheLimitAtTheStartCapturesWalkAndSayWhatToRaise) {
  populate(20);  // 41 directories
  limit_to(5, "8192");
  fsnap::HostFilesystem fs = open();
  fs.watch([this](const std::string& advice) { told_.push_back(advice); });
  EXPECT_TRUE(fs.watching());
  EXPECT_EQ(fs.watched_directories(), 0u) << "the watches it had are given back";
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_NE(told_[0].find("41 directories"), std::string::npos) << told_[0];
  EXPECT_NE(told_[0].find("max_user_watches is 8192"), std::string::npos) << told_[0];
  // The other programs' 8,187 watches, the workspace's 41 and a quarter to spare,
  // rounded up to a multiple of 1,024.
  EXPECT_NE(told_[0].find("sudo sysctl fs.inotify.max_user_watches=9216"), std::string::npos)
      << told_[0];

  fs.checkpoint({});
  write("dir7/sub/file3", "changed");
  write("dir12/new/deeper/file", "in new directories");
  remove("dir3");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  write("dir8/sub/file1", "changed again");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  EXPECT_EQ(told_.size(), 1u) << "said once";
}

TEST_F(WatchLimitTest, ReachedAsTheTreeGrowsTheWatchTurnsToWalkingAndSaysSoOnce) {
  populate(10);  // 21 directories
  limit_to(30, "30");
  fsnap::HostFilesystem fs = open();
  fs.watch([this](const std::string& advice) { told_.push_back(advice); });
  fs.checkpoint({});
  EXPECT_EQ(fs.watched_directories(), 21u);
  EXPECT_TRUE(told_.empty());

  populate(10, "more");  // 20 more: 41, past 30
  write("dir4/sub/file2", "changed with them");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  EXPECT_EQ(fs.watched_directories(), 0u);
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_NE(told_[0].find("41 directories"), std::string::npos) << told_[0];
  // Nothing is the other programs' here: 41 and a quarter, rounded up.
  EXPECT_NE(told_[0].find("fs.inotify.max_user_watches=1024"), std::string::npos) << told_[0];

  write("more3/sub/file0", "changed after");
  EXPECT_EQ(fs.checkpoint({}).tree, full_walk());
  EXPECT_EQ(told_.size(), 1u);
}

TEST_F(WatchLimitTest, AnUnreadableSystemLimitStillGivesAValue) {
  populate(3);  // 7 directories
  watch_limit_.max_watches = 2;
  watch_limit_.limit_file = (temp_.path() / "no-such-file").string();
  fsnap::HostFilesystem fs = open();
  fs.watch([this](const std::string& advice) { told_.push_back(advice); });
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_NE(told_[0].find("max_user_watches is unknown"), std::string::npos) << told_[0];
  EXPECT_NE(told_[0].find("fs.inotify.max_user_watches=1024"), std::string::npos) << told_[0];
}

}  // namespace
}  // namespace fsnap_test
