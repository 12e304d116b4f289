// Two runs on one workspace: a second supervised run is refused while the first lives,
// and a rollback in one run refuses to undo what another run changed since its call
// started (a rollback of run A used to delete run B's finished work).
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

class ConcurrentRunsTest : public ::testing::Test {
 protected:
  ConcurrentRunsTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
  }

  CommandResult shadowbox(std::vector<std::string> args, const fs::path& store) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  CommandResult shadowbox(std::vector<std::string> args) const {
    return shadowbox(std::move(args), store_);
  }
  void ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    ASSERT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(ConcurrentRunsTest, ARollbackDoesNotUndoAnotherRunsFinishedWork) {
  ok({"snapshot", "--run", "A", "--phase", "pre_tool", "--tool-call-id", "a1", "--tool-name",
      "Bash"});
  // Run B, on the same workspace, makes and records three calls.
  for (const char* id : {"b1", "b2", "b3"}) {
    ok({"snapshot", "--run", "B", "--phase", "pre_tool", "--tool-call-id", id, "--tool-name",
        "Write"});
    write_file(ws_ / (std::string(id) + ".txt"), "B's work\n");
    ok({"snapshot", "--run", "B", "--phase", "post_tool", "--tool-call-id", id});
  }
  // A's call fails.
  CommandResult r = shadowbox({"--json", "rollback", "a1", "--run", "A", "--result", "exit 1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Poco::JSON::Parser parser;
  auto out = parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(out->getValue<std::string>("outcome"), "refused") << r.out;
  EXPECT_NE(out->getValue<std::string>("reason").find("run B"), std::string::npos) << r.out;
  auto refused_by = out->getArray("refused_by");
  ASSERT_EQ(refused_by->size(), 3u) << r.out;
  EXPECT_EQ(refused_by->getObject(0)->getValue<std::string>("run"), "B");
  for (const char* id : {"b1", "b2", "b3"}) {
    EXPECT_EQ(testing_support::read_file(ws_ / (std::string(id) + ".txt")), "B's work\n") << id;
  }
}

TEST_F(ConcurrentRunsTest, ARunThatChangedNothingSinceDoesNotStandInTheWay) {
  ok({"snapshot", "--run", "B", "--phase", "pre_tool", "--tool-call-id", "b1"});
  ok({"snapshot", "--run", "B", "--phase", "post_tool", "--tool-call-id", "b1"});
  ok({"snapshot", "--run", "A", "--phase", "pre_tool", "--tool-call-id", "a1"});
  // B records a call that changes nothing after A's started.
  ok({"snapshot", "--run", "B", "--phase", "pre_tool", "--tool-call-id", "b2"});
  ok({"snapshot", "--run", "B", "--phase", "post_tool", "--tool-call-id", "b2"});
  fs::remove(ws_ / "a.txt");
  CommandResult r = shadowbox({"--json", "rollback", "a1", "--run", "A"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"rolled_back\""), std::string::npos) << r.out;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
}

TEST_F(ConcurrentRunsTest, ASecondLiveRunOnTheWorkspaceIsRefused) {
  // Run A's agent waits until it is released; B is started meanwhile, from another store
  // too (both name the same directory).
  fs::path started = temp_ / "started";
  fs::path release = temp_ / "release";
  std::string agent = "touch " + started.string() + "; while [ ! -e " + release.string() +
                      " ]; do sleep 0.02; done";
  CommandResult a;
  std::thread first([&] {
    a = shadowbox({"run", "--run-id", "A", "--agent", "claude-sdk", "--", "sh", "-c", agent});
  });
  for (int i = 0; i < 1000 && !fs::exists(started); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(started)) << "run A's agent never started";
  CommandResult b = shadowbox({"run", "--run-id", "B", "--agent", "claude-sdk", "--", "true"});
  CommandResult other_store = shadowbox(
      {"run", "--run-id", "C", "--agent", "claude-sdk", "--", "true"}, temp_ / "other-store");
  // A run inside the workspace, and one on the directory around it, share its files too.
  fs::create_directories(ws_ / "sub");
  testing_support::TempDir stores;  // outside the directory around the workspace
  auto elsewhere = [&](const fs::path& workspace, const std::string& store) {
    return run_command(
        {SHADOWBOX_BIN, "--workspace", workspace.string(), "--store", (stores / store).string(),
         "run", "--run-id", "N", "--agent", "claude-sdk", "--", "true"},
        workspace, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  };
  CommandResult inside = elsewhere(ws_ / "sub", "inside-store");
  CommandResult around = elsewhere(temp_.path(), "around-store");
  write_file(release, "");
  first.join();
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 1) << b.err;
  EXPECT_NE(b.err.find("has a live run already: run 'A'"), std::string::npos) << b.err;
  EXPECT_FALSE(fs::exists(store_ / "runs" / "B")) << "nothing of B was written";
  EXPECT_EQ(other_store.exit_code, 1) << other_store.err;
  EXPECT_NE(other_store.err.find("has a live run already"), std::string::npos) << other_store.err;
  EXPECT_EQ(inside.exit_code, 1) << inside.err;
  EXPECT_NE(inside.err.find("has a live run already"), std::string::npos) << inside.err;
  EXPECT_EQ(around.exit_code, 1) << around.err;
  EXPECT_NE(around.err.find("has a live run already"), std::string::npos) << around.err;
  // Once A has ended, B may run.
  EXPECT_EQ(shadowbox({"run", "--run-id", "B", "--agent", "claude-sdk", "--", "true"}).exit_code,
            0);
}

}  // namespace
