#include "runs/run_lifecycle.hpp"

#include <mutex>

#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/machine_slice.hpp"
#include "sandbox/slice_types.hpp"

#include "sandbox/codec_json.hpp"

namespace runs {

namespace {

using Poco::Dynamic::Var;
using Poco::JSON::Object;
using sandbox::codec_json::object_of;
using sandbox::codec_json::string_field;

Var encode_status(const RunStatus& s) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("status", s.status);
  o->set("reason", s.reason);
  return o;
}

RunStatus decode_status(const Var& v) {
  Object::Ptr o = object_of(v, "a run status or lifecycle item");
  return RunStatus{string_field(o, "status"), string_field(o, "reason")};
}

Var encode_lifecycle(const RunLifecycle& s) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("state", s.state);
  o->set("from", s.from);
  o->set("event", s.event);
  o->set("at", fsnap::format_timestamp(s.at));
  o->set("reason", s.reason);
  if (!s.history.empty()) {
    Object::Ptr history = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    for (const auto& [parent, leaf] : s.history) history->set(parent, leaf);
    o->set("history", history);
  }
  return o;
}

RunLifecycle decode_lifecycle(const Var& v) {
  Object::Ptr o = object_of(v, "a run status or lifecycle item");
  RunLifecycle s;
  s.state = string_field(o, "state");
  s.from = string_field(o, "from");
  s.event = string_field(o, "event");
  s.at = fsnap::parse_timestamp(string_field(o, "at"))
             .value_or(std::chrono::system_clock::time_point{});
  s.reason = string_field(o, "reason");
  if (Object::Ptr history = o->getObject("history")) {
    for (const auto& [parent, leaf] : *history) s.history[parent] = leaf.toString();
  }
  return s;
}

RunLifecycleMachine define() {
  RunLifecycleMachine m("run lifecycle");
  m.state("created", {.initial = true})
      .state("active")
      .state("running", {.parent = "active", .initial = true})
      .state("resumed", {.parent = "active"})
      .state("ended")
      .state("complete", {.parent = "ended", .initial = true})
      .state("failed", {.parent = "ended"})
      .state("killed", {.parent = "ended"})
      .state("halted", {.parent = "ended"})
      .state("crashed", {.parent = "ended"});
  m.transition<AgentStarted>({"created"}, "running", "agent_started")
      .transition<AgentStarted>({"running"}, "running", "agent_started")
      .transition<AgentStarted>({"resumed"}, "resumed", "agent_started")
      .transition<AgentStarted>({"ended"}, "resumed", "agent_started");
  for (const char* outcome : {"complete", "failed", "killed"}) {
    std::string o = outcome;
    m.transition<AgentEnded>(
        {"created", "active", "ended"}, o, "agent_ended",
        [o](const AgentEnded& e) { return e.outcome == o; }, "outcome == " + o);
  }
  m.transition<RunHalted>({"active", "ended"}, "halted", "halt")
      .transition<RunCrashed>({"active"}, "crashed", "crash_detected");
  return m;
}

}  // namespace

const RunLifecycleMachine& run_lifecycle() {
  static const RunLifecycleMachine machine = define();
  return machine;
}

void register_run_slice_types() {
  static std::once_flag once;
  std::call_once(once, [] {
    sandbox::SliceTypes::add<RunStatus>("run.status", sandbox::SlicePolicy::kLog, encode_status,
                                        decode_status);
    sandbox::SliceTypes::add<RunLifecycle>("run.lifecycle", sandbox::SlicePolicy::kLog,
                                           encode_lifecycle, decode_lifecycle);
  });
}

void install_run_lifecycle(sandbox::Session& session) {
  if (session.has_reducer<RunLifecycle, AgentStarted>()) return;
  struct Annotate {
    void operator()(RunLifecycle& s, const AgentStarted& e) const { s.reason = e.summary; }
    void operator()(RunLifecycle& s, const AgentEnded& e) const { s.reason = e.reason; }
    void operator()(RunLifecycle& s, const RunHalted& e) const { s.reason = e.reason; }
    void operator()(RunLifecycle& s, const RunCrashed& e) const { s.reason = e.reason; }
  };
  sandbox::install_machine<RunLifecycle>(session, run_lifecycle(), Annotate{});
}

void record_run_status(sandbox::Session& session, RunStatus status) {
  install_run_lifecycle(session);
  // The lifecycle first: a move it rejects records nothing.
  const std::string& s = status.status;
  if (s == "running") {
    session.dispatch(AgentStarted{status.reason});
  } else if (s == "complete" || s == "failed" || s == "killed") {
    session.dispatch(AgentEnded{s, status.reason});
  } else if (s == "halted") {
    session.dispatch(RunHalted{status.reason});
  } else if (s == "crashed") {
    session.dispatch(RunCrashed{status.reason});
  } else {
    throw sandbox::Error(sandbox::ErrorCode::kInvalidArgument, "unknown run status: " + s);
  }
  if (!session.has_reducer<RunStatus, RunStatus>()) {
    session.register_reducer<RunStatus, RunStatus>(statekit::reducers::append_all<RunStatus>);
  }
  session.dispatch(status);
}

void record_run_start(sandbox::Session& session, const std::string& summary) {
  install_run_lifecycle(session);
  std::optional<RunLifecycle> now = session.latest<RunLifecycle>();
  if (now && run_lifecycle().graph().within(now->state, "active")) {
    record_run_status(session, {"crashed",
                                "the run's supervisor ended without recording how "
                                "its agent ended"});
  }
  record_run_status(session, {"running", summary});
}

std::optional<RunStatus> latest_run_status(const sandbox::SessionSnapshot& session) {
  statekit::Slice<RunStatus> statuses = session.slice<RunStatus>();
  if (statuses.empty()) return std::nullopt;
  return *statuses.latest();
}

}  // namespace runs
