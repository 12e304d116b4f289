// Execution states for the runtime's tests: a session with a Plan reducer, and states
// over an in-memory filesystem or a host workspace, each with a budget tracker.
#pragma once

#include <memory>
#include <string>

#include <boost/filesystem/path.hpp>

#include "embed/agent_slices.hpp"
#include "embed/budget_tracker.hpp"
#include "embed/checkpoint_store.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/in_memory_filesystem.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/execution_state.hpp"

namespace sandbox_test {

using namespace sandbox;
using namespace embed;
using namespace statekit;

struct SetObjective {
  std::string objective;
};

inline Slice<Plan> set_objective(const Slice<Plan>& s, const SetObjective& e) {
  Plan p = s.latest() ? *s.latest() : Plan{};
  p.objective = e.objective;
  return Slice<Plan>::of(p);
}

inline std::shared_ptr<Session> make_session() {
  register_agent_slice_types();
  auto session = std::make_shared<Session>();
  session->register_reducer<Plan, SetObjective>(set_objective);
  return session;
}

// An execution state over an in-memory filesystem and a budget tracker.
struct MemoryState {
  std::shared_ptr<fsnap::InMemoryFilesystem> fs = std::make_shared<fsnap::InMemoryFilesystem>();
  std::shared_ptr<BudgetTracker> budget = std::make_shared<BudgetTracker>();
  std::shared_ptr<fsnap::FixedClock> clock =
      std::make_shared<fsnap::FixedClock>(fsnap::TimePoint(std::chrono::seconds(1'800'000'000)));
  std::shared_ptr<CheckpointStore> checkpoints = std::make_shared<CheckpointStore>(10);
  ExecutionState state;

  MemoryState() : state(make_session(), registry(), clock, 42, checkpoints) {}
  ResourceRegistry registry() {
    ResourceRegistry r;
    r.put<fsnap::Filesystem>(fs, "filesystem");
    r.put<BudgetTracker>(budget, "budget");
    return r;
  }
};

// An execution state over a host workspace in dir/ws (store in dir/store) and a budget.
struct HostState {
  explicit HostState(const boost::filesystem::path& dir)
      : host(std::make_shared<fsnap::HostFilesystem>(
            fsnap::Store::open(dir / "store", dir / "ws", true), fsnap::CaptureOptions{})),
        state(make_session(), registry()) {}
  ResourceRegistry registry() {
    ResourceRegistry r;
    r.put<fsnap::Filesystem>(host, "filesystem");
    r.put<BudgetTracker>(budget, "budget");
    return r;
  }
  std::shared_ptr<fsnap::HostFilesystem> host;
  std::shared_ptr<BudgetTracker> budget = std::make_shared<BudgetTracker>();
  ExecutionState state;
};

}  // namespace sandbox_test
