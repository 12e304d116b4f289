#include "sandbox/run_lifecycle.hpp"

#include "sandbox/machine_slice.hpp"

namespace sandbox {

namespace {

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

void install_run_lifecycle(Session& session) {
  if (session.has_reducer<RunLifecycle, AgentStarted>()) return;
  struct Annotate {
    void operator()(RunLifecycle& s, const AgentStarted& e) const { s.reason = e.summary; }
    void operator()(RunLifecycle& s, const AgentEnded& e) const { s.reason = e.reason; }
    void operator()(RunLifecycle& s, const RunHalted& e) const { s.reason = e.reason; }
    void operator()(RunLifecycle& s, const RunCrashed& e) const { s.reason = e.reason; }
  };
  install_machine<RunLifecycle>(session, run_lifecycle(), Annotate{});
}

}  // namespace sandbox
