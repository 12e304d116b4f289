// Resuming a run: an interactive session killed after a turn ended (Stop) stays
// resumable, strict validation measures age from the run's last activity, a run that is
// still running is not resumed twice, nor one whose agent outlives its killed supervisor
// (nor is another run started on its workspace) until its tree has ended, and a pid the
// kernel gave to another process makes no run running — through `shadowbox hook`,
// `runs` and `resume`.
#include <sys/wait.h>
#include <unistd.h>

#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "fsnap/store_layout.hpp"
#include "hooks/agent_hook.hpp"
#include "hooks/agent_session_state.hpp"
#include "hooks/claude_code_home.hpp"
#include "hooks/resume.hpp"
#include "hooks/run_processes.hpp"
#include "hooks/run_slice_types.hpp"
#include "runs/home_preservation.hpp"
#include "runs/ledger_run.hpp"
#include "runs/run_meta.hpp"
#include "supervisor_process.hpp"
#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::write_file;

// The pid of a process that has exited (and was reaped).
long dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

class ResumeTest : public ::testing::Test {
 protected:
  ResumeTest() {
    fs::create_directories(ws_);
    ws_ = fs::canonical(ws_);
    hooks::register_agent_run_slice_types();
    store_ = std::make_unique<fsnap::Store>(fsnap::Store::open(store_dir_, ws_, true));
    // The run as `shadowbox run` left it when it was killed: run.json without an exit,
    // naming a supervisor that is gone, and an agent HOME with the session's transcript.
    // The "agent" is `true`, so that a resume that passes validation succeeds at once.
    runs::RunMeta meta;
    meta.run = "r";
    meta.workspace = ws_.string();
    meta.command = {"true"};
    meta.started_at = "2026-11-23T00:00:00.000000Z";
    meta.pid = dead_pid();
    meta.save(*store_);
    write_file(home_ / ".claude/projects/p/sess-1.jsonl", "{\"turn\":1}\n");
  }

