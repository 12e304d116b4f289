// AgentEvent — one agent hook event in the core's vocabulary, which is Claude Code's
// (PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, SessionEnd, Stop...).
// parse_agent_event reads an event in Claude Code's shape, which Codex CLI's hooks
// share: command hooks get it on stdin, HTTP hooks as the POST body. Other agents'
// adapters translate their own events into it (agent_adapter.hpp).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <Poco/Dynamic/Var.h>

namespace hooks {

// One call of a batch of tool calls that ended (Claude Code's PostToolBatch).
struct BatchCall {
  std::string tool_use_id;
  std::string tool_name;
  Poco::Dynamic::Var tool_response;  // what the model was given: its result, or why it
                                     // did not run
};

// The fields of an event shadowbox acts on. A tool call's input, result and error are
// kept as the agent sent them (decoded JSON), whole: what a record keeps of them is
// redacted first and cut after (runs::redacted_value_summary, to kInputSummaryLimit
// or kResultSummaryLimit bytes), so that no cut leaves a prefix of a secret.
struct AgentEvent {
  std::string name;  // hook_event_name: PreToolUse, PostToolUse, PostToolUseFailure,
                     // SessionStart, Stop, SessionEnd, ...
  std::string session_id;
  std::string transcript_path;
  std::string cwd;
  std::string source;  // SessionStart: startup, resume, clear, compact
  std::string reason;  // SessionEnd: clear, logout, prompt_input_exit, other;
                       // PermissionDenied: why the agent's permissions refused the call
  std::string tool_name;
  std::string tool_use_id;
  Poco::Dynamic::Var tool_input;     // empty when the event has none
  Poco::Dynamic::Var tool_response;  // empty when the event has none
  Poco::Dynamic::Var error;          // PostToolUseFailure: why the call failed
  // PostToolBatch: the calls of the batch (Claude Code sends it once each of them has
  // ended — or was never run: a call its permissions refused has no PostToolUse).
  std::vector<BatchCall> batch;
  std::string native_name;  // the agent's own name for the event (BeforeTool...)
  std::string agent;        // the adapter that read it (agent_kind_name)
  // The agent gives its tool calls no ids: tool_use_id of a PreToolUse is one shadowbox
  // made up, and an after-tool event (tool_use_id empty) is paired with its call by
  // tool name and input.
  bool unidentified_calls = false;

  // Whether it is one of the tool events (PreToolUse, PostToolUse, PostToolUseFailure).
  bool is_tool_event() const;
  // Codex: an after-tool event whose outcome the agent has not written yet (a sandboxed
  // command that failed leaves no completion before its PostToolUse): the call stays
  // open until a later event finds it (AgentAdapter::reported_outcome).
  bool outcome_pending = false;
};

// The most a record keeps of a call's input, and of its result or error (bytes).
inline constexpr std::size_t kInputSummaryLimit = 4000;
inline constexpr std::size_t kResultSummaryLimit = 1000;

// Parses one event in Claude Code's shape. Error kInvalidArgument saying what is wrong
// when it is not JSON, not an object, has no hook_event_name, is a tool event (or
// PermissionDenied) without tool_name or tool_use_id (unless call_ids is false), or a
// SessionStart without session_id. PostToolBatch's tool_calls without an id are left
// out.
AgentEvent parse_agent_event(const std::string& event_json, bool call_ids = true);

}  // namespace hooks
