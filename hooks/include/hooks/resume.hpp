// Resuming an agent run (docs/conformance/ADAPTER_STATE.md, Resumption Flow): the newest
// agent session a run recorded, the checks a resume makes, and the command and fresh
// HOME it starts the agent with.
//
// Thread-safety: functions of the store; they borrow the process's ShadowRepo.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/agent_session_state.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

// The agent session a run can be resumed from, and what validation looks at.
struct ResumableState {
  // The session to resume: the one asked for, else the newest that did not end and that
  // no resume forked (the fork holds it all), else the newest.
  AgentSession session;
  std::vector<AgentSession> sessions;  // every session the run recorded, oldest first
  std::string run_status;              // the newest RunStatus ("" if none was recorded)
  bool home_preserved = false;         // the session's transcript is in the preserved HOME
  // The run's last activity: its newest checkpoint, the last preservation of its HOME
  // (a transcript change) or the session's newest hook event, whichever is newest.
  std::optional<std::chrono::system_clock::time_point> last_activity;
  // From run.json, what strict validation compares: where the run ran, its agent kind's
  // name ("" if not recorded), the command line `run` was given (the task's identity),
  // and whether it kept its session data (run.capture_state).
  std::string run_workspace;
  std::string run_agent;
  std::vector<std::string> run_command;
  bool capture_state = true;
  long running_pid = 0;  // the supervising process, if it is alive
  // Its supervisor died, and processes of its agent are still being ended by the agent's
  // guard (hooks/run_processes.hpp).
  bool agent_still_running = false;
};

// The agent session of the run to resume (see ResumableState::session), with session_id
// the one of that id; nullopt if the run recorded no session. Error kNotFound if it
// recorded none with session_id.
std::optional<ResumableState> find_resumable_state(const fsnap::Store& store,
                                                   const std::shared_ptr<fsnap::ShadowRepo>& repo,
                                                   const std::string& run,
                                                   const std::string& session_id = "");

// How strictly resume checks the state (run.resume_validation, resume --validation).
using runs::parse_resume_validation;
using runs::ResumeValidation;

// What a resume is checked against.
struct ResumeChecks {
  ResumeValidation validation = ResumeValidation::kStrict;
  std::string workspace;            // where the agent is to resume
  std::chrono::seconds max_age{0};  // run.resume_max_age (strict; 0: no limit)
  std::chrono::system_clock::time_point now;
  // The session may have ended, and the run completed (resume --reopen): the person
  // asks the agent to go on with a conversation that was over.
  bool reopen = false;
  // The command the agent is to go on with (auto_resume: the one `run` was given);
  // strict validation wants the run's own, the prompt's identity. Empty: not checked.
  std::vector<std::string> command;
};

// The reasons state may not be resumed under checks (empty: it may).
//   strict:  the workspace path the session (else the run) recorded is checks.workspace
//            — one recorded nowhere is a reason, never skipped —; the session's agent is
//            the run's; the run's command is checks.command (if given); last activity
//            within max_age; the run not complete; plus relaxed
//   relaxed: a session id, its transcript preserved, the session not ended (resumable);
//            plus none
//   none:    no process of the run alive (its supervisor, or its agent's tree after the
//            supervisor died): never two agents on one run, whatever the validation
// With checks.reopen, an ended session and a complete run are no reasons.
std::vector<std::string> resume_problems(const ResumableState& state, const ResumeChecks& checks);

// What a resume starts.
struct ResumePlan {
  AgentSession session;          // the agent session resumed
  boost::filesystem::path home;  // a fresh HOME rebuilt from the preserved data
  AgentKind agent = AgentKind::kClaudeCode;
  // The agent's adapter's resume_argv:
  //   kClaudeCode: <agent> [the run's own options] --resume <id> [--fork-session] ARGS...
  //   kClaudeSdk: ARGS exactly as given, or else the run's own command.
  //   kCodex: codex [options] [exec [exec options]] resume <id> ARGS...
  //   kGemini: gemini [options] --resume <id> ARGS...
  // where, for Codex and Gemini, <id> is a copy of the session in home (fork_session)
  // unless the resume continues it (fork false).
  std::vector<std::string> argv;
  // kResumeSessionVariable=<id> and kResumeForkVariable=1|0, for every kind.
  std::vector<std::string> env;
  runs::RunMeta meta;  // run.json as the resume starts
};

// What a resume checks and does.
struct ResumeRequest {
  std::string run;
  ResumeChecks checks;     // validation, workspace, max age, now, reopen, command
  std::string session_id;  // the agent session to resume ("": see ResumableState)
  bool fork = true;        // --fork-session (false: --continue)
  // Claude Code: arguments added to the run's own; an SDK application: the command.
  std::vector<std::string> extra_args;
  // Only extra_args, without the options of the command the run was started with
  // (Claude Code only: kInvalidArgument for an SDK application).
  bool only_extra_args = false;
};

// The run run.auto_resume goes on with: of the runs of store whose run.json names
// workspace and, as the command `run` was given, command, the one started last; nullopt
// if there is none. A run.json that cannot be read is passed over.
std::optional<std::string> newest_run_of(const fsnap::Store& store, const std::string& workspace,
                                         const std::vector<std::string>& command);

// Finds, validates and prepares the resume of a run: rebuilds a fresh HOME and builds
// the command for the run's kind of agent (RunMeta::agent, else detect_agent_kind of
// its command). Error kNotFound / kConflict saying why the run cannot be resumed.
ResumePlan prepare_resume(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                          const ResumeRequest& request);

}  // namespace hooks
