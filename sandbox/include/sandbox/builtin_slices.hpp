// The slice types the runtime itself uses, with the default policies of
// docs/conformance/EXECUTION_STATE.md: Plan and VisibilityOverrides are STATE,
// WorkspaceDigest is CACHE, ToolInvoked, PromptRendered and PromptExecuted are LOG. Each
// is registered in SliceTypes (name, policy, JSON codec) by register_builtin_slice_types(),
// which ExecutionState and SessionTrees call (a Session registers nothing itself).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sandbox {

// One step of a plan.
struct PlanStep {
  std::string title;
  bool done = false;
  friend bool operator==(const PlanStep&, const PlanStep&) = default;
};

// The agent's working plan (STATE).
struct Plan {
  std::string objective;
  std::string status;
  std::vector<PlanStep> steps;
  friend bool operator==(const Plan&, const Plan&) = default;
};

// Paths or sections the agent was allowed to see in full (STATE).
struct VisibilityOverrides {
  std::map<std::string, std::string> overrides;  // key -> visibility
  friend bool operator==(const VisibilityOverrides&, const VisibilityOverrides&) = default;
};

// A digest computed from the workspace (CACHE: can be recomputed).
struct WorkspaceDigest {
  std::string section;
  std::string digest;
  friend bool operator==(const WorkspaceDigest&, const WorkspaceDigest&) = default;
};

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

// A prompt as rendered for the model (LOG).
struct PromptRendered {
  std::string prompt_name;
  std::string text;
  friend bool operator==(const PromptRendered&, const PromptRendered&) = default;
};

// A prompt evaluation's output (LOG).
struct PromptExecuted {
  std::string prompt_name;
  std::string output;
  friend bool operator==(const PromptExecuted&, const PromptExecuted&) = default;
};

// Registers the types above in SliceTypes, containment's state (sandbox/containment.hpp)
// and the call tally (sandbox/call_tally.hpp). Idempotent and thread-safe.
void register_builtin_slice_types();

}  // namespace sandbox
