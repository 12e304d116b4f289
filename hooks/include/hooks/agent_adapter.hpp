// AgentAdapter — what shadowbox needs to know of one coding agent: how to read its hook
// events into the core's vocabulary (agent_event.hpp) and answer them in its protocol,
// how to prepare the ephemeral HOME it runs with (the user's own configuration carried
// in without credentials, shadowbox's hooks installed where the agent runs them), what
// of that HOME is its session data, and how a session of it is resumed. The transaction
// core (agent_hook.hpp) and `shadowbox run` (agent_run.hpp) go through it alone.
//
// There is one adapter per AgentKind (adapter_for). Adding an agent takes more than its
// adapter (a kind, its session files' spend, its prices, ...): hooks/README.md lists it.
//
//   const AgentAdapter& codex = adapter_for(AgentKind::kCodex);
//   AgentEvent event = codex.parse_event(json);          // PreToolUse, ...
//   HookAnswer answer = codex.answer(event, verdict);    // its stdout and exit status
//
// Thread-safety: adapters are immutable; their functions may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/agent_event.hpp"
#include "hooks/agent_kind.hpp"
#include "hooks/claude_code_user_setup.hpp"
#include "hooks/hook_answer.hpp"
#include "hooks/session_line.hpp"
#include "runs/run_settings.hpp"

namespace hooks {

// Where the user's own agent configurations are (never changed by a run).
struct UserAgentSetup {
  UserClaudeSetup claude;              // HOME and $CLAUDE_CONFIG_DIR
  boost::filesystem::path codex_home;  // $CODEX_HOME, else <HOME>/.codex
  boost::filesystem::path gemini_dir;  // $GEMINI_CLI_HOME/.gemini, else <HOME>/.gemini
  static UserAgentSetup from_environment();
};

// What preparing a run's HOME is given.
struct HomeRequest {
  boost::filesystem::path home;       // the run's HOME (exists)
  boost::filesystem::path workspace;  // where the agent works
  UserAgentSetup user;
  runs::HomeSettings settings;  // config run.home
  std::function<void(const std::string&)> warn;
  // Where the person's answers to the agent's own questions are kept between runs
  // (fsnap::layout::agent_answers_file), or empty: not kept.
  boost::filesystem::path answers;
};

// A run's HOME while the run lasts.
class PreparedHome {
 public:
  virtual ~PreparedHome() = default;
  // Called about every second while the agent runs (Claude Code's login is kept in step).
  virtual void tick() {}
  // The run is over: what was carried in (configuration, logins) is removed; the
  // session data stays. Idempotent; never throws.
  virtual void finish() = 0;
  // The paths (relative to the HOME) finish removes but for the login, which is found by
  // its name: what the next run removes if this one never finishes (home_leftovers.hpp).
  virtual std::vector<std::string> carried() const = 0;
};

// How shadowbox's hooks reach it.
struct HookEndpoints {
  std::string command;   // a command hook: this executable, bound to the run and the agent
  std::string http_url;  // Claude Code's HTTP hooks, answered in the run's process ("": none)
};

// What a resume starts the agent with.
struct ResumeCommand {
  std::vector<std::string> command;  // the run's own command line (its newest resume's)
  std::string session_id;            // the agent session to resume
  std::vector<std::string> extra_args;
  bool only_extra_args = false;  // resume --only-args: the run's own options are not repeated
  bool fork = true;              // Claude Code: a fork of the session (false: --continue)
  // A rewind's SessionCut::resume_args: after the session's own arguments, before
  // extra_args.
  std::vector<std::string> cut_args;
};

// The tool call a conversation is cut before (`shadowbox rewind`).
struct SessionCutPoint {
  std::string session_id;    // the agent session the call was made in
  std::string tool_call_id;  // the call, as the ledger names it (Gemini: gemini_call_id's)
  std::string tool_name;
  std::string tool_input;  // the call's input as the ledger kept it (may be shortened)
  // When the call's pre-tool checkpoint was made (its created_at), if known: after the
  // agent wrote the turn that made the call, before anything that followed. An agent
  // whose hooks name no call (Gemini) finds that turn by it in any preserved HOME.
  std::optional<std::chrono::system_clock::time_point> called_at;
};

// A conversation cut by cut_session: how to resume it.
struct SessionCut {
  std::string session_id;                // the session to resume (a new one if the cut forked)
  std::vector<std::string> resume_args;  // added to the resume command, before its ARGS
};

// How a tool call ended, as the agent wrote it in its session file.
struct ReportedOutcome {
  bool success = true;
  std::string summary;           // what it returned, or why it failed ("exit code 1: ...")
  std::optional<int> exit_code;  // a shell command's
  friend bool operator==(const ReportedOutcome&, const ReportedOutcome&) = default;
};

// One coding agent, as shadowbox supervises it.
class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;

  virtual AgentKind kind() const = 0;
  // The name of the hook subcommand and of run.json's "agent": agent_kind_name(kind()).
  std::string name() const { return std::string(agent_kind_name(kind())); }

