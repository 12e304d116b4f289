// The thin hook client (`shadowbox-hook`, issue 10): it hands each event to the store's
// watch daemon, which records it exactly as `shadowbox hook claude-code` would; with no
// daemon to take it, it runs that command itself (which starts one); `hooks install`
// writes it into a project's settings.
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <Poco/JSON/Parser.h>

#include <thread>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hook_events.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/run_slice_types.hpp"
#include "sandbox/ledger.hpp"
#include "test_support.hpp"

extern char** environ;

namespace {

namespace fs = boost::filesystem;
using hook_events::tool;
using std::chrono::milliseconds;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

const std::string kThinClient = (fs::path(SHADOWBOX_BIN).parent_path() / "shadowbox-hook").string();

class HookClientTest : public ::testing::Test {
 protected:
  HookClientTest() {
    fs::create_directories(ws_);
    write_file(ws_ / "a.txt", "a\n");
    hooks::register_agent_run_slice_types();
  }
  ~HookClientTest() override {
    if (daemon_ > 0) {
      ::kill(daemon_, SIGKILL);
      ::waitpid(daemon_, nullptr, 0);
    }
    // One the full command started, detached.
    run_command(
        {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store", store_.string(), "daemon", "stop"},
        ws_);
  }

  CommandResult shadowbox(std::vector<std::string> args) const {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_, {"SHADOWBOX_CONFIG="});
  }

  bool daemon_running() const {
    CommandResult r = shadowbox({"--json", "daemon", "status"});
    return r.out.find("\"running\":true") != std::string::npos;
  }

  std::uint64_t daemon_captures() const {
    CommandResult r = shadowbox({"--json", "daemon", "status"});
    Poco::JSON::Parser parser;
    auto status = parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
    return status->optValue<std::uint64_t>("captures", 0);
  }

  void wait_for_daemon() const {
    for (int i = 0; i < 500 && !daemon_running(); ++i)
      std::this_thread::sleep_for(milliseconds(10));
    ASSERT_TRUE(daemon_running()) << "no watch daemon answers";
  }

  // Starts the store's watch daemon as a child of the test.
  void start_daemon() {
    ASSERT_EQ(shadowbox({"init"}).exit_code, 0);
    std::vector<std::string> args = {SHADOWBOX_BIN,   "--workspace", ws_.string(), "--store",
                                     store_.string(), "daemon",      "serve"};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(::posix_spawn(&daemon_, SHADOWBOX_BIN, nullptr, nullptr, argv.data(), environ), 0);
    wait_for_daemon();
  }

  // Sends one event through the thin client, as Claude Code runs an installed hook.
  CommandResult send(const std::string& event_name, const std::string& extra_json = "") {
    return raw(hook_events::event(event_name, ws_.string(), extra_json));
  }
  CommandResult raw(const std::string& stdin_data) {
    return run_command({kThinClient, "--store", store_.string(), "hook", "claude-code"}, ws_,
                       {"SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + ws_.string()}, stdin_data);
  }

  std::vector<std::string> shape() const {
    std::vector<std::string> out;
    for (const fsnap::Checkpoint& c :
         fsnap::ShadowRepo::open(store_ / "repo.git", false).log("session-sess-1", 0)) {
      out.insert(out.begin(), std::string(fsnap::to_string(c.meta.phase)) +
                                  (c.meta.tool_call_id.empty() ? "" : " " + c.meta.tool_call_id));
    }
    return out;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_ = temp_ / "store";
  pid_t daemon_ = -1;
};

TEST_F(HookClientTest, TheDaemonRecordsTheEventsItIsHanded) {
  start_daemon();
  ASSERT_EQ(send("PreToolUse", tool("Write", "toolu_1")).exit_code, 0);
  write_file(ws_ / "new.txt", "written by the tool\n");
  CommandResult post = send("PostToolUse", tool("Write", "toolu_1", ",\"tool_response\":{}"));
  ASSERT_EQ(post.exit_code, 0) << post.err;
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool toolu_1", "post_tool toolu_1"}));
  EXPECT_GE(daemon_captures(), 2u) << "the events were not recorded by the daemon";
  fsnap::ShadowRepo repo = fsnap::ShadowRepo::open(store_ / "repo.git", false);
  std::vector<fsnap::Checkpoint> log = repo.log("session-sess-1", 0);
  std::vector<fsnap::TreeChange> diff = repo.diff_trees(log[1].tree, log[0].tree);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].path, "new.txt");
}

TEST_F(HookClientTest, TheDaemonsOpenRepositoryFollowsAMaintenanceBetweenEvents) {
  // The daemon keeps the store's repository open from one event to the next: objects
  // packed and loose ones removed meanwhile (a maintenance), and the history rewritten
  // (a gc), are found where they are now.
  start_daemon();
  for (int i = 0; i < 20; ++i) write_file(ws_ / "src" / std::to_string(i), std::to_string(i));
  ASSERT_EQ(send("PreToolUse", tool("Write", "toolu_1")).exit_code, 0);
  write_file(ws_ / "new.txt", "first\n");
  ASSERT_EQ(send("PostToolUse", tool("Write", "toolu_1", ",\"tool_response\":{}")).exit_code, 0);
  for (const char* command : {"maintenance", "gc"}) {
    CommandResult r = shadowbox({command});
    ASSERT_EQ(r.exit_code, 0) << command << ": " << r.err;
  }
  ASSERT_EQ(send("PreToolUse", tool("Bash", "toolu_2")).exit_code, 0);
  fs::remove(ws_ / "src" / "7");
  write_file(ws_ / "new.txt", "broken\n");
  CommandResult failed =
      send("PostToolUseFailure", tool("Bash", "toolu_2", ",\"error\":\"exit 1\""));
  ASSERT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "new.txt"), "first\n") << "rolled back";
  EXPECT_EQ(testing_support::read_file(ws_ / "src" / "7"), "7");
  std::vector<std::string> calls = shape();
  ASSERT_GE(calls.size(), 3u);
  EXPECT_EQ(calls[calls.size() - 3], "pre_tool toolu_2");
  EXPECT_GE(daemon_captures(), 4u) << "the events were not recorded by the daemon";
}

