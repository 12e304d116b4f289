// `shadowbox run`, `runs` and `resume` with the real Claude Code CLI: the ephemeral
// HOME, the environment filter, no secret in any git object, the agent's exit status,
// `kill -9` of agent and shadowbox followed by a resume that continues the
// conversation, `kill -9` of shadowbox alone ending the agent's whole tree (what ignores
// SIGTERM too) with the run resumable only once it has, and resumes that must fail
// clearly.
#include <signal.h>
#include <sys/wait.h>

#include <random>
#include <sstream>
#include <thread>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include "agent_harness.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store_layout.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/agent_spend.hpp"
#include "hooks/claude_code_settings.hpp"
#include "hooks/process_tree.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/run_meta.hpp"
#include "sandbox/ledger.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;

class RunTest : public e2e::ShadowboxTest {
 protected:
  RunTest() {
    hooks::register_agent_run_slice_types();
    std::random_device rd;
    secret_ = "sk-ant-test-" + std::to_string(rd()) + std::to_string(rd());
  }

  void start_mock(const std::string& name, const std::string& scenario) {
    testing_support::write_file(temp_ / (name + ".json"), scenario);
    server_ = std::make_unique<e2e::MockServer>(temp_ / (name + ".json"), temp_ / (name + ".log"));
  }
  // The environment of the person running shadowbox: credentials, and a private
  // variable the agent must not see.
  std::vector<std::string> env() const override {
    std::string tools = std::string(SHADOWBOX_SOURCE_DIR) + "/.tools/node_modules/.bin";
    const char* path = std::getenv("PATH");
    return {"HOME=" + (temp_ / "user-home").string(),
            "ANTHROPIC_BASE_URL=" + server_->base_url(),
            "ANTHROPIC_API_KEY=" + secret_,
            "MY_PRIVATE_TOKEN=private-" + secret_,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "IS_SANDBOX=1",
            "SHADOWBOX_CONFIG=",
            "PATH=" + tools + ":" + (path ? path : "/usr/bin:/bin")};
  }
  std::string path(const std::string& rel) const { return (ws_ / rel).string(); }
  std::string git(std::vector<std::string> args) {
    std::vector<std::string> argv = {"git", "--git-dir", (store_ / "repo.git").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = run_command(argv, temp_.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  // r1's adapter state, brought up to date as the session went on, and its preserved HOME.
  void expect_adapter_state(const Poco::JSON::Object::Ptr& info) {
    Poco::JSON::Array::Ptr sessions = info->getArray("sessions");
    ASSERT_EQ(sessions->size(), 1u);
    Poco::JSON::Object::Ptr session = sessions->getObject(0);
    EXPECT_EQ(session->getValue<std::string>("session_id"),
              info->getValue<std::string>("session_id"));
    EXPECT_EQ(session->getValue<std::string>("started_by"),
              "claude -p go --dangerously-skip-permissions");
    EXPECT_TRUE(session->getValue<bool>("complete"));
    EXPECT_GE(session->getValue<std::size_t>("message_count"), 4u)
        << "the prompt, two calls with their results";
    EXPECT_GE(session->getValue<std::string>("last_activity_at"),
              session->getValue<std::string>("started_at"));
    EXPECT_NE(git({"for-each-ref", "--format=%(refname)"}).find("refs/shadowbox/home/r1"),
              std::string::npos);
    std::string home_files = git({"ls-tree", "-r", "--name-only", "refs/shadowbox/home/r1"});
    EXPECT_NE(home_files.find(".claude/projects/"), std::string::npos) << home_files;
    EXPECT_EQ(home_files.find("settings.json"), std::string::npos) << home_files;
  }

  // diff --session from r1's opening checkpoint to its last: the agent session that
  // started, and its session data (preserved by the end: its transcript).
  void expect_session_diff_names_the_agent_session(const std::string& session_id) {
    CommandResult log = shadowbox({"--json", "log", "--run", "r1"});
    ASSERT_EQ(log.exit_code, 0) << log.err;
    Poco::JSON::Parser log_parser;
    auto checkpoints = log_parser.parse(log.out).extract<Poco::JSON::Array::Ptr>();
    std::string first = checkpoints->getObject(static_cast<unsigned>(checkpoints->size() - 1))
                            ->getValue<std::string>("id");
    std::string last = checkpoints->getObject(0)->getValue<std::string>("id");
    CommandResult diff = shadowbox({"--json", "diff", "--session", first, last});
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    Poco::JSON::Parser diff_parser;
    Poco::JSON::Object::Ptr agents =
        diff_parser.parse(diff.out).extract<Poco::JSON::Object::Ptr>()->getObject("agent_sessions");
    ASSERT_EQ(agents->getArray("added")->size(), 1u) << diff.out;
    EXPECT_EQ(agents->getArray("added")->getElement<std::string>(0), session_id);
    std::ostringstream data;
    agents->getArray("session_data")->stringify(data);
    EXPECT_NE(data.str().find(session_id + ".jsonl"), std::string::npos) << data.str();
    CommandResult text = shadowbox({"diff", "--session", first, last});
    EXPECT_NE(text.out.find("agent session " + session_id + ": started (startup)"),
              std::string::npos)
        << text.out;
  }

  // No git object holds the API key (the agent printed it; it was redacted).
  void expect_no_secret_in_any_object() {
    CommandResult all = run_command({"git", "--git-dir", (store_ / "repo.git").string(), "cat-file",
                                     "--batch-all-objects", "--batch"},
                                    temp_.path());
    ASSERT_EQ(all.exit_code, 0);
    EXPECT_GT(all.out.size(), 1000u);
    EXPECT_EQ(all.out.find(secret_), std::string::npos) << "a secret entered the store";
    EXPECT_NE(all.out.find("[REDACTED]"), std::string::npos);
  }

  // The run left no watch daemon behind, and started none: its own process watched the
  // workspace, and answered the hooks (Claude Code's SessionStart, a hook process,
  // scanned). Once the agent was done, a maintenance of the run's own (which `run` did
  // not wait for) packed what it had written: no object the refs reach is left loose.
  void expect_no_daemon_and_nothing_loose() {
    EXPECT_FALSE(fs::exists(fsnap::layout::watch_spawns_file(store_)));
    CommandResult daemon = shadowbox({"--json", "daemon", "status"});
    Poco::JSON::Parser daemon_parser;
    EXPECT_FALSE(daemon_parser.parse(daemon.out)
                     .extract<Poco::JSON::Object::Ptr>()
                     ->getValue<bool>("running"))
        << daemon.out;

    std::vector<std::string> reachable;
    std::istringstream listed(git({"rev-list", "--objects", "--all"}));
    for (std::string line; std::getline(listed, line);) reachable.push_back(line);
    EXPECT_GT(reachable.size(), 20u);
    auto loose = [&] {
      std::vector<std::string> out;
      for (const std::string& line : reachable) {
        std::string id = line.substr(0, 40);
        if (fs::exists(store_ / "repo.git/objects" / id.substr(0, 2) / id.substr(2))) {
          out.push_back(line);
        }
      }
      return out;
    };
    for (int i = 0; i < 600 && !loose().empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const std::string& line : loose()) ADD_FAILURE() << "loose: " << line;
  }

  // A run "crash" whose agent wrote a.txt, then hung on the model, killed with kill -9
  // (shadowbox and the agent) once the conversation so far was preserved.
  void crash_while_the_model_hangs() {
    start_mock("first", R"({"steps":[
    {"tool":"Write","id":"toolu_before_crash","input":{"file_path":")" +
                            path("a.txt") +
                            R"(","content":"before the crash\n"}},
    {"hang":true}]})");
    // The user's own instructions, carried into the run's HOME (and out of it when it ends).
    testing_support::write_file(temp_ / "user-home/.claude/CLAUDE.md", "be brief\n");
    // shadowbox and the agent in a process group of their own, so kill -9 gets both.
    pid_t pid = start_in_own_group(
        {"run", "--run-id", "crash", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
    bool hung = false;
    for (int i = 0; i < 240 && !hung; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
        if (req->getValue<bool>("main") && !req->isNull("step") &&
            req->getValue<int>("step") == 1) {
          hung = true;
        }
      }
    }
    ASSERT_TRUE(hung) << "the agent never reached the hanging request";
    // The conversation up to the hanging request is preserved while the agent waits —
    // the call's result too, which the transcript gets after the call's last boundary.
    bool preserved = wait_until_preserved("crash", "\"tool_use_id\":\"toolu_before_crash\"");
    EXPECT_TRUE(preserved) << "the transcript's last lines were never preserved";
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    // (Each process of the group dies in its own time: the run is resumable once none is
    // left.)
    EXPECT_TRUE(e2e::group_gone(pid, std::chrono::seconds(10)));
  }

  // `states` says what `runs` says, though the run's last recorded move is to running.
  void expect_states_say_crashed() {
    CommandResult crashed = shadowbox({"--json", "states", "crash"});
    ASSERT_EQ(crashed.exit_code, 0) << crashed.err;
    Poco::JSON::Parser crashed_parser;
    Poco::JSON::Object::Ptr crashed_json =
        crashed_parser.parse(crashed.out).extract<Poco::JSON::Object::Ptr>();
    EXPECT_EQ(crashed_json->getValue<std::string>("status"), "crashed");
    EXPECT_EQ(crashed_json->getValue<std::string>("current"), "crashed");
    EXPECT_NE(shadowbox({"states", "crash"})
                  .out.find("now crashed (its last recorded move is to "
                            "running"),
              std::string::npos);
  }

  // The resume's first checkpoint counted what the crashed run's agent had spent (its
  // transcript holds the answered request), not only the last boundary's figure.
  void expect_resume_counted_the_crashed_spend() {
    sandbox::Ledger ledger = sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false));
    bool opening_seen = false;
    for (const sandbox::LedgerRecord& rec : ledger.records("crash")) {
      if (rec.result_summary.rfind("run resumed from agent session", 0) != 0) continue;
      opening_seen = true;
      std::optional<hooks::AgentSpend> spend = hooks::agent_spend(ledger.session(rec));
      ASSERT_TRUE(spend);
      EXPECT_GE(spend->requests, 1u);
      EXPECT_GT(spend->charged_usd, 0.0);
    }
    EXPECT_TRUE(opening_seen);
  }

