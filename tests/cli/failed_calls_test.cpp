// What became of a failed tool call, as the history says it: the workspace as the call
// left it is a checkpoint of its own (failed:<id>, post:<id>) whether it was rolled back,
// refused or kept, and `log` and `show` say which, and why.
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

class FailedCallsTest : public ::testing::Test {
 protected:
  FailedCallsTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
  }

  CommandResult shadowbox(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    if (!config_.empty()) {
      argv.push_back("--config");
      argv.push_back(config_.string());
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"});
  }
  std::string ok(std::vector<std::string> args) const {
    CommandResult r = shadowbox(args);
    EXPECT_EQ(r.exit_code, 0) << "shadowbox " << args.at(0) << ": " << r.err;
    return r.out;
  }
  // The line of `log --checkpoints` for the checkpoint of phase with call id call ("" if
  // none).
  std::string log_line(const std::string& phase, const std::string& call) const {
    std::string log = ok({"log", "--checkpoints"});
    std::string needle = "  " + phase + " Bash " + call + " ";
    std::size_t at = log.find(needle);
    if (at == std::string::npos) return "";
    std::size_t start = log.rfind('\n', at);
    start = start == std::string::npos ? 0 : start + 1;
    return log.substr(start, log.find('\n', at) - start);
  }
  // The `id` of the checkpoint ref names, through `show --json`.
  std::string id_of(const std::string& ref) const {
    Poco::JSON::Parser parser;
    return parser.parse(ok({"--json", "show", ref}))
        .extract<Poco::JSON::Object::Ptr>()
        ->getValue<std::string>("id");
  }
  // The `rollback` object of the newest record of call in `log --json` (null if none).
  Poco::JSON::Object::Ptr logged_rollback(const std::string& call) const {
    Poco::JSON::Parser parser;
    auto log = parser.parse(ok({"--json", "log"})).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < log->size(); ++i) {
      Poco::JSON::Object::Ptr c = log->getObject(static_cast<unsigned>(i));
      if (c->getValue<std::string>("tool_call_id") == call && !c->isNull("rollback")) {
        return c->getObject("rollback");
      }
    }
    return nullptr;
  }
  // A Bash call that writes junk.txt and changes a.txt, then fails.
  void failing_call(const std::string& call) const {
    ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", call, "--tool-name", "Bash"});
    write_file(ws_ / "junk.txt", "junk\n");
    write_file(ws_ / "a.txt", "changed by " + call + "\n");
  }
  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path config_;
};

TEST_F(FailedCallsTest, ARolledBackCallKeepsTheStateItLeftAsACheckpointAndSaysSo) {
  failing_call("c1");
  std::string rolled = ok({"rollback", "c1", "--result", "Exit code 1"});
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  EXPECT_TRUE(contains(rolled, "(failed:c1)")) << rolled;

  // The workspace as the call left it: failed:c1 and post:c1 name it.
  EXPECT_EQ(ok({"diff", "--name-status", "pre:c1", "failed:c1"}), "M  a.txt\nA  junk.txt\n");
  EXPECT_EQ(ok({"diff", "--name-status", "pre:c1", "post:c1"}), "M  a.txt\nA  junk.txt\n");
  EXPECT_EQ(id_of("failed:c1"), id_of("post:c1"));
  std::string failed = ok({"show", "failed:c1"});
  EXPECT_TRUE(contains(failed, "phase        safety\n")) << failed;
  EXPECT_TRUE(contains(failed, "tool call    c1\n")) << failed;
  EXPECT_TRUE(contains(failed, "the workspace as the failed call left it")) << failed;
  // Restoring it brings the failed state back.
  ok({"restore", "failed:c1"});
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "changed by c1\n");

  // log and show say it was rolled back.
  std::string end = log_line("checkpoint", "c1");
  EXPECT_TRUE(contains(end, " failed ")) << end;
  EXPECT_TRUE(contains(end, ", rolled back: Exit code 1")) << end;
  EXPECT_TRUE(contains(log_line("pre_tool", "c1"), ", rolled back: Exit code 1"));
  std::string shown = ok({"show", "pre:c1"});
  EXPECT_TRUE(contains(shown,
                       "rollback     rolled back: the workspace as the call left it is "
                       "failed:c1\n"))
      << shown;
  Poco::JSON::Object::Ptr fate = logged_rollback("c1");
  ASSERT_FALSE(fate.isNull());
  EXPECT_EQ(fate->getValue<std::string>("outcome"), "rolled_back");
  EXPECT_TRUE(fate->isNull("reason"));
}

