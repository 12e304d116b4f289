// What a run carried into its agent's HOME does not outlive a run whose supervisor was
// killed: the next run or resume in the store removes it, from the HOMEs of runs that no
// longer run, and never follows a listed name out of its HOME.
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/home_leftovers.hpp"
#include "runs/run_meta.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

class HomeLeftoversTest : public ::testing::Test {
 protected:
  // A run whose supervisor is pid (this process: running), with a HOME holding the
  // user's carried configuration and the agent's session data.
  fs::path run_with(const std::string& run, long pid, const std::string& stamp = "") {
    runs::RunMeta meta;
    meta.run = run;
    meta.workspace = (temp_ / "ws").string();
    meta.pid = pid;
    meta.save(store_);
    fs::path home = stamp.empty() ? fsnap::layout::run_home_dir(store_.dir(), run)
                                  : fsnap::layout::resumed_home_dir(store_.dir(), run, stamp);
    testing_support::write_file(home / ".claude.json", "{\"theme\":\"dark\"}");
    testing_support::write_file(home / ".claude/settings.json", "{}");
    testing_support::write_file(home / ".claude/projects/p/s.jsonl", "{}\n");
    hooks::record_carried(home, {".claude.json", ".claude/settings.json"});
    return home;
  }

  testing_support::TempDir temp_;
  fsnap::Store store_ = [this] {
    fs::create_directories(temp_ / "ws");
    return fsnap::Store::open(temp_ / "store", temp_ / "ws", true);
  }();
};

TEST_F(HomeLeftoversTest, TheCarriedConfigurationOfAKilledRunGoesItsSessionDataStays) {
  fs::path killed = run_with("killed", 999999999);
  fs::path running = run_with("running", ::getpid());
  std::vector<fs::path> removed = hooks::remove_stale_carried(store_);
  EXPECT_EQ(removed.size(), 2u);
  EXPECT_FALSE(fs::exists(killed / ".claude.json"));
  EXPECT_FALSE(fs::exists(killed / ".claude/settings.json"));
  EXPECT_TRUE(fs::exists(killed / ".claude/projects/p/s.jsonl")) << "session data is the run's";
  EXPECT_FALSE(fs::exists(killed.string() + ".carried")) << "the list goes with what it listed";
  EXPECT_TRUE(fs::exists(running / ".claude.json")) << "a running run keeps its HOME as it is";
  EXPECT_TRUE(fs::exists(running.string() + ".carried"));
}

TEST_F(HomeLeftoversTest, AResumedRunsOwnHomeIsCleanedToo) {
  run_with("r", 999999999);
  fs::path resumed = run_with("r", 999999999, "1-2");
  hooks::remove_stale_carried(store_);
  EXPECT_FALSE(fs::exists(resumed / ".claude.json"));
  EXPECT_TRUE(fs::exists(resumed / ".claude/projects/p/s.jsonl"));
}

TEST_F(HomeLeftoversTest, AFinishedHomeIsForgottenAndAListNeverLeavesItsHome) {
  fs::path home = run_with("done", 999999999);
  hooks::forget_carried(home);
  EXPECT_FALSE(fs::exists(home.string() + ".carried"));
  EXPECT_TRUE(hooks::remove_stale_carried(store_).empty()) << "nothing listed, nothing removed";
  EXPECT_TRUE(fs::exists(home / ".claude.json"));

  // A list someone else wrote: names that leave the HOME are not followed.
  testing_support::write_file(temp_ / "store/outside.txt", "keep");
  testing_support::write_file(home.string() + ".carried",
                              "../../outside.txt\n/etc/hostname\n.claude.json\n");
  hooks::remove_stale_carried(store_);
  EXPECT_TRUE(fs::exists(temp_ / "store/outside.txt"));
  EXPECT_FALSE(fs::exists(home / ".claude.json"));
  // record_carried never writes such a name.
  hooks::record_carried(home, {"../x", "/abs", "ok/file"});
  EXPECT_EQ(testing_support::read_file(home.string() + ".carried"), "ok/file\n");
}

}  // namespace