  // The run's lifecycle moves, consecutive repeats (a SessionStart, a SessionEnd) once.
  void expect_lifecycle(const std::string& run, const std::vector<std::string>& expected) {
    CommandResult states = shadowbox({"--json", "states", run});
    ASSERT_EQ(states.exit_code, 0) << states.err;
    EXPECT_EQ(e2e::lifecycle_path(states.out), expected) << states.out;
  }

  // --continue appends to the resumed session (forked) instead of forking it; a complete
  // run does not pass strict validation; without its preserved data no run resumes.
  void expect_continue_then_refusals(const std::string& forked) {
    start_mock("third", R"({"steps":[{"text":"continued"}]})");
    CommandResult continued =
        shadowbox({"resume", "crash", "--continue", "--validation", "relaxed", "--reopen", "--",
                   "-p", "more", "--dangerously-skip-permissions"});
    ASSERT_EQ(continued.exit_code, 0) << continued.err;
    EXPECT_EQ(run_info("crash")->getValue<std::string>("session_id"), forked);

    // A complete run does not pass strict validation...
    CommandResult strict = shadowbox({"resume", "crash", "--", "-p", "again"});
    EXPECT_EQ(strict.exit_code, 1);
    EXPECT_NE(strict.err.find("the run is complete"), std::string::npos) << strict.err;
    // ...and without its preserved data no run can be resumed.
    git({"update-ref", "-d", "refs/shadowbox/home/crash"});
    CommandResult gone =
        shadowbox({"resume", "crash", "--validation", "none", "--", "-p", "again"});
    EXPECT_EQ(gone.exit_code, 1);
    EXPECT_NE(gone.err.find("preserved"), std::string::npos) << gone.err;
    EXPECT_EQ(std::count(gone.err.begin(), gone.err.end(), '\n'), 1) << gone.err;
  }

