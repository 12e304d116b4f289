// An application that embeds Claude Code through the Claude Agent SDK
// (fixtures/sdk-app, the real SDK from npm) under `shadowbox run`: its tool calls are
// checkpointed and a failed one rolled back; after kill -9 of the whole run,
// `shadowbox resume` starts the unchanged application, which resumes the session from
// its environment, and the model sees the calls made before the crash. In the SDK's
// isolation mode no hook reaches shadowbox, and the run says so.
#include <signal.h>
#include <sys/wait.h>

#include <sstream>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

class SdkAppTest : public e2e::ShadowboxTest {
 protected:
  SdkAppTest() {
    // The application, beside the SDK as an npm project of its own would have it.
    fs::create_directories(temp_ / "app");
    fs::copy_file(fs::path(SHADOWBOX_SOURCE_DIR) / "fixtures" / "sdk-app" / "app.mjs", app());
    fs::create_symlink(fs::path(SHADOWBOX_SOURCE_DIR) / ".tools" / "node_modules",
                       temp_ / "app" / "node_modules");
  }

  static bool sdk_installed() {
    return fs::exists(fs::path(SHADOWBOX_SOURCE_DIR) / ".tools" / "node_modules" / "@anthropic-ai" /
                      "claude-agent-sdk" / "package.json");
  }
  fs::path app() const { return temp_ / "app" / "app.mjs"; }
  void start_mock(const std::string& name, const std::string& scenario) {
    testing_support::write_file(temp_ / (name + ".json"), scenario);
    server_.reset();
    server_ = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"), temp_ / (name + ".log"));
  }
  std::vector<std::string> env() const override {
    const char* path = std::getenv("PATH");
    return {"HOME=" + (temp_ / "user-home").string(),
            "ANTHROPIC_BASE_URL=" + server_->base_url(),
            "ANTHROPIC_API_KEY=sk-ant-test-sdk-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "IS_SANDBOX=1",
            "SHADOWBOX_CONFIG=",
            "SHADOWBOX_NO_PROGRESS=1",
            std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
  }
  // Whether the mock has been asked for step `step` of its scenario.
  bool reached(int step) const {
    for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
      if (req->getValue<bool>("main") && !req->isNull("step") &&
          req->getValue<int>("step") == step) {
        return true;
      }
    }
    return false;
  }

  std::unique_ptr<e2e::MockServer> server_;
};

TEST_F(SdkAppTest, AnSdkApplicationIsRolledBackKilledAndResumedUnchanged) {
  ASSERT_TRUE(sdk_installed()) << "run scripts/setup.sh to install the Claude Agent SDK";
  start_mock("first", R"({"steps":[
    {"tool":"Write","id":"toolu_sdk_write","input":{"file_path":")" +
                          (ws_ / "a.txt").string() + R"(","content":"hello\n"}},
    {"tool":"Bash","id":"toolu_sdk_fail","input":{"command":"echo oops > b.txt; exit 1",
      "description":"fails"}},
    {"hang":true}]})");
  // shadowbox, the application and its Claude Code in a process group of their own, so
  // that kill -9 gets them all.
  pid_t pid = start_in_own_group({"run", "--agent", "claude-sdk", "--run-id", "sdk", "--", "node",
                                  app().string(), "make a.txt"});
  for (int i = 0; i < 480 && !reached(2); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(reached(2)) << "the application never reached the hanging request";
  // The failed call's result is in the preserved conversation once the model is asked
  // the next step.
  bool preserved = wait_until_preserved("sdk", "\"tool_use_id\":\"toolu_sdk_fail\"");
  EXPECT_TRUE(preserved) << "the transcript's last lines were never preserved";
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "hello\n");
  EXPECT_FALSE(fs::exists(ws_ / "b.txt")) << "the failed Bash call was not rolled back";
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);

  Poco::JSON::Object::Ptr info = run_info("sdk");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_EQ(info->getValue<std::string>("agent"), "claude-sdk");
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 1u);
  EXPECT_TRUE(info->getValue<bool>("resumable"));
  std::string first_session = info->getValue<std::string>("session_id");

  // The application is started again as it was; it finds the session in its
  // environment.
  start_mock("second", R"({"steps":[
    {"tool":"Bash","id":"toolu_after","input":{"command":"echo after > c.txt","description":"c"}},
    {"text":"resumed"}]})");
  CommandResult resumed = shadowbox({"resume", "sdk"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_NE(resumed.out.find("resuming " + first_session + " (fork)"), std::string::npos)
      << resumed.out;
  EXPECT_EQ(testing_support::read_file(ws_ / "c.txt"), "after\n");
  std::vector<Poco::JSON::Object::Ptr> requests = server_->requests();
  ASSERT_FALSE(requests.empty());
  std::ostringstream first_request;
  requests.front()->stringify(first_request);
  EXPECT_NE(first_request.str().find("toolu_sdk_write"), std::string::npos)
      << "the model did not see the calls made before the crash: " << first_request.str();
  EXPECT_NE(first_request.str().find("toolu_sdk_fail"), std::string::npos);
  Poco::JSON::Object::Ptr after = run_info("sdk");
  EXPECT_NE(after->getValue<std::string>("session_id"), first_session) << "forked";
  EXPECT_EQ(after->getValue<std::string>("status"), "complete");

  // --continue: the same session, told so in the environment; and `-- CMD ARGS` is the
  // command as it is given.
  std::string forked = after->getValue<std::string>("session_id");
  start_mock("third", R"({"steps":[{"text":"continued"}]})");
  CommandResult continued = shadowbox({"resume", "sdk", "--continue", "--validation", "relaxed",
                                       "--reopen", "--", "node", app().string(), "go on"});
  ASSERT_EQ(continued.exit_code, 0) << continued.err;
  EXPECT_NE(continued.out.find("resuming " + forked + "\n"), std::string::npos) << continued.out;
  EXPECT_EQ(run_info("sdk")->getValue<std::string>("session_id"), forked);
  EXPECT_NE(server_->requests().front()->getValue<std::string>("last_user_text").find("go on"),
            std::string::npos);
  // Claude Code's own options make no sense to an application.
  CommandResult only_args = shadowbox({"resume", "sdk", "--only-args", "--validation", "none"});
  EXPECT_EQ(only_args.exit_code, 1) << only_args.err;
  EXPECT_NE(only_args.err.find("--only-args is for Claude Code"), std::string::npos)
      << only_args.err;
}

TEST_F(SdkAppTest, AnApplicationInIsolationModeIsToldItReportsNothing) {
  ASSERT_TRUE(sdk_installed()) << "run scripts/setup.sh to install the Claude Agent SDK";
  start_mock("isolated", R"({"steps":[
    {"tool":"Write","input":{"file_path":")" +
                             (ws_ / "a.txt").string() + R"(","content":"unseen\n"}},
    {"text":"done"}]})");
  CommandResult r = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "iso", "--", "node",
                               app().string(), "--isolated", "make a.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "unseen\n");
  EXPECT_NE(r.err.find("its hooks never reached shadowbox"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("settingSources"), std::string::npos) << r.err;
  // A run whose agent reports says nothing of the kind.
  start_mock("reporting", R"({"steps":[
    {"tool":"Write","input":{"file_path":")" +
                              (ws_ / "b.txt").string() + R"(","content":"seen\n"}},
    {"text":"done"}]})");
  CommandResult reporting = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "rep", "--",
                                       "node", app().string(), "make b.txt"});
  ASSERT_EQ(reporting.exit_code, 0) << reporting.err;
  EXPECT_EQ(reporting.err.find("never reached shadowbox"), std::string::npos) << reporting.err;
}

}  // namespace
