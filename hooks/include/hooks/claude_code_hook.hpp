// The Claude Code hook: one hook event (JSON on stdin) in, an answer in Claude
// Code's hook protocol out (exit status, optional JSON on stdout, text on stderr).
//
//   PreToolUse          pre-tool checkpoint; changes made since the last checkpoint
//                       (a person, a background process) are first recorded as a
//                       checkpoint of their own, attributed to no tool
//   PostToolUse         post-tool checkpoint with the tool's result
//   PostToolUseFailure  rollback to the call's pre-tool checkpoint (unless disabled for
//                       the tool, or another call committed changes since: then the
//                       rollback is refused and the refusal recorded), and the agent is
//                       told what happened through additionalContext
//   SessionStart        the agent's session id, transcript path and source, as adapter
//                       state in a LOG slice
//   Stop, SessionEnd    the run is marked complete
//
// Malformed input is reported on stderr with a non-blocking exit status and changes
// nothing. A checkpoint that cannot be taken is loud: the tool call is blocked
// (PreToolUse) or the agent is shown the error (exit 2), and it is written to the
// run's log.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fsnap/host_filesystem.hpp"
#include "sandbox/ledger.hpp"

namespace hooks {

// How the hook behaves.
struct ClaudeCodeHookOptions {
  std::string run = "default";
  bool rollback_on_failure = true;
  std::set<std::string> keep_failed_tools;  // tools whose failures are not rolled back
  std::vector<std::string> secrets;         // values redacted from everything recorded
};

// What to answer Claude Code.
struct HookAnswer {
  int exit_code = 0;        // 0 proceed, 2 blocking error (stderr to the agent), else warning
  std::string stdout_json;  // hook-specific output, or empty
  std::string stderr_text;  // shown to the agent on exit 2, to the user otherwise
  std::string event;        // the event's hook_event_name, if it had one
};

// The same answer for an HTTP hook (Claude Code's `"type": "http"` hooks): a blocking
// answer is a 2xx reply whose JSON blocks (PreToolUse: permissionDecision "deny";
// PostToolUse and PostToolUseFailure: decision "block"; others: a systemMessage), a
// non-blocking error is a 400 reply with the message.
struct HttpHookReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

// Why event_json is not a hook event shadowbox can act on (not JSON, not an object,
// no hook_event_name, a tool event without tool_name or tool_use_id), or nullopt.
std::optional<std::string> event_problem(const std::string& event_json);

// Handles one event for the workspace. Never throws: every failure becomes an answer.
HookAnswer handle_claude_code_event(const std::string& event_json, fsnap::HostFilesystem& workspace,
                                    sandbox::Ledger& ledger, const ClaudeCodeHookOptions& options);

// The HTTP reply that says what answer says.
HttpHookReply to_http_reply(const HookAnswer& answer);

}  // namespace hooks
