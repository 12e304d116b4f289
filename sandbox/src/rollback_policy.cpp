#include "sandbox/rollback_policy.hpp"

namespace sandbox {

std::string_view to_string(RollbackDecision::Kind kind) {
  switch (kind) {
    case RollbackDecision::Kind::kRollBack:
      return "rolled_back";
    case RollbackDecision::Kind::kRefuse:
      return "refused";
    case RollbackDecision::Kind::kKeep:
      return "kept";
  }
  return "unknown";
}

namespace {

// A later boundary whose changes a rollback of call_id would undo.
bool conflicts(const BoundaryFact& fact, const std::string& call_id) {
  if (!fact.changed_files) return false;
  if (!fact.run.empty()) return true;  // another run's work, whatever step it was
  if (fact.phase == fsnap::Phase::kPostTool) return fact.call_id != call_id;
  // Changes attributed to no tool: edits made between calls, restores, snapshots a
  // person took. (A checkpoint with another call's id is that call's rollback.)
  return (fact.phase == fsnap::Phase::kCheckpoint || fact.phase == fsnap::Phase::kManual) &&
         fact.call_id.empty();
}

std::string describe(const BoundaryFact& fact) {
  if (!fact.run.empty()) {
    return "run " + fact.run + " (" +
           (fact.call_id.empty() ? "checkpoint " + fact.checkpoint_id
                                 : fact.tool_name + " " + fact.call_id) +
           ")";
  }
  if (fact.call_id.empty()) {
    return std::string(fact.phase == fsnap::Phase::kManual
                           ? "a snapshot taken outside any tool call"
                           : "an edit made outside any tool call") +
           (fact.checkpoint_id.empty() ? "" : " (checkpoint " + fact.checkpoint_id + ")");
  }
  return fact.tool_name + " " + fact.call_id;
}

}  // namespace

RollbackDecision RollbackPolicy::decide(const std::string& tool, const std::string& call_id,
                                        const std::vector<BoundaryFact>& since_pre) const {
  RollbackDecision decision;
  if (!rollback_on_failure || keep_failed_tools.count(tool) != 0) {
    decision.kind = RollbackDecision::Kind::kKeep;
    decision.reason = "not rolled back by configuration";
    return decision;
  }
  for (const BoundaryFact& fact : since_pre) {
    if (conflicts(fact, call_id)) decision.refused_by.push_back(fact);
  }
  if (decision.refused_by.empty()) return decision;
  decision.kind = RollbackDecision::Kind::kRefuse;
  std::string names;
  for (const BoundaryFact& fact : decision.refused_by) {
    names += (names.empty() ? "" : ", ") + describe(fact);
  }
  decision.reason = "rollback refused: since this call started, files were changed by " + names +
                    ", and restoring its pre-tool checkpoint would undo that";
  return decision;
}

}  // namespace sandbox
