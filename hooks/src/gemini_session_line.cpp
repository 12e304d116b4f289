// Gemini CLI's chat file lines, as its adapter reads them for the spend.
#include "session_line_json.hpp"
#include "session_lines.hpp"

namespace hooks {

using Poco::JSON::Object;
using session_line_json::less;
using session_line_json::text;
using session_line_json::tokens;

std::optional<SessionLine> gemini_session_line(const std::string& line) {
  if (line.find("\"type\":\"gemini\"") == std::string::npos ||
      line.find("\"tokens\"") == std::string::npos) {
    return std::nullopt;
  }
  SessionLine out;
  Object::Ptr entry = session_line_json::parse(line);
  Object::Ptr usage = entry ? entry->getObject("tokens") : nullptr;
  if (!usage || text(entry, "type") != "gemini") return out;
  runs::TokenUsage u;
  u.cache_read = tokens(usage, "cached");
  u.input = less(tokens(usage, "input"), u.cache_read);
  u.output = tokens(usage, "output") + tokens(usage, "thoughts");
  out.request = UsageRecord{"gemini " + text(entry, "id"), text(entry, "model"), u};
  return out;
}

}  // namespace hooks
