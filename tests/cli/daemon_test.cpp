// `shadowbox daemon` and the commands that use the watch daemon: the first capture
// starts one, the next ones are served by it and are exactly what a scan gives —
// also after it was killed — and `watch.daemon: off` keeps it away.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;
using testing_support::write_file;

Poco::JSON::Object::Ptr object_of(const std::string& text) {
  Poco::JSON::Parser parser;
  return parser.parse(text).extract<Poco::JSON::Object::Ptr>();
}

class DaemonCliTest : public ::testing::Test {
 protected:
  DaemonCliTest() : ws_(temp_ / "ws"), store_(temp_ / "store") {
    fs::create_directories(ws_);
    for (int d = 0; d < 8; ++d) {
      for (int f = 0; f < 10; ++f) write("d" + std::to_string(d) + "/f" + std::to_string(f), "x");
    }
  }
  ~DaemonCliTest() override { shadowbox({"daemon", "stop"}); }

  void write(const std::string& rel, const std::string& data) { write_file(ws_ / rel, data); }

  CommandResult shadowbox(std::vector<std::string> args, const fs::path& store = {}) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     (store.empty() ? store_ : store).string()};
    if (!config_.empty()) {
      write_file(temp_ / "config.yaml", config_);
      argv.push_back("--config");
      argv.push_back((temp_ / "config.yaml").string());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }

  std::string ok(std::vector<std::string> args, const fs::path& store = {}) {
    CommandResult r = shadowbox(args, store);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }

  // The daemon's status (JSON).
  Poco::JSON::Object::Ptr status() { return object_of(ok({"--json", "daemon", "status"})); }

  // Waits until a daemon answers; false if none does within 5 s.
  bool daemon_up() {
    for (int i = 0; i < 250; ++i) {
      if (status()->getValue<bool>("running")) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // The tree of a snapshot taken through the daemon's store, and of one taken by a scan
  // into a store of its own.
  std::string snapshot_tree(const fs::path& store = {}) {
    return object_of(ok({"--json", "snapshot"}, store))->getValue<std::string>("tree");
  }
  std::string scanned_tree() { return snapshot_tree(temp_ / ("scan" + std::to_string(++scans_))); }

  TempDir temp_;
  fs::path ws_;
  fs::path store_;
  std::string config_;
  int scans_ = 0;
};

TEST_F(DaemonCliTest, TheFirstSnapshotStartsTheDaemonAndTheNextAreServed) {
  ok({"init"});
  EXPECT_FALSE(status()->getValue<bool>("running"));
  EXPECT_NE(ok({"daemon", "status"}).find("not running"), std::string::npos);
  snapshot_tree();
  ASSERT_TRUE(daemon_up());
  struct stat st;
  ASSERT_EQ(::stat((store_ / "watch.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  write("d3/f1", "changed");
  std::string served = snapshot_tree();
  Poco::JSON::Object::Ptr s = status();
  EXPECT_GE(s->getValue<int>("captures"), 1);
  EXPECT_EQ(s->getValue<int>("watched_directories"), 9);
  EXPECT_GT(s->getValue<Poco::Int64>("memory_bytes"), 0);
  EXPECT_EQ(served, scanned_tree());
  std::string human = ok({"daemon", "status"});
  EXPECT_NE(human.find("running, pid " + std::to_string(s->getValue<int>("pid"))),
            std::string::npos)
      << human;
  EXPECT_NE(human.find("MiB resident"), std::string::npos) << human;

  EXPECT_NE(ok({"daemon", "stop"}).find("stopped the watch daemon"), std::string::npos);
  EXPECT_FALSE(status()->getValue<bool>("running"));
  EXPECT_NE(ok({"daemon", "stop"}).find("no watch daemon was running"), std::string::npos);
}

TEST_F(DaemonCliTest, AKilledDaemonCostsSpeedNotCorrectness) {
  ok({"init"});
  snapshot_tree();
  ASSERT_TRUE(daemon_up());
  ASSERT_EQ(::kill(status()->getValue<int>("pid"), SIGKILL), 0);
  write("d1/new", "n");
  fs::remove_all(ws_ / "d2");
  EXPECT_EQ(snapshot_tree(), scanned_tree()) << "the command scans when the daemon is gone";
  ASSERT_TRUE(daemon_up()) << "and starts another";
  write("d4/f4", "again");
  EXPECT_EQ(snapshot_tree(), scanned_tree());
  EXPECT_GE(status()->getValue<int>("captures"), 1);
}

TEST_F(DaemonCliTest, ADaemonThatDiesAtItsStartIsNotStartedByEveryCommand) {
  ok({"init"});
  // Something holds the daemon's lock and serves nothing: every daemon started gives up
  // (after waiting for the lock) and exits.
  int fd = ::open((store_ / "watch.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  for (int i = 0; i < 6; ++i) {
    write("d1/f" + std::to_string(i), "change " + std::to_string(i));
    EXPECT_EQ(snapshot_tree(), scanned_tree()) << "the commands scan";
  }
  auto exits = [&] {
    std::string log = testing_support::read_file(store_ / "watch.log");
    std::size_t n = 0;
    for (std::size_t at = log.find("exited: another daemon is running"); at != std::string::npos;
         at = log.find("exited: another daemon is running", at + 1)) {
      ++n;
    }
    return n;
  };
  // Each waits up to 2 s for the lock before it gives up.
  for (int i = 0; i < 100 && exits() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Any other daemon started would have given up by now too.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_EQ(exits(), 3u) << "three daemons started in the minute, not one per command";
  // A minute later (the record says so), the lock free again: a daemon starts and serves.
  write_file(store_ / "watch.spawns", "1\n2\n3\n");
  ::close(fd);
  snapshot_tree();
  EXPECT_TRUE(daemon_up());
}

TEST_F(DaemonCliTest, RestoreAndDiffUseTheDaemonAndStayExact) {
  ok({"init"});
  ok({"snapshot", "--tag", "base"});
  ASSERT_TRUE(daemon_up());
  write("d5/f5", "edited");
  write("d6/extra", "new");
  EXPECT_EQ(ok({"diff", "--name-status", "base"}), "M  d5/f5\nA  d6/extra\n");
  ok({"restore", "base"});
  EXPECT_EQ(ok({"diff", "--name-status", "base"}), "");
  EXPECT_FALSE(fs::exists(ws_ / "d6/extra"));
  EXPECT_GE(status()->getValue<int>("captures"), 4);
}

TEST_F(DaemonCliTest, WatchDaemonOffKeepsItAway) {
  config_ = "watch: {daemon: off}\n";
  ok({"init"});
  write("d0/f0", "1");
  ok({"snapshot"});
  ok({"snapshot"});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Poco::JSON::Object::Ptr s = status();
  EXPECT_FALSE(s->getValue<bool>("running"));
  EXPECT_FALSE(s->getValue<bool>("enabled"));
  EXPECT_NE(ok({"daemon", "status"}).find("watch.daemon is off"), std::string::npos);
}

TEST_F(DaemonCliTest, DaemonCommandNeedsAStoreAndAKnownAction) {
  CommandResult r = shadowbox({"daemon", "status"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("shadowbox init"), std::string::npos) << r.err;
  ok({"init"});
  r = shadowbox({"daemon", "restart"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected status, stop or serve"), std::string::npos) << r.err;
}

}  // namespace
