// ClaudeCodeEvent — one Claude Code hook event as shadowbox reads it: the one place
// where an event's JSON is parsed. Command hooks get it on stdin, HTTP hooks as the
// POST body; both carry the same fields (../shared/reference/agents.md).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>

namespace hooks {

// The fields of an event shadowbox acts on. Inputs and results are kept as short
// one-object summaries (JSON text), not whole.
struct ClaudeCodeEvent {
  std::string name;  // hook_event_name: PreToolUse, PostToolUse, PostToolUseFailure,
                     // SessionStart, Stop, SessionEnd, ...
  std::string session_id;
  std::string transcript_path;
  std::string cwd;
  std::string source;  // SessionStart: startup, resume, clear, compact
  std::string reason;  // SessionEnd: clear, logout, prompt_input_exit, other
  std::string tool_name;
  std::string tool_use_id;
  std::string tool_input;     // summary of tool_input (at most kInputSummaryLimit bytes)
  std::string tool_response;  // summary of tool_response (at most kResultSummaryLimit)
  std::string error;          // PostToolUseFailure: summary of error

  // Whether it is one of the tool events (PreToolUse, PostToolUse, PostToolUseFailure).
  bool is_tool_event() const;
};

inline constexpr std::size_t kInputSummaryLimit = 4000;
inline constexpr std::size_t kResultSummaryLimit = 1000;

// Parses one event. Error kInvalidArgument saying what is wrong when it is not JSON,
// not an object, has no hook_event_name, is a tool event without tool_name or
// tool_use_id, or a SessionStart without session_id.
ClaudeCodeEvent parse_claude_code_event(const std::string& event_json);
// Why event_json is not an event shadowbox can act on, or nullopt.
std::optional<std::string> event_problem(const std::string& event_json);

}  // namespace hooks
