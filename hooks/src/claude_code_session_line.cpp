// Claude Code's transcript lines, as its adapter reads them for the spend.
#include <Poco/JSON/Array.h>

#include "session_line_json.hpp"
#include "session_lines.hpp"

namespace hooks {

namespace {

using Poco::JSON::Object;
using session_line_json::text;
using session_line_json::tokens;

runs::TokenUsage usage_of(const Object::Ptr& usage) {
  runs::TokenUsage u;
  u.input = tokens(usage, "input_tokens");
  u.output = tokens(usage, "output_tokens");
  u.cache_read = tokens(usage, "cache_read_input_tokens");
  Object::Ptr split = usage->getObject("cache_creation");
  u.cache_write_5m = tokens(split, "ephemeral_5m_input_tokens");
  u.cache_write_1h = tokens(split, "ephemeral_1h_input_tokens");
  std::uint64_t written = tokens(usage, "cache_creation_input_tokens");
  // Without a split (or one that misses some), the rest is priced as 5-minute writes.
  if (written > u.cache_write_5m + u.cache_write_1h) {
    u.cache_write_5m = written - u.cache_write_1h;
  }
  return u;
}

}  // namespace

std::optional<SessionLine> claude_code_session_line(const std::string& line) {
  // Only messages matter (and of them, assistant entries with usage for the cost); the
  // other lines are skipped unparsed.
  bool message_line = line.find("\"type\":\"user\"") != std::string::npos ||
                      line.find("\"type\":\"assistant\"") != std::string::npos;
  bool usage_line = line.find("\"usage\"") != std::string::npos &&
                    line.find("\"assistant\"") != std::string::npos;
  if (!message_line && !usage_line) return std::nullopt;
  SessionLine out;
  Object::Ptr entry = session_line_json::parse(line);
  if (!entry) return out;  // not JSON: not an entry to count
  std::string type = text(entry, "type");
  Object::Ptr message = entry->getObject("message");
  if (type == "user" || type == "assistant") {
    // A streamed reply is written several times: its message id counts it once.
    std::string key = type == "assistant" ? text(message, "id") : "";
    if (key.empty()) key = text(entry, "uuid");
    if (!key.empty()) out.message = type + " " + key;
  }
  if (type != "assistant" || !message) return out;
  Object::Ptr usage = message->getObject("usage");
  if (!usage) return out;
  std::string id = text(message, "id");
  if (id.empty()) id = text(entry, "uuid");
  if (Poco::JSON::Array::Ptr content = message->getArray("content")) {
    for (std::size_t i = 0; i < content->size(); ++i) {
      Object::Ptr block = content->getObject(static_cast<unsigned>(i));
      if (block && text(block, "type") == "tool_use") out.tool_calls.push_back(text(block, "id"));
    }
  }
  out.request =
      UsageRecord{id + " " + text(entry, "requestId"), text(message, "model"), usage_of(usage)};
  return out;
}

}  // namespace hooks
