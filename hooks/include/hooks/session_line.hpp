// SessionLine — what one line of an agent's session file (Claude Code's transcript,
// Codex's rollout, Gemini's chat file) says about the run's spend, as the agent's adapter
// reads it (AgentAdapter::read_session_line). TranscriptUsage keeps the counting:
// reading files as they grow, each request once, pricing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runs/pricing.hpp"

namespace hooks {

// One model request as a session file records it (streaming may record it again).
struct UsageRecord {
  std::string key;    // names the request among the agent's ("<message id> <request id>")
  std::string model;  // "": the model the file last named (SessionLine::file_model)
  runs::TokenUsage usage;
  friend bool operator==(const UsageRecord&, const UsageRecord&) = default;
};

// What one line of a session file holds for the spend (each part may be empty).
struct SessionLine {
  std::optional<UsageRecord> request;
  // The model the file's next requests use, when the line names it (Codex's
  // turn_context), else "".
  std::string file_model;
  // The ids of the tool calls a reply asked for.
  std::vector<std::string> tool_calls;
  // A user or assistant message ("<type> <id>"; a streamed reply has one id), else "".
  std::string message;
  friend bool operator==(const SessionLine&, const SessionLine&) = default;
};

}  // namespace hooks
