// run.preserve (checkpoint frequency, docs/conformance/ADAPTER_STATE.md): when
// `shadowbox run` preserves the agent's session data. The agent is a shell script that
// writes a transcript into its HOME, then waits for the test to look at the store before
// it exits.
#include <sys/wait.h>

#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

// Writes a transcript into its HOME, says so, and exits once the test says go.
constexpr const char* kAgent =
    "mkdir -p \"$HOME/.claude/projects/p\" && echo '{\"turn\":1}' > "
    "\"$HOME/.claude/projects/p/s.jsonl\" && echo up > written; "
    "while [ ! -e go ]; do sleep 0.05; done";

class PreserveStrategyTest : public ::testing::Test {
 protected:
  PreserveStrategyTest() { fs::create_directories(ws_); }

  std::vector<std::string> argv(const std::string& config, std::vector<std::string> args) const {
    testing_support::write_file(temp_ / "config.yaml", config);
    std::vector<std::string> out = {SHADOWBOX_BIN,
                                    "--workspace",
                                    ws_.string(),
                                    "--store",
                                    store_.string(),
                                    "--config",
                                    (temp_ / "config.yaml").string()};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  }
  std::vector<std::string> env() const {
    return {"HOME=" + (temp_ / "user").string(), "PATH=/usr/bin:/bin",
            "SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1"};
  }
  // Starts `run` with kAgent in the background and waits until it wrote its transcript.
  pid_t start(const std::string& config, const std::string& run) {
    std::vector<std::string> command =
        argv(config, {"run", "--agent", "claude-sdk", "--run-id", run, "--", "sh", "-c", kAgent});
    std::vector<std::string> environment = env();
    std::vector<char*> args;
    args.reserve(command.size() + 1);
    for (const std::string& a : command) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      for (const std::string& e : environment) ::putenv(const_cast<char*>(e.c_str()));
      if (::chdir(ws_.c_str()) == 0) ::execv(args[0], args.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200 && !fs::exists(ws_ / "written"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(fs::exists(ws_ / "written")) << "the agent never started";
    return pid;
  }
  // Lets the agent exit, waits for `run` and returns its exit status.
  int finish(pid_t pid) {
    testing_support::write_file(ws_ / "go", "");
    int status = 0;
    ::waitpid(pid, &status, 0);
    fs::remove(ws_ / "go");
    fs::remove(ws_ / "written");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Whether the run's preserved HOME holds the transcript.
  bool preserved(const std::string& run) const {
    return run_command({"git", "--git-dir", (store_ / "repo.git").string(), "cat-file", "-e",
                        "refs/shadowbox/home/" + run + ":.claude/projects/p/s.jsonl"},
                       temp_.path())
               .exit_code == 0;
  }
  // Polls preserved(run) for up to seconds.
  bool preserved_within(const std::string& run, int seconds) const {
    for (int i = 0; i < seconds * 10; ++i) {
      if (preserved(run)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return preserved(run);
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
};

TEST_F(PreserveStrategyTest, OnToolUseKeepsUpWhileTheAgentRuns) {
  pid_t pid = start("", "tool");
  EXPECT_TRUE(preserved_within("tool", 10)) << "the default keeps up between tool calls too";
  EXPECT_EQ(finish(pid), 0);
}

TEST_F(PreserveStrategyTest, OnCompleteWaitsForTheAgentsEnd) {
  pid_t pid = start("run:\n  preserve: on_complete\n", "done");
  // On the default strategy it would be there within about a second (the test above).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(preserved("done")) << "preserved before the agent ended";
  EXPECT_EQ(finish(pid), 0);
  EXPECT_TRUE(preserved("done"));
}

TEST_F(PreserveStrategyTest, PeriodicPreservesOnItsInterval) {
  pid_t pid = start("run:\n  preserve: periodic\n  preserve_interval: 1s\n", "tick");
  EXPECT_TRUE(preserved_within("tick", 10));
  EXPECT_EQ(finish(pid), 0);
}

TEST_F(PreserveStrategyTest, OnDemandPreservesOnlyWhenAsked) {
  const std::string config = "run:\n  preserve: on_demand\n";
  pid_t pid = start(config, "ask");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_FALSE(preserved("ask"));
  // Asked while the agent runs.
  CommandResult asked = run_command(argv(config, {"--json", "preserve", "ask"}), ws_, env());
  ASSERT_EQ(asked.exit_code, 0) << asked.err;
  EXPECT_TRUE(preserved("ask"));
  Poco::JSON::Parser parser;
  auto out = parser.parse(asked.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(out->getValue<std::string>("run"), "ask");
  EXPECT_EQ(out->getValue<std::string>("tree").size(), 40u);
  EXPECT_EQ(finish(pid), 0);

  // Not even at the end; and a run shadowbox did not start has no HOME to preserve.
  pid = start(config, "ask2");
  EXPECT_EQ(finish(pid), 0);
  EXPECT_FALSE(preserved("ask2"));
  CommandResult none = run_command(argv(config, {"preserve", "no-such-run"}), ws_, env());
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("has no agent HOME"), std::string::npos) << none.err;
  CommandResult bad = run_command(argv("run:\n  preserve: sometimes\n", {"runs"}), ws_, env());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("run.preserve"), std::string::npos) << bad.err;
}

}  // namespace
