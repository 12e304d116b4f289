// The slice types the transaction core writes itself: ToolInvoked, one LOG item per
// tool call (docs/conformance/EXECUTION_STATE.md), with containment's state and the call
// tally. register_builtin_slice_types() registers them in SliceTypes (name, policy, JSON
// codec); ExecutionState and SessionTrees call it (a Session registers nothing itself).
// An in-process agent's own state (plan, visibility, digests, prompts) is embed's
// (embed/agent_slices.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace sandbox {

// One tool call and its outcome (LOG: kept by rollbacks).
struct ToolInvoked {
  std::string tool_call_id;
  std::string tool_name;
  std::string params;  // the call's parameters as the agent gave them (JSON text)
  bool success = false;
  std::string result_summary;
  std::int64_t elapsed_ms = 0;
  friend bool operator==(const ToolInvoked&, const ToolInvoked&) = default;
};

// Registers ToolInvoked in SliceTypes, containment's state (sandbox/containment.hpp)
// and the call tally (sandbox/call_tally.hpp). Idempotent and thread-safe.
void register_builtin_slice_types();

}  // namespace sandbox