  CommandResult shadowbox(std::vector<std::string> args, const std::string& stdin_data = "") {
    std::vector<std::string> argv = {SHADOWBOX_BIN, "--workspace", ws_.string(), "--store",
                                     store_dir_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv, ws_,
                       {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                        "SHADOWBOX_RUN_HOME=" + home_.string(), "PATH=/usr/bin:/bin"},
                       stdin_data);
  }
  CommandResult send(const std::string& event_name, const std::string& extra = "",
                     const std::string& session = "sess-1", std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {
        SHADOWBOX_BIN, "--workspace", ws_.string(), "--store", store_dir_.string(),
        "hook",        "claude-code", "--run",      "r"};
    env.insert(env.end(), {"SHADOWBOX_CONFIG=", "SHADOWBOX_NO_PROGRESS=1",
                           "SHADOWBOX_RUN_HOME=" + home_.string(), "PATH=/usr/bin:/bin"});
    return run_command(argv, ws_, env,
                       "{\"hook_event_name\":\"" + event_name + "\",\"session_id\":\"" + session +
                           "\",\"transcript_path\":\"t.jsonl\",\"cwd\":\"" + ws_.string() + "\"" +
                           extra + "}");
  }
  Poco::JSON::Object::Ptr run_info() {
    CommandResult r = shadowbox({"--json", "runs"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Poco::JSON::Parser parser;
    auto runs = parser.parse(r.out).extract<Poco::JSON::Array::Ptr>();
    for (std::size_t i = 0; i < runs->size(); ++i) {
      if (runs->getObject(static_cast<unsigned>(i))->getValue<std::string>("run") == "r") {
        return runs->getObject(static_cast<unsigned>(i));
      }
    }
    ADD_FAILURE() << "no run r in " << r.out;
    return new Poco::JSON::Object;
  }

  testing_support::TempDir temp_;
  fs::path ws_ = temp_ / "ws";
  fs::path store_dir_ = temp_ / "store";
  fs::path home_ = temp_ / "home";
  std::unique_ptr<fsnap::Store> store_;
};

TEST_F(ResumeTest, AnInteractiveRunKilledAfterATurnStaysResumable) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  ASSERT_EQ(send("PreToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\"").exit_code, 0);
  ASSERT_EQ(send("PostToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\"").exit_code, 0);
  ASSERT_EQ(send("Stop", ",\"stop_hook_active\":false").exit_code, 0);  // the first reply
  // ...then the agent and shadowbox were killed (run.json names a dead supervisor).
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_TRUE(info->getValue<bool>("resumable"));
  CommandResult resumed = shadowbox({"resume", "r"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  // `true` exited 0: now the run is complete, and strict validation refuses it.
  EXPECT_EQ(run_info()->getValue<std::string>("status"), "complete");
  CommandResult again = shadowbox({"resume", "r"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("the run is complete"), std::string::npos) << again.err;
  // ...and says how to go on with it all the same.
  EXPECT_NE(again.err.find("shadowbox resume r --validation relaxed"), std::string::npos)
      << again.err;
}

TEST_F(ResumeTest, StrictValidationMeasuresAgeFromTheLastActivity) {
  // The agent session started 30 days ago (its SessionStart was recorded then)...
  auto now = std::chrono::system_clock::now();
  {
    runs::LedgerRunOptions options;
    options.run = "r";
    options.env.clock = std::make_shared<fsnap::FixedClock>(now - std::chrono::hours(24 * 30));
    runs::LedgerRun run(*store_, options);
    std::string event =
        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"sess-1\","
        "\"source\":\"startup\",\"cwd\":\"" +
        ws_.string() + "\"}";
    ASSERT_EQ(hooks::handle_claude_code_event(event, run, {}).exit_code, 0);
    runs::HomePreserver(*store_, run.repo(), "r", home_, hooks::claude_code_preserved_parts(), {})
        .preserve_now();
  }
  std::shared_ptr<fsnap::ShadowRepo> repo =
      std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store_->repo_dir(), false));
  std::optional<hooks::ResumableState> state = hooks::find_resumable_state(*store_, repo, "r");
  ASSERT_TRUE(state.has_value());
  ASSERT_TRUE(state->last_activity.has_value());
  std::vector<std::string> problems =
      hooks::resume_problems(*state, hooks::ResumeValidation::kStrict, ws_.string(),
                             std::chrono::hours(24 * 7), now + std::chrono::hours(24 * 30));
  ASSERT_EQ(problems.size(), 1u) << "idle for 30 days";
  EXPECT_NE(problems[0].find("last activity"), std::string::npos) << problems[0];

  // ...but the run was busy until now: a tool call a moment ago.
  ASSERT_EQ(send("PreToolUse", ",\"tool_name\":\"Bash\",\"tool_use_id\":\"t1\"").exit_code, 0);
  CommandResult resumed = shadowbox({"resume", "r", "--validation", "strict"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
}

TEST_F(ResumeTest, ARunThatIsStillRunningIsNotResumedTwice) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  runs::RunMeta meta = *runs::RunMeta::load(*store_, "r");
  meta.pid = ::getppid();  // alive
  meta.save(*store_);
  EXPECT_EQ(run_info()->getValue<std::string>("status"), "running");
  for (const char* mode : {"strict", "relaxed"}) {
    CommandResult r = shadowbox({"resume", "r", "--validation", mode});
    EXPECT_EQ(r.exit_code, 1) << mode;
    EXPECT_NE(r.err.find("still running"), std::string::npos) << r.err;
  }
}

TEST_F(ResumeTest, ARunWhoseAgentOutlivesItsSupervisorIsNotResumedUntilItsTreeHasEnded) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  // The run's supervisor, its agent ignoring SIGTERM; then kill -9 of the supervisor,
  // its agent's guard held still: the agent lives on, its supervisor dead.
  std::optional<testing_support::SupervisorProcess> supervisor;
  supervisor.emplace(std::vector<std::string>{"sh", "-c", "trap '' TERM; sleep 300"}, ws_,
                     std::chrono::milliseconds(100), store_.get(), "r");
  runs::RunMeta meta = *runs::RunMeta::load(*store_, "r");
  meta.pid = supervisor->pid();
  meta.agent_pid = supervisor->agent();
  meta.save(*store_);
  EXPECT_EQ(run_info()->getValue<std::string>("status"), "running");
  ASSERT_EQ(::kill(supervisor->guard(), SIGSTOP), 0);
  supervisor->kill();
  ASSERT_TRUE(runs::process_alive(supervisor->agent()));

  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_FALSE(info->getValue<bool>("resumable")) << "its agent still runs";
  for (const char* mode : {"strict", "relaxed", "none"}) {
    CommandResult r = shadowbox({"resume", "r", "--validation", mode});
    EXPECT_EQ(r.exit_code, 1) << mode;
    EXPECT_NE(r.err.find("processes of the run's agent are still running"), std::string::npos)
        << r.err;
  }
  // Nor does another run start on its files meanwhile.
  CommandResult other =
      shadowbox({"run", "--agent", "claude-sdk", "--run-id", "other", "--", "touch", "x"});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.err.find("whose supervisor ended"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(ws_ / "x"));

  // Its guard ends the tree; then the run is resumable.
  ::kill(supervisor->guard(), SIGCONT);
  EXPECT_TRUE(testing_support::eventually([&] {
    return hooks::run_processes(*store_, "r", std::nullopt) == hooks::RunProcesses::kNone;
  }));
  EXPECT_FALSE(runs::process_alive(supervisor->agent()));
  supervisor.reset();
  EXPECT_TRUE(run_info()->getValue<bool>("resumable"));
  CommandResult resumed = shadowbox({"resume", "r"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
}

// A run.json names its supervisor's pid, which the kernel hands to another process once
// the supervisor is gone: that process does not make the run running.
TEST_F(ResumeTest, APidGivenToAnotherProcessMakesNoRunRunning) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  { hooks::RunProcessLocks supervised = hooks::RunProcessLocks::take(*store_, "r"); }
  runs::RunMeta meta = *runs::RunMeta::load(*store_, "r");
  meta.pid = ::getppid();  // alive, and not the run's
  meta.save(*store_);
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_EQ(info->getValue<std::string>("status"), "crashed");
  EXPECT_TRUE(info->getValue<bool>("resumable"));
  CommandResult resumed = shadowbox({"resume", "r"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
}

TEST_F(ResumeTest, EverySessionOfARunIsKeptAndResumeTakesTheOneThatCanGoOn) {
  write_file(home_ / ".claude/projects/p/sess-2.jsonl", "{\"turn\":1}\n");
  write_file(home_ / ".claude/projects/p/sess-3.jsonl", "{\"turn\":1}\n");
  // An application that ran two SDK sessions: the second ended, the first did not.
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"", "sess-2").exit_code, 0);
  ASSERT_EQ(send("SessionEnd", ",\"reason\":\"other\"", "sess-2").exit_code, 0);
  // The session recorded as complete (SessionEnd) made the run complete; the agent was
  // killed while sess-1 went on.
  Poco::JSON::Object::Ptr info = run_info();
  Poco::JSON::Array::Ptr sessions = info->getArray("sessions");
  ASSERT_EQ(sessions->size(), 2u);
  EXPECT_EQ(sessions->getObject(0)->getValue<std::string>("session_id"), "sess-1");
  EXPECT_FALSE(sessions->getObject(0)->getValue<bool>("complete"));
  EXPECT_TRUE(sessions->getObject(1)->getValue<bool>("complete"));
  EXPECT_EQ(info->getValue<std::string>("session_id"), "sess-1")
      << "the newest session that did not end";

  CommandResult unknown = shadowbox({"resume", "r", "--session", "sess-9"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("recorded no agent session 'sess-9'"), std::string::npos)
      << unknown.err;
  CommandResult ended = shadowbox({"resume", "r", "--session", "sess-2", "--validation", "strict"});
  EXPECT_EQ(ended.exit_code, 1);
  EXPECT_NE(ended.err.find("agent session sess-2 ended"), std::string::npos) << ended.err;
  CommandResult chosen = shadowbox({"resume", "r", "--session", "sess-2", "--validation", "none"});
  EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
  EXPECT_NE(chosen.err.find("from agent session sess-2"), std::string::npos) << chosen.err;

  // A resume of sess-1 that forks it: the fork supersedes it, so the run goes on from
  // the fork.
  ASSERT_EQ(
      send("SessionStart", ",\"source\":\"fork\"", "sess-3", {"SHADOWBOX_RESUME_SESSION_ID=sess-1"})
          .exit_code,
      0);
  info = run_info();
  ASSERT_EQ(info->getArray("sessions")->size(), 3u);
  EXPECT_EQ(info->getArray("sessions")->getObject(2)->getValue<std::string>("resumed_from"),
            "sess-1");
  EXPECT_EQ(info->getValue<std::string>("session_id"), "sess-3");
}

}  // namespace
