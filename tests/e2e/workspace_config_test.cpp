// A workspace's own .shadowbox.yaml under a real Claude Code run: the agent rewriting
// it mid-run changes nothing of the run — not its rollbacks (an untrusted file never
// loosens), not its limits (the run's hooks read the configuration it started with) —
// for both hook transports.
#include <gtest/gtest.h>

#include "agent_harness.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;

class WorkspaceConfigRunTest : public e2e::ShadowboxTest,
                               public ::testing::WithParamInterface<std::string> {
 protected:
  std::vector<std::string> env() const override {
    std::vector<std::string> env = e2e::claude_env(*server_, temp_ / "user-home");
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    env.push_back("PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin"));
    env.push_back("XDG_CONFIG_HOME=" + (temp_ / "config-home").string());
    return env;
  }
  void start_mock(const std::string& scenario) {
    testing_support::write_file(temp_ / "scenario.json", scenario);
    server_ = std::make_unique<e2e::MockServer>(temp_ / "scenario.json", temp_ / "requests.log");
  }

  std::unique_ptr<e2e::MockServer> server_;
};

TEST_P(WorkspaceConfigRunTest, AnAgentCannotSwitchRollbacksOffMidRun) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  testing_support::write_file(ws_ / "a.txt", "a\n");
  // The transport is a setting that protects neither more nor less: taken untrusted.
  testing_support::write_file(ws_ / ".shadowbox.yaml", "hooks:\n  transport: " + GetParam() + "\n");
  // Loosening (rollbacks off: left out, the file is not trusted) and tightening (one
  // step: it would stop the next call if the run's hooks read the file again).
  std::string loosened = "hooks:\\n  transport: " + GetParam() +
                         "\\n  rollback_on_failure: false\\n  keep_failed_tools: [Bash]\\n"
                         "policy:\\n  max_steps: 1\\n";
  start_mock(R"({"steps":[
      {"tool":"Write","input":{"file_path":")" +
             (ws_ / ".shadowbox.yaml").string() + R"(","content":")" + loosened + R"("}},
      {"tool":"Bash","input":{"command":"rm a.txt; exit 1","description":"x"}},
      {"text":"done"}]})");
  CommandResult r = shadowbox(
      {"run", "--run-id", "r1", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  EXPECT_EQ(r.exit_code, 0) << "not halted: the run's configuration is the one it started with\n"
                            << r.err;
  ASSERT_NE(testing_support::read_file(ws_ / ".shadowbox.yaml").find("rollback_on_failure"),
            std::string::npos)
      << "the agent did rewrite the file";
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n") << "the failed call rolled back";
  // The run's hooks read the configuration it started with.
  std::string pinned = testing_support::read_file(store_ / "runs/r1/config.yaml");
  EXPECT_NE(pinned.find("rollback:\n  on_failure: true"), std::string::npos) << pinned;
}

INSTANTIATE_TEST_SUITE_P(Transports, WorkspaceConfigRunTest, ::testing::Values("http", "command"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