TEST_F(HookClientTest, AFailedCallIsRolledBackAndTheAnswerComesBackWhole) {
  start_daemon();
  send("PreToolUse", tool("Bash", "toolu_f"));
  fs::remove(ws_ / "a.txt");
  write_file(ws_ / "junk.txt", "junk");
  CommandResult r = send("PostToolUseFailure", tool("Bash", "toolu_f", ",\"error\":\"exit 1\""));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "a.txt"), "a\n");
  EXPECT_FALSE(fs::exists(ws_ / "junk.txt"));
  Poco::JSON::Parser parser;
  auto out = parser.parse(r.out).extract<Poco::JSON::Object::Ptr>();
  std::string context =
      out->getObject("hookSpecificOutput")->getValue<std::string>("additionalContext");
  EXPECT_NE(context.find("rolled back"), std::string::npos) << context;
}

TEST_F(HookClientTest, TheHooksOwnSecretsAreRedactedNotTheDaemons) {
  write_file(ws_ / ".shadowbox.yaml", "run:\n  secrets: [HOOK_CLIENT_TEST_TOKEN]\n");
  start_daemon();  // its environment has no such variable
  const std::string secret = "s3cr3t-value-of-the-agent-only";
  std::string event = hook_events::event(
      "PreToolUse", ws_.string(),
      ",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_s\",\"tool_input\":{\"command\":"
      "\"curl -H " +
          secret + "\"}");
  CommandResult r =
      run_command({kThinClient, "--store", store_.string(), "hook", "claude-code"}, ws_,
                  {"SHADOWBOX_CONFIG=", "CLAUDE_PROJECT_DIR=" + ws_.string(),
                   "HOOK_CLIENT_TEST_TOKEN=" + secret},
                  event);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(daemon_captures(), 1u);
  std::optional<sandbox::LedgerRecord> record =
      sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false)).latest("session-sess-1");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->input_summary.find(secret), std::string::npos) << record->input_summary;
  EXPECT_NE(record->input_summary.find("[REDACTED]"), std::string::npos) << record->input_summary;
}

TEST_F(HookClientTest, AMalformedEventIsReportedAndChangesNothing) {
  start_daemon();
  CommandResult r = raw("{not json");
  EXPECT_EQ(r.exit_code, 2) << "it may be a call about to run: blocked, never run unrecorded";
  EXPECT_NE(r.err.find("cannot read the hook event"), std::string::npos) << r.err;
  EXPECT_TRUE(shape().empty());
}

TEST_F(HookClientTest, WithoutADaemonTheFullCommandRecordsAndStartsOne) {
  ASSERT_EQ(send("PreToolUse", tool("Bash", "toolu_2")).exit_code, 0);
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool toolu_2"}));
  wait_for_daemon();
  // Killed: the next event is recorded all the same.
  CommandResult status = shadowbox({"--json", "daemon", "status"});
  Poco::JSON::Parser parser;
  auto pid = parser.parse(status.out).extract<Poco::JSON::Object::Ptr>()->getValue<int>("pid");
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 200 && ::kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(milliseconds(10));
  ASSERT_EQ(send("PostToolUse", tool("Bash", "toolu_2", ",\"tool_response\":{}")).exit_code, 0);
  EXPECT_EQ(shape(), (std::vector<std::string>{"pre_tool toolu_2", "post_tool toolu_2"}));
}

// Any process of the user can connect to the daemon's socket: connections that send
// nothing do not hold the next event up (its hook would wait up to its timeout).
TEST_F(HookClientTest, SilentConnectionsToTheDaemonDoNotHoldAnEventUp) {
  start_daemon();
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, (store_ / "watch.sock").c_str(), sizeof addr.sun_path - 1);
    silent.push_back(::socket(AF_UNIX, SOCK_STREAM, 0));
    ASSERT_EQ(::connect(silent.back(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  auto start = std::chrono::steady_clock::now();
  CommandResult r = send("PreToolUse", tool("Write", "toolu_1"));
  auto took = std::chrono::steady_clock::now() - start;
  for (int fd : silent) ::close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(daemon_captures(), 1u) << "the event was not recorded by the daemon";
  EXPECT_LT(took, milliseconds(3000));
}

TEST_F(HookClientTest, HooksInstallWritesTheThinClientForAProject) {
  CommandResult r = shadowbox({"hooks", "install"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string settings = testing_support::read_file(ws_ / ".claude" / "settings.local.json");
  EXPECT_NE(settings.find("shadowbox-hook"), std::string::npos) << settings;
  EXPECT_NE(settings.find(" hook claude-code"), std::string::npos) << settings;
}

}  // namespace
