// Each agent's reader of its session files' lines, behind its adapter's
// read_session_line. Private to hooks.
#pragma once

#include <optional>
#include <string>

#include "hooks/session_line.hpp"

namespace hooks {

// A Claude Code transcript line: an assistant entry carries message.id, a top-level
// requestId, message.model and message.usage; user and assistant entries are messages.
std::optional<SessionLine> claude_code_session_line(const std::string& line);
// A Codex CLI rollout line: a token_usage_record per response (payload.response_id,
// payload.usage in OpenAI's names, cached input included in input_tokens), the model in
// the turn_context before it, the calls in response_item function_calls.
std::optional<SessionLine> codex_session_line(const std::string& line);
// A Gemini CLI chat file line: a "gemini" message record with id, model and tokens
// (input with cached included, output, thoughts — billed as output).
std::optional<SessionLine> gemini_session_line(const std::string& line);

}  // namespace hooks
