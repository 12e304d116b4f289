// HaltRequest — a stop of an agent run that its supervisor (`shadowbox run`, `resume`)
// carries out, kept as a file it polls (<store>/runs/<run>/halt). Whoever decides the
// run must stop writes one: a hook whose containment halted the run (in whatever
// process it ran) and `shadowbox abort`. The first request stands; the supervisor
// removes it when the agent starts.
//
// Thread-safety: plain functions; the file is created and replaced atomically.
#pragma once

#include <optional>
#include <string>

#include "fsnap/store.hpp"

namespace runs {

// Why a run is to stop.
struct HaltRequest {
  std::string halt_reason;  // policy::halt_reason_name: max_steps, max_cost, timeout, aborted...
  std::string reason;       // one line for people
  // true: a hook already told the agent to stop (it gets a grace period to do so);
  // false: stop it now (`shadowbox abort`).
  bool agent_told = false;
  friend bool operator==(const HaltRequest&, const HaltRequest&) = default;
};

// Records request unless one is pending already: the first reason stands, even when
// several processes ask at once. A request that cannot wait (agent_told false) makes a
// pending one urgent, too. True if request's reason is the one recorded. Error kIo if
// it cannot be written.
bool request_halt(const fsnap::Store& store, const std::string& run, const HaltRequest& request);
// The pending request, or nullopt. A malformed file is a request with its text as reason.
std::optional<HaltRequest> pending_halt(const fsnap::Store& store, const std::string& run);
// Removes a pending request (a run starting again). Never throws.
void clear_halt(const fsnap::Store& store, const std::string& run);

}  // namespace runs
