// A workspace that is a git checkout: its `.git` is the agent's to write like any other
// file of the workspace, and nothing the store relies on may be in it. The call from
// issue 31: one failing Bash call empties the checkout's pack files and deletes the
// sources; the rollback puts every file back.
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class CheckoutPacksTest : public ::testing::Test {
 protected:
  CheckoutPacksTest() {
    fs::create_directories(ws_);
    // No helper started behind the test's back: no daemon, no maintenance.
    write_file(config_, "watch:\n  daemon: off\nmaintenance:\n  auto: false\n");
  }

  CommandResult shadowbox(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN,   "--workspace", ws_.string(),    "--store",
                                     store_.string(), "--config",    config_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(const std::vector<std::string>& args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  void sh(const std::string& script, int expected_exit = 0) const {
    CommandResult r = run_command({"sh", "-c", script}, ws_,
                                  {"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"});
    EXPECT_EQ(r.exit_code, expected_exit) << script << ": " << r.err;
  }

  testing_support::TempDir temp_{"checkout-packs"};
  fs::path ws_ = temp_.path() / "ws";
  fs::path store_ = temp_.path() / "store";
  fs::path config_ = temp_.path() / "config.yaml";
};

TEST_F(CheckoutPacksTest, ARollbackRestoresEveryFileAfterTheCallEmptiedTheCheckoutsPacks) {
  for (int i = 0; i < 40; ++i) {
    write_file(ws_ / ("src/d" + std::to_string(i % 4) + "/f" + std::to_string(i) + ".c"),
               "int f" + std::to_string(i) + "() { return " + std::to_string(i) + "; }\n");
  }
  write_file(ws_ / "README", "a checkout\n");
  // Past the file clock's tick, so that the index git writes vouches for the files.
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  sh("git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm one"
     " && git gc -q");
  testing_support::Manifest before = testing_support::take_manifest(ws_);

  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "call_1", "--tool-name", "Bash"});
  // The agent's call.
  sh("chmod u+w .git/objects/pack/*.pack; truncate -s0 .git/objects/pack/*.pack; rm -rf src;"
     " exit 1",
     1);
  ASSERT_FALSE(fs::exists(ws_ / "src"));

  Poco::JSON::Parser parser;
  auto rolled = parser.parse(ok({"--json", "rollback", "call_1", "--result", "exit 1"}))
                    .extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(rolled->getValue<std::string>("outcome"), "rolled_back");
  testing_support::Manifest after = testing_support::take_manifest(ws_);
  EXPECT_TRUE(after == before) << testing_support::describe_difference(before, after);
}

// The user's repository is only read: two snapshots (the first reads the checkout's
// index and takes blobs from its packs; the second sees a change) leave every file of
// `.git` as it was — its packs' mtimes included, which libgit2 would freshen were they
// in the store's object database — and add none.
TEST_F(CheckoutPacksTest, SnapshotsLeaveTheUsersRepositoryAsItWas) {
  for (int i = 0; i < 300; ++i) {
    write_file(ws_ / ("src/f" + std::to_string(i) + ".c"), "int f" + std::to_string(i) + ";\n");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  sh("git init -q && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm one"
     " && git gc -q");
  auto files = [&] {
    std::map<std::string, std::pair<std::uintmax_t, std::int64_t>> out;
    for (fs::recursive_directory_iterator it(ws_ / ".git"), end; it != end; ++it) {
      struct stat st {};
      if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      out[it->path().string()] = {static_cast<std::uintmax_t>(st.st_size),
                                  st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec};
    }
    return out;
  };
  auto before = files();
  ASSERT_GT(before.size(), 2u);
  ok({"snapshot"});
  write_file(ws_ / "src/f1.c", "changed\n");
  ok({"snapshot"});
  auto after = files();
  for (const auto& [file, stat] : after) {
    if (before.count(file) == 0) ADD_FAILURE() << "added: " << file;
  }
  for (const auto& [file, stat] : before) {
    auto found = after.find(file);
    if (found == after.end()) {
      ADD_FAILURE() << "gone: " << file;
    } else if (found->second != stat) {
      ADD_FAILURE() << "touched: " << file;
    }
  }
}

}  // namespace
