#include "hooks/claude_code_state.hpp"

#include <mutex>

#include <Poco/JSON/Object.h>

#include "hooks/agent_spend.hpp"
#include "sandbox/slice_types.hpp"

namespace hooks {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;

std::string text(const Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<std::string>(key) : std::string();
}

}  // namespace

void register_claude_code_slice_types() {
  register_agent_spend_slice_type();
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::SliceTypes::add<ClaudeCodeSession>(
        "claude_code.session", sandbox::SlicePolicy::kLog,
        [](const ClaudeCodeSession& s) -> Var {
          Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
          o->set("session_id", s.session_id);
          o->set("transcript_path", s.transcript_path);
          o->set("source", s.source);
          o->set("cwd", s.cwd);
          o->set("captured_at", s.captured_at);
          return o;
        },
        [](const Var& v) {
          Object::Ptr o = v.extract<Object::Ptr>();
          return ClaudeCodeSession{text(o, "session_id"), text(o, "transcript_path"),
                                   text(o, "source"), text(o, "cwd"), text(o, "captured_at")};
        });
  });
}

}  // namespace hooks