TEST_F(FailedCallsTest, ARefusedRollbackSaysWhyAndItsStateIsTheFailedOne) {
  // c3, a shell command beside c2: what changed while both ran may be either's.
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c2", "--tool-name", "Bash"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "c3", "--tool-name", "Bash"});
  write_file(ws_ / "junk.txt", "junk\n");
  write_file(ws_ / "a.txt", "changed by c2 or c3\n");
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "c3"});
  CommandResult r = shadowbox({"rollback", "c2", "--result", "Exit code 1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "changed by c2 or c3\n");

  EXPECT_EQ(ok({"diff", "--name-status", "pre:c2", "failed:c2"}), "M  a.txt\nA  junk.txt\n");
  EXPECT_EQ(id_of("failed:c2"), id_of("post:c2"));

  std::string end = log_line("post_tool", "c2");
  EXPECT_TRUE(contains(end,
                       ", rollback refused (nothing changed since this call started is its "
                       "alone: a.txt (changed while Bash c3 ran too)"))
      << end;
  EXPECT_TRUE(contains(end, "): Exit code 1")) << end;
  std::string shown = ok({"show", "failed:c2"});
  EXPECT_TRUE(contains(shown, "phase        post_tool\n")) << shown;
  EXPECT_TRUE(contains(shown,
                       "rollback     rollback refused (nothing changed since this call started "
                       "is its alone: a.txt (changed while Bash c3 ran too)"))
      << shown;
  EXPECT_TRUE(contains(shown, "junk.txt (changed while Bash c3 ran too))\n"))
      << "the whole reason: " << shown;
  Poco::JSON::Object::Ptr fate = logged_rollback("c2");
  ASSERT_FALSE(fate.isNull());
  EXPECT_EQ(fate->getValue<std::string>("outcome"), "refused");
  EXPECT_TRUE(contains(fate->getValue<std::string>("reason"), "rollback refused: nothing"));
  EXPECT_EQ(fate->getArray("kept")->size(), 2u);
}

TEST_F(FailedCallsTest, AFailureKeptByConfigurationSaysSo) {
  config_ = temp_ / "keep.yaml";
  write_file(config_, "hooks:\n  keep_failed_tools: [Bash]\n");
  failing_call("c3");
  ok({"rollback", "c3", "--result", "Exit code 1"});
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "changed by c3\n");

  EXPECT_EQ(ok({"diff", "--name-status", "pre:c3", "failed:c3"}), "M  a.txt\nA  junk.txt\n");
  EXPECT_EQ(ok({"diff", "--name-status", "pre:c3", "post:c3"}), "M  a.txt\nA  junk.txt\n");
  std::string end = log_line("post_tool", "c3");
  EXPECT_TRUE(contains(end, ", kept (not rolled back by configuration): Exit code 1")) << end;
  std::string shown = ok({"show", "post:c3"});
  EXPECT_TRUE(contains(shown, "rollback     kept (not rolled back by configuration)\n")) << shown;
  Poco::JSON::Object::Ptr fate = logged_rollback("c3");
  ASSERT_FALSE(fate.isNull());
  EXPECT_EQ(fate->getValue<std::string>("outcome"), "kept");
}

TEST_F(FailedCallsTest, FailedNamesOnlyACallThatFailed) {
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "ok1", "--tool-name", "Bash"});
  ok({"snapshot", "--phase", "post_tool", "--tool-call-id", "ok1", "--result", "fine"});
  ok({"snapshot", "--phase", "pre_tool", "--tool-call-id", "open1", "--tool-name", "Bash"});
  auto expect_error = [&](const std::string& ref, const std::string& says) {
    CommandResult r = shadowbox({"show", ref});
    EXPECT_EQ(r.exit_code, 1) << ref;
    EXPECT_TRUE(contains(r.err, says)) << ref << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  };
  expect_error("failed:ok1", "tool call 'ok1' did not fail (the workspace it left is post:ok1)");
  expect_error("failed:open1", "tool call 'open1' has not ended");
  expect_error("failed:nope", "no tool call 'nope'");
  expect_error("post:open1", "no post_tool checkpoint for tool call 'open1'");
  CommandResult empty = shadowbox({"diff", "pre:ok1", "failed:"});
  EXPECT_NE(empty.exit_code, 0);
  EXPECT_TRUE(contains(empty.err, "'failed:' names no tool call id")) << empty.err;
}

}  // namespace
