#include "hooks/agent_session_state.hpp"

#include <algorithm>
#include <mutex>

#include <Poco/JSON/Object.h>

#include "sandbox/slice_types.hpp"

namespace hooks {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;

std::string text(const Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<std::string>(key) : std::string();
}

// The index of the session with id in slice, or slice.size().
std::size_t index_of(const statekit::Slice<AgentSession>& slice, const std::string& id) {
  for (std::size_t i = slice.size(); i-- > 0;) {
    if (slice[i].session_id == id) return i;
  }
  return slice.size();
}

}  // namespace

statekit::Slice<AgentSession> start_session(const statekit::Slice<AgentSession>& slice,
                                            const AgentSession& started) {
  std::size_t at = index_of(slice, started.session_id);
  if (started.session_id.empty() || at == slice.size()) return slice.append(started);
  AgentSession again = started;
  again.captured_at = slice[at].captured_at;
  if (again.started_by.empty()) again.started_by = slice[at].started_by;
  if (again.resumed_from == again.session_id) again.resumed_from = slice[at].resumed_from;
  again.message_count = std::max(again.message_count, slice[at].message_count);
  return slice.replace(at, std::move(again));
}

statekit::Slice<AgentSession> note_activity(const statekit::Slice<AgentSession>& slice,
                                            const AgentSessionActivity& activity) {
  std::size_t at = index_of(slice, activity.session_id);
  if (activity.session_id.empty() || at == slice.size()) return slice;
  AgentSession updated = slice[at];
  updated.last_activity_at = activity.at;
  updated.message_count = std::max(updated.message_count, activity.message_count);
  updated.complete = updated.complete || activity.ended;
  if (updated == slice[at]) return slice;
  return slice.replace(at, std::move(updated));
}

void install_agent_session_reducers(sandbox::Session& session) {
  if (!session.has_reducer<AgentSession, AgentSession>()) {
    session.register_reducer<AgentSession, AgentSession>(start_session);
  }
  if (!session.has_reducer<AgentSession, AgentSessionActivity>()) {
    session.register_reducer<AgentSession, AgentSessionActivity>(note_activity);
  }
}

void register_agent_session_slice_type() {
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::SliceTypes::add<AgentSession>(
        "agent.session", sandbox::SlicePolicy::kLog,
        [](const AgentSession& s) -> Var {
          Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
          o->set("session_id", s.session_id);
          o->set("transcript_path", s.transcript_path);
          o->set("source", s.source);
          o->set("cwd", s.cwd);
          o->set("captured_at", s.captured_at);
          o->set("started_by", s.started_by);
          o->set("last_activity_at", s.last_activity_at);
          o->set("message_count", s.message_count);
          o->set("complete", s.complete);
          o->set("resumed_from", s.resumed_from);
          o->set("agent", s.agent);
          return o;
        },
        [](const Var& v) {
          Object::Ptr o = v.extract<Object::Ptr>();
          AgentSession s{text(o, "session_id"), text(o, "transcript_path"), text(o, "source"),
                         text(o, "cwd"), text(o, "captured_at")};
          // Sessions recorded before these fields existed have none.
          s.started_by = text(o, "started_by");
          s.last_activity_at = text(o, "last_activity_at");
          if (o->has("message_count")) s.message_count = o->getValue<std::size_t>("message_count");
          if (o->has("complete")) s.complete = o->getValue<bool>("complete");
          s.resumed_from = text(o, "resumed_from");
          s.agent = text(o, "agent");
          return s;
        });
    // Sessions stored before the slice was named for every agent.
    sandbox::SliceTypes::add_old_name("agent.session", "claude_code.session");
  });
}

}  // namespace hooks
