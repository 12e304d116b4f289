#include "hooks/agent_event.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "hooks/event_json.hpp"
#include "sandbox/errors.hpp"

namespace hooks {

namespace {

using Poco::JSON::Object;
using sandbox::Error;
using sandbox::ErrorCode;

std::string field(const Object::Ptr& event, const std::string& key, bool required) {
  if (!event->has(key) || event->isNull(key)) {
    if (required) throw Error(ErrorCode::kInvalidArgument, "the event has no \"" + key + "\"");
    return "";
  }
  Poco::Dynamic::Var v = event->get(key);
  if (!v.isString()) {
    // A field shadowbox only reads when present is ignored in another shape.
    if (!required) return "";
    throw Error(ErrorCode::kInvalidArgument, "\"" + key + "\" is not a string");
  }
  return v.extract<std::string>();
}

// The value of key as sent (decoded), or an empty value when the event has none.
Poco::Dynamic::Var value_of(const Object::Ptr& event, const std::string& key) {
  return event->has(key) ? event->get(key) : Poco::Dynamic::Var();
}

}  // namespace

bool AgentEvent::is_tool_event() const {
  return name == "PreToolUse" || name == "PostToolUse" || name == "PostToolUseFailure";
}

AgentEvent parse_agent_event(const std::string& event_json, bool call_ids) {
  Object::Ptr o;
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(readable_event_json(event_json));
    if (parsed.type() != typeid(Object::Ptr)) {
      throw Error(ErrorCode::kInvalidArgument, "the event is not a JSON object");
    }
    o = parsed.extract<Object::Ptr>();
  } catch (const Poco::Exception& e) {
    throw Error(ErrorCode::kInvalidArgument, "not JSON: " + e.displayText());
  }
  AgentEvent event;
  event.name = field(o, "hook_event_name", true);
  event.session_id = field(o, "session_id", event.name == "SessionStart");
  event.transcript_path = field(o, "transcript_path", false);
  event.cwd = field(o, "cwd", false);
  event.source = field(o, "source", false);
  event.reason = field(o, "reason", false);
  bool tool = event.is_tool_event() || event.name == "PermissionDenied";
  event.tool_name = field(o, "tool_name", tool);
  event.tool_use_id = field(o, "tool_use_id", tool && call_ids);
  event.native_name = event.name;
  event.tool_input = value_of(o, "tool_input");
  event.tool_response = value_of(o, "tool_response");
  event.error = value_of(o, "error");
  if (event.name == "PostToolBatch") {
    if (Poco::JSON::Array::Ptr calls = o->getArray("tool_calls")) {
      for (std::size_t i = 0; i < calls->size(); ++i) {
        Object::Ptr call = calls->getObject(static_cast<unsigned>(i));
        if (!call) continue;
        BatchCall c{field(call, "tool_use_id", false), field(call, "tool_name", false),
                    value_of(call, "tool_response")};
        if (!c.tool_use_id.empty()) event.batch.push_back(std::move(c));
      }
    }
  }
  return event;
}

}  // namespace hooks