  std::string secret_;
  std::unique_ptr<e2e::MockServer> server_;
};

TEST_F(RunTest, RunsTheAgentWithItsOwnHomeAndLeavesNoSecretInTheStore) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  start_mock("s", R"({"steps":[
    {"tool":"Write","id":"toolu_1","input":{"file_path":")" +
                      path("a.txt") + R"(","content":"one\n"}},
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo key=$ANTHROPIC_API_KEY; echo tok=$MY_PRIVATE_TOKEN > tok.txt; echo home=$HOME > home.txt","description":"env"}},
    {"text":"done"}]})");
  CommandResult r = shadowbox(
      {"run", "--run-id", "r1", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The run ends by saying what came of it, and the shadowbox commands that go on from
  // there (the agent's own resume hint names a session of the run's HOME).
  EXPECT_NE(r.err.find("shadowbox: run r1 complete; 2 calls: 2 steps (0 failed, 0 rolled "
                       "back), 0 refused, 0 denied by the agent; cost $0."),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("shadowbox log --run r1\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("shadowbox resume r1 --reopen\n"), std::string::npos) << r.err;
  // Only configured variables reach the agent, and HOME is the run's own.
  EXPECT_EQ(testing_support::read_file(ws_ / "tok.txt"), "tok=\n");
  std::string home = testing_support::read_file(ws_ / "home.txt");
  EXPECT_NE(home.find((store_ / "runs/r1/home").string()), std::string::npos) << home;

  Poco::JSON::Object::Ptr info = run_info("r1");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("status"), "complete");
  EXPECT_FALSE(info->getValue<bool>("resumable"))
      << "resumable means resumable now: a complete run takes --reopen (or --validation none)";
  EXPECT_FALSE(info->isNull("session_id"));
  expect_adapter_state(info);
  expect_session_diff_names_the_agent_session(info->getValue<std::string>("session_id"));
  expect_no_secret_in_any_object();
  expect_no_daemon_and_nothing_loose();
}

// `claude -p` without permissions, as a user first types it: Claude Code asks before a
// shell command that writes, nobody can answer, and it refuses the call itself — a
// PreToolUse, then no PostToolUse. The call is counted as denied by the agent (not as a
// step, not as a call that vanished), and the person is told why nothing ran.
TEST_F(RunTest, ACallTheAgentsOwnPermissionsRefusedIsCountedAndTold) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  start_mock("s", R"({"steps":[
    {"tool":"Bash","id":"toolu_asks","input":{"command":"echo hi > f.txt","description":"f"}},
    {"text":"done"}]})");
  CommandResult r = shadowbox({"run", "--run-id", "p1", "--", "claude", "-p", "go"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(ws_ / "f.txt"));
  Poco::JSON::Object::Ptr info = run_info("p1");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::size_t>("calls"), 1u);
  EXPECT_EQ(info->getValue<std::size_t>("agent_denied_calls"), 1u);
  EXPECT_EQ(info->getValue<std::size_t>("steps"), 0u);
  EXPECT_EQ(info->getValue<std::size_t>("failed_calls"), 0u);
  EXPECT_NE(r.err.find("the agent's own permissions refused 1 tool call, which did not run"),
            std::string::npos)
      << r.err;
  // log's row of the call says so, with the reason the agent gave its model.
  CommandResult log = shadowbox({"log", "--run", "p1"});
  EXPECT_NE(log.out.find(" denied "), std::string::npos) << log.out;
  EXPECT_NE(log.out.find("needs approval"), std::string::npos) << log.out;
  EXPECT_EQ(log.out.find("no outcome"), std::string::npos) << log.out;
}

