// The checkpoints of commits parsed once per process (fsnap/src/commit_cache.hpp): a run's
// log read again gives what reading it afresh gives, tags included.
#include "host_fixture.hpp"

namespace fsnap_test {
namespace {

using CommitCacheLogTest = HostTest;

// A log read once is kept parsed; a tag moved to a later checkpoint afterwards is shown
// only where it points now, as a log read by a fresh process shows it.
TEST_F(CommitCacheLogTest, ATagMovedAfterTheLogWasReadIsShownOnlyWhereItPointsNow) {
  fsnap::HostFilesystem fs = open();
  write("a.txt", "one");
  fsnap::CheckpointMeta tagged;
  tagged.tag = "good";
  fsnap::Checkpoint first = fs.checkpoint(tagged);
  ASSERT_EQ(fs.repo().log(fsnap::kDefaultRun, 0).front().meta.tag, "good");

  write("a.txt", "two");
  tagged.move_tag = true;
  fsnap::Checkpoint second = fs.checkpoint(tagged);
  std::vector<fsnap::Checkpoint> log = fs.repo().log(fsnap::kDefaultRun, 0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].commit, second.commit);
  EXPECT_EQ(log[0].meta.tag, "good");
  EXPECT_EQ(log[1].commit, first.commit);
  EXPECT_EQ(log[1].meta.tag, "") << "the tag moved on";
  EXPECT_EQ(log[1].tree, first.tree);
  EXPECT_EQ(log[0].parent, first.commit);

  fsnap::HostFilesystem fresh = open();  // another process's view: nothing cached
  std::vector<fsnap::Checkpoint> again = fresh.repo().log(fsnap::kDefaultRun, 0);
  ASSERT_EQ(again.size(), log.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    EXPECT_EQ(again[i].commit, log[i].commit);
    EXPECT_EQ(again[i].meta.tag, log[i].meta.tag);
    EXPECT_EQ(again[i].id, log[i].id);
    EXPECT_EQ(again[i].created_at, log[i].created_at);
  }
}

}  // namespace
}  // namespace fsnap_test