  // Reads one hook event. Error kInvalidArgument saying what is wrong when it is not one.
  virtual AgentEvent parse_event(const std::string& event_json) const = 0;
  // The verdict on event as the agent reads it.
  virtual HookAnswer answer(const AgentEvent& event, const HookVerdict& verdict) const = 0;
  // Whether it reports its own cost (Claude Code's OpenTelemetry logs, ReportedCost).
  virtual bool reports_cost() const { return false; }
  // Whether its hooks can be answered over HTTP by the run's own process.
  virtual bool http_hooks() const { return false; }
  // Whether the model reads what a before-tool answer adds to its context (else only an
  // after-tool answer tells it something).
  virtual bool context_before_tool() const { return false; }

  // Prepares the run's HOME: the user's configuration carried in (without credentials).
  virtual std::unique_ptr<PreparedHome> prepare_home(const HomeRequest& request) const = 0;
  // Installs shadowbox's hooks in home (prepared), so that the agent runs them without
  // asking; uninstall_hooks takes them out again (never throws).
  virtual void install_hooks(const boost::filesystem::path& home,
                             const HookEndpoints& endpoints) const = 0;
  virtual void uninstall_hooks(const boost::filesystem::path& home) const = 0;
  // NAME=VALUE the agent runs with besides HOME and the configured run.env (its home's
  // locations, mostly), and the run.env names it must not inherit.
  virtual std::vector<std::string> environment(const boost::filesystem::path& home) const = 0;
  virtual std::vector<std::string> withheld_variables() const { return {}; }
  // The command line the agent is started with for argv (a run's or a resume's): argv,
  // or argv with what keeps the agent inside the run (Codex's TUI: no background
  // server that would outlive it).
  virtual std::vector<std::string> run_argv(const std::vector<std::string>& argv) const {
    return argv;
  }
  // Whether an agent that exited so asks to be started again with the same command line,
  // as its own launcher would (Gemini CLI, run as one process, after a change of folder
  // trust): `run` does, the run going on.
  virtual bool asks_to_start_again(int exit_status) const {
    (void)exit_status;
    return false;
  }

  // Its session data in a HOME (paths relative to it), preserved at every boundary.
  virtual std::vector<std::string> preserved_parts() const = 0;
  // Whether a path of a preserved HOME (relative) holds session session_id's transcript.
  virtual bool is_session_path(const std::string& path, const std::string& session_id) const = 0;
  // Whether home holds session session_id's transcript.
  bool has_session_data(const boost::filesystem::path& home, const std::string& session_id) const;
  // Moves what home keeps of its sessions by working directory from workspace from to
  // workspace to (a run recovered on another machine, at another path). Nothing for
  // agents that do not key sessions by it.
  virtual void rekey_session_data(const boost::filesystem::path& /*home*/,
                                  const std::string& /*from*/, const std::string& /*to*/) const {}
  // For an agent that cannot fork a session as it resumes it (Codex, Gemini): a copy of
  // session_id in home (a resume's fresh HOME) under a new id, which the resume then goes
  // on with, the original left as it was. nullopt for an agent that forks on its own
  // (Claude Code's --fork-session; an application, told by kResumeForkVariable).
  virtual std::optional<SessionCut> fork_session(const boost::filesystem::path& /*home*/,
                                                 const std::string& /*session_id*/) const {
    return std::nullopt;
  }
  // The command that resumes a session. Error kInvalidArgument for a request it cannot do.
  virtual std::vector<std::string> resume_argv(const ResumeCommand& request) const = 0;
  // Cuts the conversation of point.session_id in home (a HOME rebuilt for a new run from
  // data preserved at or after the call's pre-tool boundary) just before the model's turn that
  // made the call: resumed as the returned SessionCut says (with a fork), the model's
  // next request holds every turn before that call and none from it on. Error kNotFound
  // when home does not hold the session or the call; kInvalidArgument (the default) for
  // an agent whose conversation shadowbox cannot cut.
  virtual SessionCut cut_session(const boost::filesystem::path& home,
                                 const SessionCutPoint& point) const;

  // Reads one line of its session files (run_transcripts: Claude Code's transcripts,
  // Codex's rollouts, Gemini's chat files) for the run's spend: the request it records,
  // the calls it asks for, ... nullopt when the line is not of its agent's shape, so
  // that TranscriptUsage, which keeps the counting, asks another adapter.
  virtual std::optional<SessionLine> read_session_line(const std::string& line) const = 0;

  // Said when files changed in a run whose agent sent no hook event: why its hooks may
  // not have reached shadowbox.
  virtual std::string silent_hooks_hint() const = 0;

  // Whether the agent may write a call's outcome only after its after-tool event
  // (AgentEvent::outcome_pending: Codex), so that later events look for it.
  virtual bool late_outcomes() const { return false; }
  // The outcome of call_id as the agent's session file transcript says it, once it does;
  // nullopt while it does not (the call runs, or its after-tool event is being
  // answered). Only for late_outcomes().
  virtual std::optional<ReportedOutcome> reported_outcome(
      const boost::filesystem::path& /*transcript*/, const std::string& /*call_id*/) const {
    return std::nullopt;
  }
};

// The adapter of kind.
const AgentAdapter& adapter_for(AgentKind kind);

}  // namespace hooks