TEST_F(RunTest, TheAgentsExitStatusIsReturned) {
  start_mock("s", R"({"steps":[]})");
  CommandResult r = shadowbox({"run", "--agent", "claude-sdk", "--run-id", "sh", "--", "sh", "-c",
                               "echo hi > hi.txt; exit 7"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_NE(r.err.find("run sh failed (the agent exited with status 7); 0 calls: 0 steps"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::exists(ws_ / "hi.txt"));
  // The change the command made is checkpointed even without hooks.
  EXPECT_NE(git({"ls-tree", "--name-only", "refs/shadowbox/runs/sh"}).find("hi.txt"),
            std::string::npos);
  EXPECT_EQ(shadowbox({"run", "--agent", "claude-sdk", "--run-id", "sh", "--", "true"}).exit_code,
            1)
      << "run ids are unique";
  EXPECT_EQ(
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "x", "--", "no-such-command-here"})
          .exit_code,
      1);
  EXPECT_EQ(shadowbox({"run"}).exit_code, 2);
  // A program shadowbox does not know is not run unrecorded: its kind must be named.
  CommandResult unknown = shadowbox({"run", "--run-id", "u", "--", "sh", "-c", "touch u.txt"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("does not know the agent 'sh'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("claude-code, claude-sdk, codex, gemini"), std::string::npos)
      << unknown.err;
  EXPECT_FALSE(fs::exists(ws_ / "u.txt"));
  EXPECT_EQ(shadowbox({"run", "--agent", "cursor", "--", "sh"}).exit_code, 2);
}

// Gemini CLI, run as one process, exits with 199 when its own launcher would start it
// again (after the person trusted the folder): `run` starts it again, with the same
// command line, and the run goes on. Another agent's 199 is its exit status.
TEST_F(RunTest, AnAgentThatAsksToBeStartedAgainIsStartedAgain) {
  start_mock("s", R"({"steps":[]})");
  const std::string script =
      "if [ -e once ]; then echo again > again.txt; exit 0; fi; touch once; exit 199";
  CommandResult gemini =
      shadowbox({"run", "--agent", "gemini", "--run-id", "g", "--", "sh", "-c", script});
  EXPECT_EQ(gemini.exit_code, 0) << gemini.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "again.txt"), "again\n");
  EXPECT_NE(gemini.err.find("run g complete"), std::string::npos) << gemini.err;
  fs::remove(ws_ / "once");
  fs::remove(ws_ / "again.txt");
  CommandResult sdk =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "s", "--", "sh", "-c", script});
  EXPECT_EQ(sdk.exit_code, 199) << sdk.err;
  EXPECT_FALSE(fs::exists(ws_ / "again.txt"));
}

