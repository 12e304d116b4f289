#include "runs/run_stats.hpp"

#include "policy/execution_context.hpp"
#include "sandbox/builtin_slices.hpp"

namespace runs {

void install_run_stats(sandbox::Session& session) {
  session.install_computed([](const statekit::Slice<sandbox::CallTally>& tally,
                              const statekit::Slice<sandbox::ToolInvoked>& invoked,
                              const statekit::Slice<policy::ContainmentState>& containment) {
    RunStats stats;
    const policy::ContainmentState* counted = containment.latest();
    if (counted != nullptr) stats.cost_usd = counted->cost_usd;
    if (const sandbox::CallTally* t = tally.latest()) {
      static_cast<sandbox::CallTally&>(stats) = *t;
    } else {
      // A run recorded before the tally: what its invocation log and containment say
      // (a refusal was logged as a failed invocation then, and counted as a step).
      for (std::size_t i = 0; i < invoked.size(); ++i) stats.failed += invoked[i].success ? 0 : 1;
      stats.steps = counted != nullptr ? counted->step_count : invoked.size();
    }
    stats.calls = stats.steps + stats.refused + stats.agent_denied;
    return stats;
  });
}

RunStats run_stats(const sandbox::SessionSnapshot& snapshot) {
  std::shared_ptr<sandbox::Session> session = sandbox::Session::from_snapshot(snapshot);
  install_run_stats(*session);
  return *session->computed<RunStats>();
}

}  // namespace runs
