// Whatever the user's umask, nothing in a store is open to group or others — the
// repository (objects, packs, refs, logs), the run folders, the agent's HOME — while
// what shadowbox puts into the workspace (a restore's files and directories) and what
// the agent creates there get exactly the user's umask.
#include <sys/stat.h>

#include <cstdio>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::TempDir;
using testing_support::write_file;

class StoreModesTest : public ::testing::Test {
 protected:
  StoreModesTest() : ws_(temp_ / "ws"), store_(temp_ / "store") {
    fs::create_directories(ws_);
    write_file(config_, "watch:\n  daemon: off\nmaintenance:\n  auto: false\n");
  }
  ~StoreModesTest() override { ::umask(saved_); }

  // The umask the commands run with (they inherit this process's).
  void user_umask(mode_t mask) { ::umask(mask); }

  std::string ok(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r =
        testing_support::run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }

  // The store's tree with every kind of file in it: a repository with loose objects,
  // packs and refs, a run with its folder and HOME, a gc's rewritten history.
  void use_the_store() {
    write_file(ws_ / "a.txt", "a");
    write_file(ws_ / "dir" / "b.txt", "b");
    ok({"init"});
    ok({"snapshot", "--tag", "one"});
    write_file(ws_ / "a.txt", "a2");
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c1", "--run", "s"});
    ok({"run", "--agent", "claude-sdk", "--run-id", "r", "--", "sh", "-c",
        "echo agent > agent.txt; mkdir agent-dir"});
    ok({"maintenance"});
    ok({"gc"});
  }

  // The mode of path (permission bits).
  static mode_t mode(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  // Every entry under the store that group or others may use at all, with its mode.
  std::vector<std::string> open_to_others() const {
    std::vector<std::string> out;
    auto check = [&](const fs::path& p) {
      struct stat st {};
      if (::lstat(p.c_str(), &st) == 0 && !S_ISLNK(st.st_mode) && (st.st_mode & 077) != 0) {
        char octal[8];
        std::snprintf(octal, sizeof octal, "%04o", st.st_mode & 07777);
        out.push_back(p.string() + " " + octal);
      }
    };
    check(store_);
    for (fs::recursive_directory_iterator it(store_), end; it != end; ++it) check(it->path());
    return out;
  }

  TempDir temp_;
  fs::path ws_;
  fs::path store_;
  fs::path config_ = temp_ / "config.yaml";
  mode_t saved_ = ::umask(022);
};

TEST_F(StoreModesTest, UnderUmask000TheStoreStaysPrivateAndTheWorkspaceGetsTheUsersModes) {
  user_umask(0);
  use_the_store();
  EXPECT_EQ(open_to_others(), std::vector<std::string>{});
  // The agent created its files as the user would.
  EXPECT_EQ(mode(ws_ / "agent.txt"), 0666u);
  EXPECT_EQ(mode(ws_ / "agent-dir"), 0777u);

  // What a restore creates, too; and the store is as private afterwards.
  fs::remove(ws_ / "a.txt");
  fs::remove_all(ws_ / "dir");
  ok({"restore", "one"});
  EXPECT_EQ(mode(ws_ / "a.txt"), 0666u);
  EXPECT_EQ(mode(ws_ / "dir"), 0777u);
  EXPECT_EQ(mode(ws_ / "dir" / "b.txt"), 0666u);
  EXPECT_EQ(open_to_others(), std::vector<std::string>{});
}

TEST_F(StoreModesTest, ARestoreFollowsTheUsersUmaskExactly) {
  user_umask(027);
  use_the_store();
  EXPECT_EQ(open_to_others(), std::vector<std::string>{});
  EXPECT_EQ(mode(ws_ / "agent.txt"), 0640u);
  fs::remove(ws_ / "a.txt");
  fs::remove_all(ws_ / "dir");
  ok({"restore", "one"});
  EXPECT_EQ(mode(ws_ / "a.txt"), 0640u);
  EXPECT_EQ(mode(ws_ / "dir"), 0750u);
  EXPECT_EQ(mode(ws_ / "dir" / "b.txt"), 0640u);
}

}  // namespace
