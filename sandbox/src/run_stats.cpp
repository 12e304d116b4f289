#include "sandbox/run_stats.hpp"

#include "policy/execution_context.hpp"
#include "sandbox/builtin_slices.hpp"

namespace sandbox {

void install_run_stats(Session& session) {
  session.install_computed(
      [](const Slice<ToolInvoked>& calls, const Slice<policy::ContainmentState>& containment) {
        RunStats stats;
        stats.calls = calls.size();
        for (std::size_t i = 0; i < calls.size(); ++i) stats.failed += calls[i].success ? 0 : 1;
        if (const policy::ContainmentState* counted = containment.latest()) {
          stats.steps = counted->step_count;
          stats.cost_usd = counted->cost_usd;
        }
        return stats;
      });
}

RunStats run_stats(const SessionSnapshot& snapshot) {
  std::shared_ptr<Session> session = Session::from_snapshot(snapshot);
  install_run_stats(*session);
  return *session->computed<RunStats>();
}

}  // namespace sandbox
