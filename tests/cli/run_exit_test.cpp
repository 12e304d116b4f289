// The end of `shadowbox run`: it returns as soon as its agent has ended, whatever the
// size of the store — the store's upkeep (packing what the run left loose, the
// retention limits: commands_test's RetentionRunsItselfWhenARunEnds) is a detached
// `shadowbox maintenance` — and no maintenance rewrites the store's large pack to fold
// in a few objects.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

// A pack file as a reader finds it: rewritten, it has another name, inode or size. (Its
// mtime is no witness: libgit2 freshens a pack that holds an object written again.)
struct PackIdentity {
  std::string name;
  ino_t inode = 0;
  off_t size = 0;

  bool operator==(const PackIdentity& o) const {
    return name == o.name && inode == o.inode && size == o.size;
  }
};

std::ostream& operator<<(std::ostream& out, const PackIdentity& p) {
  return out << p.name << " (inode " << p.inode << ", " << p.size << " bytes)";
}

// Whether pred holds within limit (asked every 20 ms).
template <typename Pred>
bool eventually(Pred pred, std::chrono::seconds limit = std::chrono::seconds(30)) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

class RunExitTest : public ::testing::Test {
 protected:
  RunExitTest() {
    fs::create_directories(ws_);
    // Maintenance on (the default); no watch daemon started behind the test's back.
    write_file(config_, "watch:\n  daemon: off\n");
  }

  CommandResult shadowbox(const std::vector<std::string>& args,
                          std::chrono::seconds timeout = std::chrono::seconds(60)) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"}, "", timeout);
  }
  std::string ok(const std::vector<std::string>& args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }

  fs::path pack_dir() const { return store_ / "repo.git" / "objects" / "pack"; }

  // The store's packs.
  std::vector<PackIdentity> packs() const {
    std::vector<PackIdentity> out;
    boost::system::error_code ec;
    for (fs::directory_iterator it(pack_dir(), ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() != ".pack") continue;
      struct stat st {};
      if (::stat(it->path().c_str(), &st) != 0) continue;
      out.push_back({it->path().filename().string(), st.st_ino, st.st_size});
    }
    std::sort(out.begin(), out.end(),
              [](const PackIdentity& a, const PackIdentity& b) { return a.name < b.name; });
    return out;
  }

  // How many loose objects the store has.
  std::size_t loose_objects() const {
    std::size_t n = 0;
    boost::system::error_code ec;
    fs::directory_iterator end;
    for (fs::directory_iterator dir(store_ / "repo.git" / "objects", ec); !ec && dir != end;
         dir.increment(ec)) {
      if (dir->path().filename().string().size() != 2) continue;
      // A fan-out directory a maintenance removes (emptied) holds none.
      boost::system::error_code inner;
      for (fs::directory_iterator it(dir->path(), inner); !inner && it != end;
           it.increment(inner)) {
        ++n;
      }
    }
    return n;
  }

  // A store whose checkpoints are in one pack of some megabytes (files that do not
  // compress); returns it.
  PackIdentity store_with_a_large_pack() {
    std::mt19937 random(34);
    for (int i = 0; i < 40; ++i) {
      std::string content(64 * 1024, '\0');
      for (char& c : content) c = static_cast<char>(random());
      write_file(ws_ / "data" / ("blob" + std::to_string(i)), content);
    }
    ok({"snapshot", "--tag", "large"});
    ok({"maintenance"});
    std::vector<PackIdentity> one = packs();
    EXPECT_EQ(one.size(), 1u);
    EXPECT_EQ(loose_objects(), 0u);
    boost::system::error_code ec;
    EXPECT_GT(fs::file_size(pack_dir() / one.at(0).name, ec), 2u << 20);
    return one.at(0);
  }

  testing_support::TempDir temp_{"run-exit"};
  fs::path ws_ = temp_.path() / "ws";
  fs::path store_ = temp_.path() / "store";
  fs::path config_ = temp_.path() / "config.yaml";
};

// The store's maintenance lock, held by the test (as a long maintenance would hold it).
class HeldMaintenanceLock {
 public:
  explicit HeldMaintenanceLock(const fs::path& store) {
    fd_ = ::open(fsnap::layout::maintenance_lock_file(store).c_str(), O_RDWR | O_CREAT | O_CLOEXEC,
                 0600);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::flock(fd_, LOCK_EX), 0);
  }
  ~HeldMaintenanceLock() { release(); }
  void release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

TEST_F(RunExitTest, ARunEndsWithoutWaitingForTheStoresUpkeepAndTheLargePackStaysAsItIs) {
  PackIdentity large = store_with_a_large_pack();
  // A maintenance that takes long holds the lock: the run does not wait for it.
  HeldMaintenanceLock held(store_);
  CommandResult run = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "r1", "--", "sh", "-c",
                                 "echo changed > data/blob0 && echo new > new.txt"},
                                std::chrono::seconds(30));
  ASSERT_FALSE(run.timed_out) << "run waited for the store's maintenance";
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(packs(), std::vector<PackIdentity>{large});
  EXPECT_GT(loose_objects(), 0u) << "what the run wrote is packed later";
  // Later, by itself: what the run left loose goes into a pack of its own, and the
  // large pack is not rewritten to take it in.
  held.release();
  EXPECT_TRUE(eventually([&] { return loose_objects() == 0; }));
  std::vector<PackIdentity> after = packs();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_NE(std::find(after.begin(), after.end(), large), after.end())
      << "the large pack was rewritten: " << after.at(0) << ", " << after.at(1);
  // Everything reads back: the run's changes and what came before them.
  EXPECT_EQ(shadowbox({"diff", "large", "r1"}).exit_code, 0);
  CommandResult fsck = run_command(
      {"git", "--git-dir", (store_ / "repo.git").string(), "fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(fsck.exit_code, 0) << fsck.out << fsck.err;
}

TEST_F(RunExitTest, AMaintenanceWithNothingToGainLeavesTheLargePackAlone) {
  PackIdentity large = store_with_a_large_pack();
  // A few objects loose: packed into a pack of their own.
  write_file(ws_ / "small.txt", "a few objects\n");
  ok({"snapshot"});
  ASSERT_GT(loose_objects(), 0u);
  ok({"maintenance"});
  EXPECT_EQ(loose_objects(), 0u);
  std::vector<PackIdentity> two = packs();
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(std::find(two.begin(), two.end(), large), two.end()) << "rewritten to take in a few";
  // Nothing loose, no pack too many: nothing is written at all.
  ok({"maintenance"});
  EXPECT_EQ(packs(), two);
}

}  // namespace
