// What changed in a run's agent sessions between two checkpoints (state diffing,
// docs/conformance/ADAPTER_STATE.md): sessions that started or are gone, and for each
// session both have, the messages it gained, whether it ended and its newest activity;
// and which files of the preserved session data (the run's HOME transcripts) changed.
// `shadowbox diff --session` shows it beside the slices.
//
//   hooks::AdapterStateDiff d = hooks::diff_adapter_states(before, after);
//   for (const hooks::SessionChange& c : d.changed) { ... c.messages_added() ... }
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fsnap/shadow_repo.hpp"
#include "hooks/agent_session_state.hpp"

namespace hooks {

// A session both sides have, as it changed.
struct SessionChange {
  std::string session_id;
  std::size_t messages_before = 0;
  std::size_t messages_after = 0;
  bool ended = false;  // it was going on before, and ended after
  std::string last_activity_before;
  std::string last_activity_after;
  std::size_t messages_added() const {
    return messages_after > messages_before ? messages_after - messages_before : 0;
  }
};

// What differs between two adapter states.
struct AdapterStateDiff {
  std::vector<AgentSession> added;     // sessions only after has
  std::vector<AgentSession> removed;   // sessions only before has
  std::vector<SessionChange> changed;  // in both, and not equal
  // Files of the preserved session data that changed (session_data_changes).
  std::vector<fsnap::TreeChange> session_data;
  bool empty() const {
    return added.empty() && removed.empty() && changed.empty() && session_data.empty();
  }
};

// The sessions of two adapter states compared by session id.
AdapterStateDiff diff_adapter_states(const statekit::Slice<AgentSession>& before,
                                     const statekit::Slice<AgentSession>& after);

// The files of run's preserved session data that changed from what was preserved by
// from to what was preserved by to (the run's home ref, to the second); none when the
// run preserved nothing by then.
std::vector<fsnap::TreeChange> session_data_changes(const fsnap::ShadowRepo& repo,
                                                    const std::string& run,
                                                    std::chrono::system_clock::time_point from,
                                                    std::chrono::system_clock::time_point to);

}  // namespace hooks
