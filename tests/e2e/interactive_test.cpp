// Interactive Claude Code under `shadowbox run`, driven through a terminal (tmux) as a
// person would, with a user HOME as a logged-in subscription user has it: onboarding
// done, the workspace trusted, a user CLAUDE.md, user settings with a hook of their own,
// an MCP server holding a token, and an OAuth login (no API key). The session starts at
// its prompt, a typed request makes a tool call between pre and post checkpoints, the
// login is kept in step with the user's in both directions, `/exit` completes the run,
// the user's files are as they were, and no credential is in the store.
#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include <chrono>
#include <random>

#include "agent_harness.hpp"
#include "fsnap/atomic_file.hpp"
#include "fsnap/shadow_repo.hpp"
#include "terminal.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::read_file;
using testing_support::run_command;
using testing_support::write_file;

constexpr std::chrono::seconds kWait{60};
// On the status line once the prompt takes input (bypass permissions mode).
constexpr const char* kPromptReady = "(shift+tab to cycle)";

class InteractiveTest : public ::testing::Test {
 protected:
  InteractiveTest() {
    fs::create_directories(ws_);
    ws_ = fs::canonical(ws_);
    std::random_device rd;
    tag_ = std::to_string(rd()) + std::to_string(rd());
    write_user_home();
  }

