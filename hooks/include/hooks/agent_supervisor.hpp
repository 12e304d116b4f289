// AgentSupervisor — what the supervisor of an agent run (hooks/agent_run.hpp) decides
// while the agent runs: when a halt request (a hook whose limit stopped the run,
// `shadowbox abort`, a lost fleet lease) or the run's timeout ends the agent's process
// tree, and after what grace. It waits on nothing, signals nothing and reads time only
// from its clock: run_agent waits for the agent, calls tick between waits and ends the
// tree when told to; tests move a FixedClock, so the kill and timeout paths take
// microseconds.
//
//   tick()    the agent runs: true when its tree is to be ended now (once)
//   finish()  the agent has exited: the halt that stopped the run, if one did
//
// A request the agent was told of (a hook answered it `continue: false`) gives it
// policy.kill_grace to exit by itself; one it was not (an abort, the timeout) ends the
// tree at the next tick, and cuts short a grace under way.
//
// Thread-safety: one thread; the clock's now() is called from it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fsnap/clock.hpp"
#include "runs/run_halt.hpp"

namespace hooks {

class AgentSupervisor {
 public:
  struct Options {
    std::chrono::milliseconds kill_grace{5000};  // policy.kill_grace
    std::optional<fsnap::TimePoint> deadline;    // when the run's time is up, if it has a timeout
    std::string timeout_reason;                  // said when it is
  };
  // The run's halt requests (runs/run_halt.hpp): the pending one, and recording one
  // (a timeout, so that others see it; a failure to record changes nothing here).
  struct Halts {
    std::function<std::optional<runs::HaltRequest>()> pending;
    std::function<void(const runs::HaltRequest&)> request;
  };

  // inform (may be empty) is told when the supervisor starts to stop the agent.
  AgentSupervisor(Options options, Halts halts, std::shared_ptr<const fsnap::Clock> clock,
                  std::function<void(const std::string&)> inform = {});

  // One look while the agent runs: true when its tree is to be ended now. Once it was,
  // false from then on (the agent's exit is on its way).
  bool tick();
  // The halt that stopped the run, if one did: one the supervisor acted on, else one
  // requested while the agent was exiting.
  std::optional<runs::HaltRequest> finish();

 private:
  Options options_;
  Halts halts_;
  std::shared_ptr<const fsnap::Clock> clock_;
  std::function<void(const std::string&)> inform_;
  std::optional<runs::HaltRequest> halt_;
  std::optional<fsnap::TimePoint> end_at_;
  bool ended_ = false;
};

// A wall clock that cannot jump: the system's time read once, then advanced by the
// steady clock — a step of the system clock moves neither a grace nor a timeout.
class SteadyWallClock : public fsnap::Clock {
 public:
  SteadyWallClock();
  fsnap::TimePoint now() const override;

 private:
  fsnap::TimePoint wall_;
  std::chrono::steady_clock::time_point steady_;
};

}  // namespace hooks