TEST_F(RunTest, ARunWhoseAgentCannotStartIsUndoneInReverseOrder) {
  start_mock("s", R"({"steps":[]})");
  testing_support::write_file(temp_ / "user-home" / ".claude" / ".credentials.json",
                              R"({"claudeAiOauth":{"accessToken":"token-)" + secret_ + R"("}})");
  CommandResult r =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "x", "--", "no-such-command-here"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("start of run x: step 'agent' failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no-such-command-here"), std::string::npos) << r.err;

  // Undone: the hooks out of the agent's settings, the login out of its HOME, ...
  fs::path home = fsnap::layout::run_home_dir(store_, "x");
  ASSERT_TRUE(fs::is_directory(home / ".claude"));
  EXPECT_FALSE(hooks::file_has_shadowbox_hooks(home / ".claude" / "settings.json"));
  EXPECT_FALSE(fs::exists(home / ".claude" / ".credentials.json"));
  // ... the opening boundary followed by the record that the run did not start, ...
  std::vector<sandbox::LedgerRecord> records =
      sandbox::Ledger::of(fsnap::Store::open(store_, ws_, false)).records("x");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].result_summary, "run started: no-such-command-here");
  EXPECT_NE(records[1].result_summary.find("the run could not start: "), std::string::npos)
      << records[1].result_summary;
  // ... and the run ended, not running nor crashed.
  Poco::JSON::Object::Ptr info = run_info("x");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->getValue<std::string>("status"), "failed");
  EXPECT_EQ(info->getValue<int>("exit_code"), 127);
}