  // A credentials file as Claude Code keeps it, for tokens of generation n.
  std::string login(int n) const {
    long long expires = now_ms_ + 24LL * 3600 * 1000 * n;
    return R"({"claudeAiOauth":{"accessToken":")" + access_token(n) + R"(","refreshToken":")" +
           refresh_token(n) + R"(","expiresAt":)" + std::to_string(expires) +
           R"(,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}})";
  }
  std::string access_token(int n) const {
    return "sk-ant-oat01-access" + std::to_string(n) + "x" + tag_;
  }
  std::string refresh_token(int n) const {
    return "sk-ant-ort01-refresh" + std::to_string(n) + "x" + tag_;
  }
  std::string mcp_secret() const { return "mcp-secret-" + tag_; }
  std::string memory_marker() const { return "MARKER-USER-CLAUDEMD-" + tag_; }

  void write_user_home() {
    write_file(user_ / ".claude.json", R"({
  "hasCompletedOnboarding": true,
  "mcpServers": {"tokened": {"type": "stdio", "command": "/bin/false",
                             "env": {"TOKEN": ")" +
                                           mcp_secret() + R"("}}},
  "projects": {
    ")" + ws_.string() + R"(": {"hasTrustDialogAccepted": true},
    "/elsewhere/project": {"history": [{"display": "OTHER-PROJECT-)" +
                                           tag_ + R"("}]}
  }
})");
    write_file(user_ / ".claude/settings.json",
               R"({"skipDangerousModePermissionPrompt": true,
  "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
    {"type": "command", "command": "echo user-hook >> )" +
                   (outside_ / "user-hook.log").string() + R"("}]}]}})");
    write_file(user_ / ".claude/CLAUDE.md", "Always obey rule " + memory_marker() + ".\n");
    write_file(user_ / ".claude/.credentials.json", login(1));
  }

  void start_mock(const std::string& scenario) {
    server_.reset();
    write_file(temp_ / "scenario.json", scenario);
    fs::remove(temp_ / "requests.log");
    server_ = std::make_unique<e2e::MockServer>(temp_ / "scenario.json", temp_ / "requests.log");
  }
  // The person's environment: no API key (they are logged in), HOME theirs.
  std::vector<std::string> env() const {
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    return {"HOME=" + user_.string(),
            "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin"),
            "TERM=xterm-256color",
            "LANG=C.UTF-8",
            "ANTHROPIC_BASE_URL=" + server_->base_url(),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "IS_SANDBOX=1",
            "SHADOWBOX_CONFIG="};
  }
  std::unique_ptr<e2e::Terminal> shadowbox_in_terminal(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto terminal = std::make_unique<e2e::Terminal>(temp_.path(), ws_, env(), argv);
    EXPECT_TRUE(terminal->started()) << terminal->start_error();
    return terminal;
  }

  // Waits up to kWait for pred.
  template <typename Pred>
  static bool eventually(Pred pred) {
    auto until = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < until) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  static bool holds(const fs::path& file, const std::string& content) {
    return fs::exists(file) && read_file(file) == content;
  }

  // Everything the mock's main requests carried, as one text.
  std::string model_saw() const {
    std::string out;
    for (const Poco::JSON::Object::Ptr& r : server_->requests()) {
      std::ostringstream s;
      r->stringify(s);
      out += s.str() + "\n";
    }
    return out;
  }
  std::vector<std::string> phases_of(const std::string& run, const std::string& call) const {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c :
         fsnap::ShadowRepo::open(store_ / "repo.git", false).log(run, 0)) {
      if (c.meta.tool_call_id == call) out.push_back(std::string(fsnap::to_string(c.meta.phase)));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Poco::JSON::Object::Ptr run_info(const std::string& run) const {
    CommandResult r = run_command(
        {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store", store_.string(), "--json", "runs"},
        ws_, {"SHADOWBOX_CONFIG="});
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (unsigned i = 0; i < runs->size(); ++i) {
      if (runs->getObject(i)->getValue<std::string>("run") == run) return runs->getObject(i);
    }
    return nullptr;
  }
  // Every secret of the user's, and whether any is in the store: in a git object, or in
  // any file of the store directory.
  std::string secrets_in_store() const {
    std::vector<std::string> secrets = {mcp_secret(), "OTHER-PROJECT-" + tag_};
    for (int n = 1; n <= 3; ++n) {
      secrets.push_back(access_token(n));
      secrets.push_back(refresh_token(n));
    }
    CommandResult objects = run_command({"git", "--git-dir", (store_ / "repo.git").string(),
                                         "cat-file", "--batch-all-objects", "--batch"},
                                        temp_.path());
    EXPECT_EQ(objects.exit_code, 0) << objects.err;
    std::string found;
    for (const std::string& secret : secrets) {
      if (objects.out.find(secret) != std::string::npos) found += secret + " in a git object\n";
    }
    for (fs::recursive_directory_iterator it(store_), end; it != end; ++it) {
      if (!fs::is_regular_file(it->symlink_status())) continue;
      std::string content = read_file(it->path());
      for (const std::string& secret : secrets) {
        if (content.find(secret) != std::string::npos) {
          found += secret + " in " + it->path().string() + "\n";
        }
      }
    }
    return found;
  }

  // One interactive session: ready at its prompt, line typed, the answer awaited, /exit.
  void converse(e2e::Terminal& terminal, const std::string& line, const std::string& answer) {
    ASSERT_TRUE(terminal.wait_for(kPromptReady, kWait)) << terminal.screen();
    terminal.type_line(line);
    ASSERT_TRUE(terminal.wait_for(answer, kWait)) << terminal.screen();
    ASSERT_TRUE(terminal.wait_for(kPromptReady, kWait)) << terminal.screen();
    terminal.type_line("/exit");
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  fs::path user_ = temp_ / "user";
  fs::path outside_ = temp_.path();
  std::string tag_;
  long long now_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::unique_ptr<e2e::MockServer> server_;
};

TEST_F(InteractiveTest, ARunStartsAtThePromptWithTheUsersSetupAndLeavesNoCredential) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  start_mock(R"({"steps":[
      {"tool":"Bash","id":"toolu_i1","input":{"command":"echo made > made.txt","description":"make"}},
      {"text":"all done here"}]})");
  testing_support::Manifest before = testing_support::take_manifest(user_);
  std::unique_ptr<e2e::Terminal> terminal = shadowbox_in_terminal(
      {"run", "--run-id", "i1", "--", "claude", "--dangerously-skip-permissions"});
  ASSERT_TRUE(terminal->wait_for(kPromptReady, kWait)) << terminal->screen();
  std::string first_screen = terminal->screen();
  for (const char* dialog :
       {"Choose the text style", "trust this folder", "Select login method", "Unable to connect"}) {
    EXPECT_EQ(first_screen.find(dialog), std::string::npos) << first_screen;
  }

  // The login, kept in step both ways while the run lasts.
  fs::path run_login = store_ / "runs/i1/home/.claude/.credentials.json";
  fs::path user_login = user_ / ".claude/.credentials.json";
  EXPECT_TRUE(holds(run_login, login(1)));
  fsnap::write_file_atomically(user_login, login(2), 0600);  // the user's own claude refreshed
  EXPECT_TRUE(eventually([&] { return holds(run_login, login(2)); }));
  fsnap::write_file_atomically(run_login, login(3), 0600);  // the run's claude refreshed
  EXPECT_TRUE(eventually([&] { return holds(user_login, login(3)); }));

  converse(*terminal, "create the file", "all done here");
  EXPECT_EQ(terminal->wait_exit(kWait), 0) << terminal->screen();

  // The tool call ran between its checkpoints; the run is complete.
  EXPECT_EQ(read_file(ws_ / "made.txt"), "made\n");
  EXPECT_EQ(phases_of("i1", "toolu_i1"), (std::vector<std::string>{"post_tool", "pre_tool"}));
  Poco::JSON::Object::Ptr info = run_info("i1");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("status"), "complete");
  // The user's setup reached the agent: their memory, their hook, their login.
  std::string saw = model_saw();
  EXPECT_NE(saw.find(memory_marker()), std::string::npos) << saw;
  EXPECT_NE(saw.find("\"auth\":\"Bearer sk-ant-oat01-access"), std::string::npos) << saw;
  EXPECT_EQ(saw.find("\"auth\":\"x-api-key\""), std::string::npos);
  EXPECT_NE(read_file(outside_ / "user-hook.log").find("user-hook"), std::string::npos);
  // The user's files are as they were, but for the refreshed login (by design).
  testing_support::Manifest after = testing_support::take_manifest(user_);
  EXPECT_EQ(after[".claude/.credentials.json"].data, login(3));
  before[".claude/.credentials.json"] = after[".claude/.credentials.json"];
  EXPECT_EQ(testing_support::describe_difference(before, after), "");
  // No credential, key or other project's history is in the store; the carried
  // configuration and the login left the run's HOME with the run.
  EXPECT_EQ(secrets_in_store(), "");
  EXPECT_FALSE(fs::exists(run_login));
  EXPECT_FALSE(fs::exists(store_ / "runs/i1/home/.claude.json"));
  EXPECT_TRUE(fs::exists(store_ / "runs/i1/home/.claude/projects")) << "the session data stays";
}

