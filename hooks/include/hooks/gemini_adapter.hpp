// What the Gemini CLI adapter (adapter_for(AgentKind::kGemini)) is made of, for tests and
// for the curious: the facts are in docs/agents/gemini-cli.md, checked against the
// pinned CLI.
//
//   - Hooks: command hooks in .gemini/settings.json (timeouts in milliseconds), merged
//     into the user's own settings; each carries the run's HOME in its `env`, which
//     survives the CLI's environment sanitising.
//   - Events: BeforeTool and AfterTool (PreToolUse and PostToolUse to the core) with no
//     call id: shadowbox gives each BeforeTool an id of its own, and pairs an AfterTool
//     with the oldest open call of the same tool and input. A shell command's non-zero
//     exit is only text in AfterTool's llmContent ("Exit Code: 3", "Signal: 9"); a
//     tool's own error is tool_response.error.
//   - Answers: {"decision":"deny","reason":...}; {"continue":false,"stopReason":...}
//     ends the agent; {"hookSpecificOutput":{"additionalContext":...}} reaches the model.
//   - Sessions: .gemini/tmp/<project>/chats/session-<time>-<first 8 of id>.jsonl and
//     projects.json; `gemini --resume <id>`, with session retention off (on, a later run
//     deletes a resumed session's files). The model's turn is in the chat before its
//     BeforeTool fires (its calls are added to it when they are done), so the chat as
//     preserved at a call's pre-tool boundary ends with the turn that made the call, and
//     in a chat preserved later that turn is the last one stamped before the call: a new
//     chat without it, under a new id, is the conversation cut there (gemini_cut_session).
//
// Thread-safety: pure functions (gemini_call_id counts in an atomic; gemini_cut_session
// writes a file).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "hooks/agent_adapter.hpp"

namespace hooks {

// The timeout Gemini is given for shadowbox's hooks, in milliseconds.
inline constexpr int kGeminiHookTimeoutMs = 600000;

// Why the call of tool_name whose AfterTool tool_response is response_json failed, or
// nullopt if it did not.
std::optional<std::string> gemini_call_failure(const std::string& tool_name,
                                               const std::string& response_json);

// A new call id for a BeforeTool event: "sbx_<ms since the epoch>_<pid>_<count>".
std::string gemini_call_id();

// settings_json (the user's settings.json, "" for none) with what a run needs: session
// retention off, the API-key authentication when none is chosen. Error kInvalidArgument
// if it is not a JSON object.
std::string gemini_run_settings(const std::string& settings_json);
// settings_json with shadowbox's hooks (command, with env) for BeforeTool, AfterTool,
// SessionStart and SessionEnd added to the user's; without_shadowbox_hooks takes them
// out again.
std::string with_shadowbox_hooks(const std::string& settings_json, const std::string& command,
                                 const boost::filesystem::path& run_home);
std::string without_shadowbox_hooks(const std::string& settings_json);

// The command that resumes session_id of a run started with command: `gemini [its
// options] --resume <id> [its prompt] ARGS`. The run's prompt is repeated only when no
// extra_args are given; with only_extra_args none of its options are.
std::vector<std::string> gemini_resume_argv(const std::vector<std::string>& command,
                                            const std::string& session_id,
                                            const std::vector<std::string>& extra_args,
                                            bool only_extra_args);

// Cuts the conversation of Gemini session point.session_id in home (a run's HOME, its
// .gemini/tmp as preserved at or after the call's pre-tool boundary) just before the
// model's turn that made the call, and leaves the original chat as it was: writes a new
// chat of session new_session_id beside it, holding the messages before that turn.
// Resumed (`gemini --resume <new id>`), the model's next request holds the turns before
// the call and none from it on. Gemini's hooks name no call, so the turn is the chat's
// last model turn written before point.called_at (any message when it is not known),
// with no message sent to the model after it; when that turn names its calls, one must
// be of point.tool_name. Error kNotFound when home holds no chat of the session or no
// such turn; kCorrupt naming the file and line when a chat is not JSON lines or names no
// session, or (called_at given) a message has no time; kConflict when a chat of
// new_session_id's first 8 characters exists; nothing is written then.
SessionCut gemini_cut_session(const boost::filesystem::path& home, const SessionCutPoint& point,
                              const std::string& new_session_id);

// Forks Gemini session session in home as a resume does by default (the CLI's --resume
// appends to the chat it resumes): writes a chat of new_session_id beside the original
// holding all of its messages, and leaves the original as it was. Errors as
// gemini_cut_session's.
SessionCut gemini_fork_session(const boost::filesystem::path& home, const std::string& session,
                               const std::string& new_session_id);

}  // namespace hooks
