#include "sandbox/containment.hpp"

#include <mutex>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/slice_types.hpp"

#include "session_json.hpp"

namespace sandbox {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Array;
using Poco::JSON::Object;
using session_json::object_of;
using session_json::string_field;

Object::Ptr object() {
  return new Object(Poco::JSON_PRESERVE_KEY_ORDER);
}

double number(const Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<double>(key) : 0;
}

std::string time_text(policy::TimePoint t) {
  return fsnap::format_timestamp(t);
}

policy::TimePoint time_of(const Object::Ptr& o, const std::string& key) {
  std::optional<policy::TimePoint> t = fsnap::parse_timestamp(string_field(o, key));
  return t.value_or(policy::TimePoint{});
}

policy::Decision decision_of(const std::string& name) {
  for (policy::Decision d : {policy::Decision::kAllow, policy::Decision::kDegrade,
                             policy::Decision::kRetry, policy::Decision::kHalt}) {
    if (policy::to_string(d) == name) return d;
  }
  throw Error(ErrorCode::kInvalidArgument, "unknown decision " + fsnap::quote_input(name));
}

Var encode_state(const policy::ContainmentState& s) {
  Object::Ptr o = object();
  o->set("step_count", s.step_count);
  o->set("refused_count", s.refused_count);
  o->set("refused_in_a_row", s.refused_in_a_row);
  o->set("retries_used", s.retries_used);
  o->set("cost_usd", s.cost_usd);
  o->set("aborted", s.aborted);
  o->set("abort_reason", s.abort_reason);
  o->set("halted_by", s.halted_by ? Var(std::string(policy::to_string(*s.halted_by))) : Var());
  o->set("started_at", time_text(s.started_at));
  o->set("next_node", s.next_node);
  Object::Ptr repeat = object();
  repeat->set("key", s.repeat.key);
  repeat->set("fingerprint", s.repeat.fingerprint);
  repeat->set("count", s.repeat.count);
  o->set("repeat", repeat);
  Object::Ptr circuits = object();
  for (const auto& [key, c] : s.circuits) {
    Object::Ptr item = object();
    item->set("state", std::string(policy::to_string(c.state)));
    item->set("consecutive_failures", c.consecutive_failures);
    item->set("opened_at", time_text(c.opened_at));
    item->set("trial_in_flight", c.trial_in_flight);
    item->set("trial_at", time_text(c.trial_at));
    circuits->set(key, item);
  }
  o->set("circuits", circuits);
  Array::Ptr window = new Array;
  for (const policy::WindowEntry& e : s.window) {
    Object::Ptr item = object();
    item->set("from", time_text(e.from));
    item->set("at", time_text(e.at));
    item->set("cost_usd", e.cost_usd);
    item->set("calls", e.calls);
    window->add(item);
  }
  o->set("window", window);
  Array::Ptr events = new Array;
  for (const policy::SafetyEvent& e : s.events) events->add(safety_event_json(e));
  o->set("events", events);
  return o;
}

policy::ContainmentState decode_state(const Var& v) {
  Object::Ptr o = object_of(v, "a containment state");
  policy::ContainmentState s;
  s.step_count = static_cast<std::size_t>(number(o, "step_count"));
  s.refused_count = static_cast<std::size_t>(number(o, "refused_count"));
  s.refused_in_a_row = static_cast<std::size_t>(number(o, "refused_in_a_row"));
  s.retries_used = static_cast<std::size_t>(number(o, "retries_used"));
  s.cost_usd = number(o, "cost_usd");
  s.aborted = o->has("aborted") && o->getValue<bool>("aborted");
  s.abort_reason = string_field(o, "abort_reason");
  if (std::string halted = string_field(o, "halted_by"); !halted.empty()) {
    s.halted_by = policy::parse_stop_reason(halted);
  }
  s.started_at = time_of(o, "started_at");
  s.next_node = static_cast<std::size_t>(o->optValue<double>("next_node", 1));
  if (s.next_node == 0) s.next_node = 1;
  if (o->has("repeat")) {
    Object::Ptr repeat = object_of(o->get("repeat"), "a repeat streak");
    s.repeat = {string_field(repeat, "key"), string_field(repeat, "fingerprint"),
                static_cast<std::size_t>(number(repeat, "count"))};
  }
  if (Object::Ptr circuits = o->getObject("circuits")) {
    for (const auto& [key, value] : *circuits) {
      Object::Ptr item = object_of(value, "a circuit");
      policy::CircuitStatus c;
      std::string state = string_field(item, "state");
      c.state = state == "open"        ? policy::CircuitState::kOpen
                : state == "half_open" ? policy::CircuitState::kHalfOpen
                                       : policy::CircuitState::kClosed;
      c.consecutive_failures = static_cast<std::size_t>(number(item, "consecutive_failures"));
      c.opened_at = time_of(item, "opened_at");
      c.trial_in_flight = item->has("trial_in_flight") && item->getValue<bool>("trial_in_flight");
      c.trial_at = time_of(item, "trial_at");
      s.circuits.emplace(key, c);
    }
  }
  if (Array::Ptr window = o->getArray("window")) {
    for (std::size_t i = 0; i < window->size(); ++i) {
      Object::Ptr item = object_of(window->get(static_cast<unsigned>(i)), "a window entry");
      policy::TimePoint at = time_of(item, "at");
      policy::TimePoint from = item->has("from") ? time_of(item, "from") : at;
      s.window.push_back(
          policy::WindowEntry{from, at, number(item, "cost_usd"),
                              static_cast<std::size_t>(item->optValue<double>("calls", 1))});
    }
  }
  if (Array::Ptr events = o->getArray("events")) {
    for (std::size_t i = 0; i < events->size(); ++i) {
      s.events.push_back(safety_event_from_json(events->get(static_cast<unsigned>(i))));
    }
  }
  return s;
}

}  // namespace

