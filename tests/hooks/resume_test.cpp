// Resuming a run: an interactive session killed after a turn ended (Stop) stays
// resumable, strict validation measures age from the run's last activity, a run that is
// still running is not resumed twice, nor one whose agent outlives its killed supervisor
// (nor is another run started on its workspace) until its tree has ended, and a pid the
// kernel gave to another process makes no run running — through `shadowbox hook`,
// `runs` and `resume`; an agent that refuses its session is said to; run.auto_resume and
// run.capture_state; and what each validation mode checks (resume_problems).
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
  // ...and says how to go on with it all the same: the other checks still hold.
  EXPECT_NE(again.err.find("shadowbox resume r --reopen)"), std::string::npos) << again.err;
  CommandResult reopened = shadowbox({"resume", "r", "--reopen"});
  EXPECT_EQ(reopened.exit_code, 0) << reopened.err;
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
  hooks::ResumeChecks checks;
  checks.workspace = ws_.string();
  checks.max_age = std::chrono::hours(24 * 7);
  checks.now = now + std::chrono::hours(24 * 30);
  std::vector<std::string> problems = hooks::resume_problems(*state, checks);
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

// An agent that exits with an error before it reports anything refused the session it
// was asked to take up (Claude Code: "No conversation found with session ID"): said so,
// and the run stays as resumable as it was.
TEST_F(ResumeTest, AnAgentThatRefusesTheSessionIsReportedAndTheRunStaysResumable) {
  runs::RunMeta meta = *runs::RunMeta::load(*store_, "r");
  meta.command = {"false"};
  meta.save(*store_);
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  CommandResult refused = shadowbox({"resume", "r"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("the agent did not take up agent session sess-1"), std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("may have expired, or be unknown to it"), std::string::npos)
      << refused.err;
  Poco::JSON::Object::Ptr info = run_info();
  EXPECT_TRUE(info->getValue<bool>("resumable"));
  EXPECT_EQ(info->getValue<std::string>("session_id"), "sess-1");
}

// run.auto_resume: `run` with the command of a run that crashed here goes on with it;
// with nothing to go on with, it starts a new run and says why.
TEST_F(ResumeTest, AutoResumeGoesOnWithTheCrashedRunOfTheSameCommandElseStartsANewOne) {
  ASSERT_EQ(send("SessionStart", ",\"source\":\"startup\"").exit_code, 0);
  ASSERT_EQ(send("Stop", ",\"stop_hook_active\":false").exit_code, 0);
  fs::path config = temp_ / "auto.yaml";
  write_file(config, "run: {auto_resume: true}\n");
  auto run = [&](std::vector<std::string> command) {
    std::vector<std::string> args = {"--config", config.string(), "run",
                                     "--agent",  "claude-code",   "--"};
    args.insert(args.end(), command.begin(), command.end());
    return shadowbox(args);
  };
  CommandResult resumed = run({"true"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming run r from agent session sess-1"), std::string::npos)
      << resumed.err;
  runs::RunMeta meta = *runs::RunMeta::load(*store_, "r");
  ASSERT_EQ(meta.resumes.size(), 1u);
  // (`true` is an application, claude-sdk: its own command, the session in its
  // environment.)
  EXPECT_EQ(meta.resumes[0].command, std::vector<std::string>{"true"});

  // Now r is complete: strict validation lets it rest, and a new run starts.
  CommandResult fresh = run({"true"});
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_NE(fresh.err.find("run.auto_resume: run r cannot go on (the run is complete); starting "
                           "a new run"),
            std::string::npos)
      << fresh.err;
  // Another command is another task.
  CommandResult other = run({"true", "again"});
  EXPECT_NE(other.err.find("no earlier run of this command here"), std::string::npos) << other.err;
  CommandResult listed = shadowbox({"--json", "runs"});
  Poco::JSON::Parser parser;
  EXPECT_EQ(parser.parse(listed.out).extract<Poco::JSON::Array::Ptr>()->size(), 3u) << listed.out;
  EXPECT_EQ(runs::RunMeta::load(*store_, "r")->resumes.size(), 1u);
}

// run.capture_state false: no agent session data enters the store, and a resume says why
// it cannot go on.
TEST_F(ResumeTest, ARunWithoutCapturedStateKeepsNoTranscriptAndSaysSoOnResume) {
  fs::path config = temp_ / "nocapture.yaml";
  write_file(config, "run: {capture_state: false}\n");
  CommandResult ran = shadowbox({"--config", config.string(), "run", "--agent", "claude-code",
                                 "--run-id", "quiet", "--", "true"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_FALSE(runs::RunMeta::load(*store_, "quiet")->capture_state);
  std::shared_ptr<fsnap::ShadowRepo> repo =
      std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store_->repo_dir(), false));
  EXPECT_FALSE(runs::preserved_home(*repo, "quiet").has_value());
  CommandResult preserve = shadowbox({"preserve", "quiet"});
  EXPECT_EQ(preserve.exit_code, 1);
  EXPECT_NE(preserve.err.find("run.capture_state"), std::string::npos) << preserve.err;

  // What validation says of such a run's session, whatever else is right with it.
  hooks::ResumableState state;
  state.session.session_id = "s";
  state.session.cwd = ws_.string();
  state.capture_state = false;
  hooks::ResumeChecks checks;
  checks.workspace = ws_.string();
  checks.validation = hooks::ResumeValidation::kRelaxed;
  EXPECT_EQ(
      hooks::resume_problems(state, checks),
      std::vector<std::string>{"the run kept no agent session data (run.capture_state was off)"});
}

// What each validation mode asks of the state, one reason at a time.
class ResumeProblemsTest : public ::testing::Test {
 protected:
  ResumeProblemsTest() {
    state_.session.session_id = "s";
    state_.session.cwd = "/w";
    state_.session.agent = "codex";
    state_.run_workspace = "/w";
    state_.run_agent = "codex";
    state_.run_command = {"codex", "exec", "fix it"};
    state_.home_preserved = true;
    checks_.workspace = "/w";
  }
  std::vector<std::string> problems(hooks::ResumeValidation mode) {
    checks_.validation = mode;
    return hooks::resume_problems(state_, checks_);
  }
  hooks::ResumableState state_;
  hooks::ResumeChecks checks_;
};

TEST_F(ResumeProblemsTest, StrictNeverSkipsTheWorkspaceCheck) {
  EXPECT_TRUE(problems(hooks::ResumeValidation::kStrict).empty());
  // The session did not say where it ran: the run's workspace is compared.
  state_.session.cwd.clear();
  state_.run_workspace = "/elsewhere";
  std::vector<std::string> p = problems(hooks::ResumeValidation::kStrict);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "the agent session ran in /elsewhere, not in /w");
  // Recorded nowhere: a reason, not a pass.
  state_.run_workspace.clear();
  p = problems(hooks::ResumeValidation::kStrict);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "neither agent session s nor the run recorded the workspace it ran in");
  EXPECT_TRUE(problems(hooks::ResumeValidation::kRelaxed).empty());
}

TEST_F(ResumeProblemsTest, StrictChecksTheTasksIdentity) {
  state_.session.agent = "gemini";
  std::vector<std::string> p = problems(hooks::ResumeValidation::kStrict);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "agent session s is gemini's, and the run resumes codex");
  state_.session.agent.clear();  // recorded before sessions kept their agent
  EXPECT_TRUE(problems(hooks::ResumeValidation::kStrict).empty());
  // An Agent SDK application runs Claude Code: their sessions are one kind.
  state_.session.agent = "claude-code";
  state_.run_agent = "claude-sdk";
  EXPECT_TRUE(problems(hooks::ResumeValidation::kStrict).empty());
  state_.session.agent = state_.run_agent = "codex";
  checks_.command = {"codex", "exec", "something else"};
  p = problems(hooks::ResumeValidation::kStrict);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], "the run's agent was started with another command line");
  checks_.command = state_.run_command;
  EXPECT_TRUE(problems(hooks::ResumeValidation::kStrict).empty());
}

