// Codex CLI's rollout lines, as its adapter reads them for the spend.
#include "session_line_json.hpp"
#include "session_lines.hpp"

namespace hooks {

using Poco::JSON::Object;
using session_line_json::less;
using session_line_json::text;
using session_line_json::tokens;

std::optional<SessionLine> codex_session_line(const std::string& line) {
  if (line.find("\"type\":\"token_usage_record\"") == std::string::npos &&
      line.find("\"type\":\"turn_context\"") == std::string::npos &&
      line.find("\"type\":\"function_call\"") == std::string::npos) {
    return std::nullopt;
  }
  SessionLine out;
  Object::Ptr entry = session_line_json::parse(line);
  Object::Ptr payload = entry ? entry->getObject("payload") : nullptr;
  if (!payload) return out;
  std::string type = text(entry, "type");
  if (type == "turn_context") {
    out.file_model = text(payload, "model");
  } else if (type == "response_item" && text(payload, "type") == "function_call") {
    out.tool_calls.push_back(text(payload, "call_id"));
  } else if (type == "token_usage_record") {
    Object::Ptr usage = payload->getObject("usage");
    std::string id = text(payload, "response_id");
    if (!usage || id.empty()) return out;
    runs::TokenUsage u;
    u.cache_read = tokens(usage, "cached_input_tokens");
    u.input = less(tokens(usage, "input_tokens"), u.cache_read);
    u.cache_write_5m = tokens(usage, "cache_write_input_tokens");
    u.output = tokens(usage, "output_tokens");        // reasoning included, as OpenAI counts it
    out.request = UsageRecord{"codex " + id, "", u};  // the model: the turn_context's
  }
  return out;
}

}  // namespace hooks