Var safety_event_json(const policy::SafetyEvent& e) {
  Object::Ptr o = object();
  o->set("event_type", std::string(policy::to_string(e.type)));
  o->set("halt_reason", std::string(policy::halt_reason_name(e.type)));
  o->set("decision", std::string(policy::to_string(e.decision)));
  o->set("hook", e.hook);
  o->set("reason", e.reason);
  o->set("limit", e.limit);
  o->set("value", e.value);
  o->set("at", time_text(e.at));
  o->set("node_id", e.node_id);
  o->set("key", e.key);
  return o;
}

policy::SafetyEvent safety_event_from_json(const Var& json) {
  Object::Ptr o = object_of(json, "a safety event");
  std::optional<policy::StopReason> type = policy::parse_stop_reason(string_field(o, "event_type"));
  if (!type) {
    throw Error(ErrorCode::kInvalidArgument,
                "unknown safety event type " + fsnap::quote_input(string_field(o, "event_type")));
  }
  policy::SafetyEvent e;
  e.type = *type;
  e.decision = decision_of(string_field(o, "decision"));
  e.hook = string_field(o, "hook");
  e.reason = string_field(o, "reason");
  e.limit = number(o, "limit");
  e.value = number(o, "value");
  e.at = time_of(o, "at");
  e.node_id = string_field(o, "node_id");
  e.key = string_field(o, "key");
  return e;
}

void register_containment_slice_type() {
  static std::once_flag once;
  std::call_once(once, [] {
    SliceTypes::add<policy::ContainmentState>("policy.containment", SlicePolicy::kLog, encode_state,
                                              decode_state);
  });
}

void record_containment(Session& session, policy::ContainmentState state) {
  register_containment_slice_type();
  if (state.events.size() > kPersistedSafetyEvents) {
    state.events.erase(state.events.begin(),
                       state.events.end() - static_cast<std::ptrdiff_t>(kPersistedSafetyEvents));
  }
  session.register_slice<policy::ContainmentState>(SlicePolicy::kLog);
  session.seed<policy::ContainmentState>({std::move(state)});
}

std::optional<policy::ContainmentState> containment_state(const SessionSnapshot& session) {
  register_containment_slice_type();
  statekit::Slice<policy::ContainmentState> slice = session.slice<policy::ContainmentState>();
  if (slice.empty()) return std::nullopt;
  return *slice.latest();
}

std::optional<policy::ContainmentState> containment_state(const Session& session) {
  return session.latest<policy::ContainmentState>();
}

}  // namespace sandbox