// Waits until the agent kTrappingAgent is up in ws.
void wait_until_started(const fs::path& ws) {
  for (int i = 0; i < 200 && !fs::exists(ws / "started.txt"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// An agent that writes sig.txt when it gets SIGTERM.
constexpr const char* kTrappingAgent =
    "trap 'echo got-term > sig.txt; exit 5' TERM; echo up > started.txt; "
    "while :; do sleep 0.1; done";

TEST_F(RunTest, SignalsAreForwardedToTheAgent) {
  start_mock("s", R"({"steps":[]})");
  pid_t pid = start_in_own_group(
      {"run", "--agent", "claude-sdk", "--run-id", "sig", "--", "sh", "-c", kTrappingAgent});
  wait_until_started(ws_);
  ASSERT_TRUE(fs::exists(ws_ / "started.txt"));
  ::kill(pid, SIGTERM);  // to shadowbox only: it must pass it on
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 5) << "the agent's exit status";
  EXPECT_EQ(testing_support::read_file(ws_ / "sig.txt"), "got-term\n");
}

TEST_F(RunTest, TheAgentDoesNotOutliveShadowbox) {
  start_mock("s", R"({"steps":[]})");
  pid_t pid = start_in_own_group(
      {"run", "--agent", "claude-sdk", "--run-id", "orphan", "--", "sh", "-c", kTrappingAgent});
  wait_until_started(ws_);
  ASSERT_TRUE(fs::exists(ws_ / "started.txt"));
  ::kill(pid, SIGKILL);  // shadowbox cannot pass anything on
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (int i = 0; i < 100 && !fs::exists(ws_ / "sig.txt"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(testing_support::read_file(ws_ / "sig.txt"), "got-term\n")
      << "an agent left without its supervisor would run tools nobody records";
}

TEST_F(RunTest, KilledRunIsResumedWithItsConversation) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  ASSERT_NO_FATAL_FAILURE(crash_while_the_model_hangs());
  Poco::JSON::Object::Ptr info = run_info("crash");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_TRUE(info->getValue<bool>("resumable"));
  EXPECT_TRUE(fs::exists(store_ / "runs/crash/home/.claude/CLAUDE.md"))
      << "the killed run's HOME still holds what it carried";
  std::string first_session = info->getValue<std::string>("session_id");
  expect_states_say_crashed();
  start_mock("second", R"({"steps":[
    {"tool":"Bash","id":"toolu_after","input":{"command":"echo after > b.txt","description":"b"}},
    {"text":"resumed"}]})");
  CommandResult resumed =
      shadowbox({"resume", "crash", "--", "-p", "continue", "--dangerously-skip-permissions"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(testing_support::read_file(ws_ / "b.txt"), "after\n");
  // The killed run never took the user's configuration out of its HOME; the resume did
  // (the session data stays).
  EXPECT_FALSE(fs::exists(store_ / "runs/crash/home/.claude/CLAUDE.md"));
  EXPECT_TRUE(fs::exists(store_ / "runs/crash/home/.claude/projects"));
  // The model saw the calls made before the crash.
  std::vector<Poco::JSON::Object::Ptr> requests = server_->requests();
  ASSERT_FALSE(requests.empty());
  std::ostringstream first_request;
  requests.front()->stringify(first_request);
  EXPECT_NE(first_request.str().find("toolu_before_crash"), std::string::npos)
      << first_request.str();
  // The resumed (forked) session supersedes the old one as adapter state.
  Poco::JSON::Object::Ptr after = run_info("crash");
  EXPECT_NE(after->getValue<std::string>("session_id"), first_session);
  EXPECT_EQ(after->getValue<std::string>("status"), "complete");
  expect_resume_counted_the_crashed_spend();
  // From running to crashed (found by resume) to resumed to complete.
  expect_lifecycle("crash", {"running", "crashed", "resumed", "complete"});
  expect_continue_then_refusals(after->getValue<std::string>("session_id"));
}

// kill -9 of `shadowbox run` alone, while Claude Code waits for the model: nothing can
// pass a signal on, and what the agent started may ignore SIGTERM. Its whole tree ends
// within the kill grace (SIGTERM, then SIGKILL), and until it has, the run is neither
// reported resumable nor resumed: a second agent would work on the same files.
TEST_F(RunTest, TheAgentsWholeTreeEndsWithItsKilledSupervisorAndIsNotResumedMeanwhile) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  fs::path bg_pid = temp_ / "bg.pid";
  // The agent leaves a process that ignores SIGTERM, in a session of its own (Claude
  // Code's clean-up of its tools' process groups does not reach it), then its next
  // model request hangs.
  start_mock("first", R"({"steps":[
    {"tool":"Bash","id":"toolu_bg","input":{"command":"nohup setsid sh -c 'trap \"\" TERM; echo $$ > )" +
                          bg_pid.string() +
                          R"(; exec tail -f /dev/null' >/dev/null 2>&1 &","description":"bg"}},
    {"hang":true}]})");
  pid_t pid = start_in_own_group(
      {"run", "--run-id", "orphan", "--", "claude", "-p", "go", "--dangerously-skip-permissions"});
  bool hung = false;
  for (int i = 0; i < 240 && !hung; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    for (const Poco::JSON::Object::Ptr& req : server_->requests()) {
      hung = hung || (req->getValue<bool>("main") && !req->isNull("step") &&
                      req->getValue<int>("step") == 1);
    }
  }
  ASSERT_TRUE(hung) << "the agent never reached the hanging request";
  auto written = [&] {
    return fs::exists(bg_pid) && testing_support::read_file(bg_pid).find('\n') != std::string::npos;
  };
  for (int i = 0; i < 200 && !written(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(written()) << "the background process never started";
  pid_t background = static_cast<pid_t>(std::stol(testing_support::read_file(bg_pid)));
  struct Cleanup {
    pid_t pid;
    ~Cleanup() { ::kill(pid, SIGKILL); }  // whatever happens to the test
  } cleanup{background};
  std::optional<runs::RunMeta> meta =
      runs::RunMeta::load(fsnap::Store::open(store_, ws_, false), "orphan");
  ASSERT_TRUE(meta);
  std::vector<pid_t> tree = hooks::live_descendants(pid);
  ASSERT_NE(std::find(tree.begin(), tree.end(), meta->agent_pid), tree.end());
  ASSERT_NE(std::find(tree.begin(), tree.end(), background), tree.end());

  ::kill(pid, SIGKILL);  // shadowbox alone
  ::waitpid(pid, nullptr, 0);
  auto killed = std::chrono::steady_clock::now();
  // While a process of the run lives (the background one ignores SIGTERM for the kill
  // grace, 5 s), the run is not resumable, and resume refuses.
  Poco::JSON::Object::Ptr info = run_info("orphan");
  ASSERT_FALSE(info.isNull());
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_FALSE(info->getValue<bool>("resumable"));
  CommandResult early = testing_support::run_command(
      shadowbox_argv({"resume", "orphan", "--", "-p", "go on", "--dangerously-skip-permissions"}),
      ws_, env(), "", std::chrono::seconds(60));
  EXPECT_EQ(early.exit_code, 1) << early.err;
  EXPECT_NE(early.err.find("processes of the run's agent are still running"), std::string::npos)
      << early.err;
  ASSERT_TRUE(runs::process_alive(background))
      << "(the checks above were not made while a process of the run lived)";

  // Within the grace, and a little more: every process of the agent's tree is gone.
  auto all_gone = [&] {
    for (pid_t p : tree) {
      if (runs::process_alive(p)) return false;
    }
    return true;
  };
  while (!all_gone() && std::chrono::steady_clock::now() - killed < std::chrono::seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(all_gone()) << "the agent's processes outlived their supervisor";
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(10));
  // Then the crashed run is resumable.
  info = run_info("orphan");
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_TRUE(info->getValue<bool>("resumable"));
}

TEST_F(RunTest, ResumeKeepsTheAgentOptionsOfTheRunAndReplacesThePrompt) {
  ASSERT_TRUE(fs::exists(e2e::claude_binary())) << "run scripts/setup.sh to install Claude Code";
  // Bash is allowed by the run's own options, not by skipping permissions.
  start_mock("first", R"({"steps":[
    {"tool":"Bash","id":"toolu_1","input":{"command":"echo one > one.txt","description":"one"}},
    {"text":"done"}]})");
  CommandResult first = shadowbox({"run", "--run-id", "opts", "--", "claude", "-p", "go",
                                   "--allowedTools", "Bash", "--permission-mode", "default"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_TRUE(fs::exists(ws_ / "one.txt"));

  start_mock("second", R"({"steps":[
    {"tool":"Bash","id":"toolu_2","input":{"command":"echo two > two.txt","description":"two"}},
    {"text":"done"}]})");
  CommandResult resumed =
      shadowbox({"resume", "opts", "--validation", "relaxed", "--reopen", "--", "-p", "carry on"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(fs::exists(ws_ / "two.txt")) << "the resumed agent kept --allowedTools Bash";
  // run.json keeps the run's command and records each resume's whole command line.
  Poco::JSON::Parser parser;
  auto meta = parser.parse(testing_support::read_file(store_ / "runs/opts/run.json"))
                  .extract<Poco::JSON::Object::Ptr>();
  auto resumes = meta->getArray("resumes");
  ASSERT_EQ(resumes->size(), 1u);
  std::ostringstream command;
  resumes->getObject(0)->getArray("command")->stringify(command);
  for (const char* word : {"\"--allowedTools\",\"Bash\"", "\"--permission-mode\",\"default\"",
                           "\"--resume\"", "\"--fork-session\"", "\"-p\",\"carry on\""}) {
    EXPECT_NE(command.str().find(word), std::string::npos) << word << " in " << command.str();
  }
  EXPECT_EQ(command.str().find("\"go\""), std::string::npos) << "the old prompt is replaced";
  EXPECT_EQ(meta->getArray("command")->size(), 7u) << "the run's own command stays";

  // --only-args: the agent gets only what is given; its own permissions refuse its Bash
  // call, which is recorded as denied by the agent (it never ran).
  start_mock("third", R"({"steps":[
    {"tool":"Bash","id":"toolu_3","input":{"command":"echo three > three.txt","description":"3"}},
    {"text":"done"}]})");
  CommandResult bare = shadowbox({"resume", "opts", "--validation", "relaxed", "--reopen",
                                  "--only-args", "--", "-p", "again"});
  EXPECT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_FALSE(fs::exists(ws_ / "three.txt"));
  CommandResult pre = shadowbox({"show", "pre:toolu_3", "--json"});
  ASSERT_EQ(pre.exit_code, 0) << pre.err;
  auto ledger = parser.parse(pre.out).extract<Poco::JSON::Object::Ptr>()->getObject("ledger");
  EXPECT_FALSE(ledger->getValue<bool>("success"));
  EXPECT_EQ(ledger->getValue<std::string>("result_summary").rfind("denied by the agent: ", 0), 0u)
      << ledger->getValue<std::string>("result_summary");
  EXPECT_TRUE(ledger->optValue<bool>("agent_denied", false));
}

}  // namespace
