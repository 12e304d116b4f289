// What the Codex CLI adapter (adapter_for(AgentKind::kCodex)) is made of, for tests and
// for the curious: the facts are in docs/agents/codex-cli.md, checked against the
// pinned CLI.
//
//   - Hooks: $CODEX_HOME/hooks.json, command hooks in Claude Code's shape. Codex runs
//     only hooks the user trusted — a table per handler in config.toml whose
//     trusted_hash is a SHA-256 of the handler — and skips the others without a word,
//     so shadowbox writes the trust along with the hooks.
//   - Events: PreToolUse and PostToolUse with the model's call id (tool_use_id), but no
//     failure event and no exit status: a failed command is learned from the session's
//     rollout file (the hook's transcript_path), which holds the command's completion
//     before PostToolUse fires — except for a command the sandbox stopped (`codex exec`
//     runs read-only by default): its only end is what the model is given
//     (function_call_output, "Process exited with code 1"), written after PostToolUse
//     is answered. Such a call stays open, and the next event (the next call, the
//     turn's Stop, SessionEnd, or the run's end) ends it as that line says.
//   - Answers: Claude Code's deny; `continue: false` is ignored before a tool (the call
//     would run), so a stop is the supervisor's (it ends the process tree).
//   - Sessions: the rollout under $CODEX_HOME/sessions; `codex exec resume <thread id>`
//     (`codex resume <id>` for the interactive CLI) with a CODEX_HOME holding only
//     config.toml and the rollout. A resume sends the model the rollout's response_item
//     lines in order, so a new rollout holding the lines before a model turn, under a
//     new thread id, is the conversation cut there (codex_cut_session).
//
// Thread-safety: pure functions (codex_call_failure reads a file, codex_cut_session writes
// one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/agent_adapter.hpp"

namespace hooks {

// The timeout Codex is given for shadowbox's tool hooks, in seconds, and for its
// SessionEnd hook (Codex clamps it to 3).
inline constexpr int kCodexToolHookTimeout = 600;
inline constexpr int kCodexSessionEndTimeout = 3;

// "sha256:<hex>": the trusted_hash of a command handler of event (snake_case:
// pre_tool_use...) in a matcher group with matcher ("" for none), as Codex computes it
// (the handler's identity as compact JSON with keys sorted).
std::string codex_trusted_hash(const std::string& event, const std::string& matcher,
                               const std::string& command, int timeout_seconds);

// The hooks.json that runs command for every tool call, turn end, and session start and
// end.
std::string codex_hooks_json(const std::string& command);
// The config.toml tables that trust each handler of codex_hooks_json(command) when it is
// the file hooks_json (an absolute path: it is part of each key).
std::string codex_hook_trust_toml(const boost::filesystem::path& hooks_json,
                                  const std::string& command);

// How call call_id ended as the rollout file says: its completion, or what the model
// was given ("exit code 3: <output>" for a failed command); nullopt if the file says
// nothing of its end yet.
std::optional<ReportedOutcome> codex_call_completion(const boost::filesystem::path& rollout,
                                                     const std::string& call_id);
// Why the shell command call_id failed, as the rollout file says ("exit code 3:
// <output>"), or nullopt if it did not (or the file says nothing of it).
std::optional<std::string> codex_call_failure(const boost::filesystem::path& rollout,
                                              const std::string& call_id);

// argv as `run` starts it: the interactive CLI (no subcommand, or resume or fork) with
// --no-daemon, so that its work runs in its own process — the shared background server
// it starts otherwise outlives the run with the run's HOME, and goes on with the work
// unrecorded. `codex exec` runs in its own process already.
std::vector<std::string> codex_run_argv(const std::vector<std::string>& argv);

// The command that resumes thread session_id of a run started with command: `codex
// [its options] exec [its exec options] resume <id> [prompt] ARGS` for a run started with
// `codex exec`, `codex [its options] resume <id> [prompt] ARGS` otherwise. The run's
// prompt is repeated only when no extra_args are given; with only_extra_args none of its
// options are.
std::vector<std::string> codex_resume_argv(const std::vector<std::string>& command,
                                           const std::string& session_id,
                                           const std::vector<std::string>& extra_args,
                                           bool only_extra_args);

// Cuts the conversation of Codex thread point.session_id in home (a run's HOME, its
// .codex/sessions as preserved at the pre-tool boundary of call point.tool_call_id) just
// before the model's reply that made that call: writes a new rollout of thread
// new_thread_id under .codex/sessions/<today>/ holding the original's lines before that
// reply — its session_meta with the new id and forked_from_id — and leaves the original
// as it was. Resumed (`codex exec resume <new id>`), the model's next request holds the
// turns before the call and none from it on. Error kNotFound when home holds no rollout
// of the thread or none with the call, kCorrupt naming the file and line when a rollout
// is not JSON lines starting with the thread's session_meta, kConflict when a rollout of
// new_thread_id exists; nothing is written then.
SessionCut codex_cut_session(const boost::filesystem::path& home, const SessionCutPoint& point,
                             const std::string& new_thread_id);

// Forks Codex thread thread in home as a resume does by default (Codex's own `fork`
// refuses a rollout outside the HOME it runs in): writes a rollout of new_thread_id
// beside it holding all of the original's lines, its session_meta with the new id and
// forked_from_id, and leaves the original as it was; resuming the new thread goes on
// from where the original stopped. Errors as codex_cut_session's (kCorrupt too when the
// thread has more than one rollout).
SessionCut codex_fork_session(const boost::filesystem::path& home, const std::string& thread,
                              const std::string& new_thread_id);

}  // namespace hooks