TEST_F(ResumeProblemsTest, RelaxedWantsAResumableSessionAndReopenGoesOnWithAnEndedOne) {
  state_.session.complete = true;
  state_.run_status = "complete";
  EXPECT_EQ(problems(hooks::ResumeValidation::kRelaxed),
            std::vector<std::string>{"agent session s ended"});
  EXPECT_EQ(problems(hooks::ResumeValidation::kStrict).size(), 2u);
  EXPECT_TRUE(problems(hooks::ResumeValidation::kNone).empty());
  checks_.reopen = true;
  EXPECT_TRUE(problems(hooks::ResumeValidation::kRelaxed).empty());
  EXPECT_TRUE(problems(hooks::ResumeValidation::kStrict).empty());
  // ...and keeps the other checks.
  checks_.workspace = "/other";
  EXPECT_EQ(problems(hooks::ResumeValidation::kStrict).size(), 1u);
  state_.home_preserved = false;
  EXPECT_EQ(
      problems(hooks::ResumeValidation::kRelaxed),
      std::vector<std::string>{"the transcript of agent session s is not in the preserved data"});
}

TEST_F(ResumeProblemsTest, EveryModeRefusesARunWhoseAgentStillRuns) {
  for (hooks::ResumeValidation mode :
       {hooks::ResumeValidation::kStrict, hooks::ResumeValidation::kRelaxed,
        hooks::ResumeValidation::kNone}) {
    state_.running_pid = 4242;
    state_.agent_still_running = false;
    EXPECT_EQ(problems(mode),
              std::vector<std::string>{"the run is still running (shadowbox process 4242)"});
    state_.running_pid = 0;
    state_.agent_still_running = true;
    ASSERT_EQ(problems(mode).size(), 1u);
    EXPECT_NE(problems(mode)[0].find("processes of the run's agent are still running"),
              std::string::npos);
  }
}

}  // namespace
