// The slice types of an in-process agent's own state, with the default policies of
// docs/conformance/EXECUTION_STATE.md: its working state (Plan and VisibilityOverrides
// are STATE, WorkspaceDigest is CACHE) and its prompts (PromptRendered and
// PromptExecuted are LOG). The shadowbox tool keeps none of them — an agent CLI keeps its
// plan and prompts itself — so they belong to programs that run their own agent loop.
// ToolRunner registers them (name, policy, JSON codec) in sandbox::SliceTypes; a
// program that snapshots a session without a ToolRunner calls
// register_agent_slice_types() first.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace embed {

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

// Registers the types above in sandbox::SliceTypes as "plan", "visibility_overrides",
// "workspace_digest", "prompt_rendered" and "prompt_executed", with the core's own
// (sandbox::register_builtin_slice_types). Idempotent and thread-safe.
void register_agent_slice_types();

}  // namespace embed