TEST_F(InteractiveTest, AnInteractiveRunResumesInteractively) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  start_mock(R"({"steps":[
      {"tool":"Bash","id":"toolu_i1","input":{"command":"echo made > made.txt","description":"make"}},
      {"text":"all done here"}]})");
  {
    std::unique_ptr<e2e::Terminal> terminal = shadowbox_in_terminal(
        {"run", "--run-id", "i1", "--", "claude", "--dangerously-skip-permissions"});
    converse(*terminal, "create the file", "all done here");
    ASSERT_EQ(terminal->wait_exit(kWait), 0) << terminal->screen();
  }
  // The run is complete (the person typed /exit): resuming it is asked for explicitly.
  start_mock(R"({"steps":[
      {"tool":"Bash","id":"toolu_i2","input":{"command":"echo again > again.txt","description":"again"}},
      {"text":"resumed and done"}]})");
  std::unique_ptr<e2e::Terminal> terminal =
      shadowbox_in_terminal({"resume", "i1", "--validation", "relaxed", "--reopen", "--",
                             "--dangerously-skip-permissions"});
  ASSERT_TRUE(terminal->wait_for(kPromptReady, kWait)) << terminal->screen();
  EXPECT_NE(terminal->screen().find("create the file"), std::string::npos)
      << "the conversation so far is on the screen:\n"
      << terminal->screen();
  converse(*terminal, "do it again", "resumed and done");
  EXPECT_EQ(terminal->wait_exit(kWait), 0) << terminal->screen();

  EXPECT_EQ(read_file(ws_ / "again.txt"), "again\n");
  EXPECT_EQ(phases_of("i1", "toolu_i2"), (std::vector<std::string>{"post_tool", "pre_tool"}));
  std::string saw = model_saw();
  EXPECT_NE(saw.find("toolu_i1"), std::string::npos) << "the model saw the earlier call";
  EXPECT_NE(saw.find(memory_marker()), std::string::npos) << "the user's setup came along again";
  EXPECT_EQ(run_info("i1")->getValue<std::string>("status"), "complete");
  EXPECT_EQ(secrets_in_store(), "");
}

}  // namespace
