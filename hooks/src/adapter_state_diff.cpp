#include "hooks/adapter_state_diff.hpp"

#include <map>

#include "fsnap/store_layout.hpp"
#include "runs/home_preservation.hpp"

namespace hooks {

AdapterStateDiff diff_adapter_states(const statekit::Slice<AgentSession>& before,
                                     const statekit::Slice<AgentSession>& after) {
  std::map<std::string, const AgentSession*> was;
  for (std::size_t i = 0; i < before.size(); ++i) was[before[i].session_id] = &before[i];
  AdapterStateDiff out;
  for (std::size_t i = 0; i < after.size(); ++i) {
    const AgentSession& now = after[i];
    auto it = was.find(now.session_id);
    if (it == was.end()) {
      out.added.push_back(now);
      continue;
    }
    const AgentSession& then = *it->second;
    was.erase(it);
    if (then == now) continue;
    out.changed.push_back({now.session_id, then.message_count, now.message_count,
                           !then.complete && now.complete, then.last_activity_at,
                           now.last_activity_at});
  }
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (was.count(before[i].session_id) != 0) out.removed.push_back(before[i]);
  }
  return out;
}

std::vector<fsnap::TreeChange> session_data_changes(const fsnap::ShadowRepo& repo,
                                                    const std::string& run,
                                                    std::chrono::system_clock::time_point from,
                                                    std::chrono::system_clock::time_point to) {
  std::string ref = fsnap::layout::home_ref(run);
  std::optional<std::string> was = repo.ref_tree_at(ref, from);
  std::optional<std::string> now = repo.ref_tree_at(ref, to);
  if (!now || was == now) return {};
  return runs::home_changes(repo, was.value_or(""), *now);
}

}  // namespace hooks
