// RollbackPolicy — the one place that decides what becomes of a failed tool call:
// rolled back to its pre-tool boundary, refused (a rollback would undo changes made
// since by others), or kept because the configuration says so. The transaction core
// (ToolTransactions) asks it for every failure, whichever path the call came by: the
// in-process ToolRunner, a hook event, or `shadowbox rollback`.
//
// Thread-safety: a plain value; decide() is a pure function.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"

namespace sandbox {

// What a decision needs to know about one boundary recorded after a call's pre-tool
// boundary.
struct BoundaryFact {
  fsnap::Phase phase = fsnap::Phase::kCheckpoint;
  std::string call_id;  // "" for a boundary of no tool call
  std::string tool_name;
  std::string checkpoint_id;   // "" without a host filesystem
  bool changed_files = false;  // its files differ from those of the boundary before it
  // "" for a boundary of the failed call's own run; else the other run of the same
  // store (and so of the same workspace) that recorded it.
  std::string run;
  friend bool operator==(const BoundaryFact&, const BoundaryFact&) = default;
};

// What to do with a failed call.
struct RollbackDecision {
  enum class Kind {
    kRollBack,  // put files and STATE slices back to the pre-tool boundary
    kRefuse,    // leave them: rolling back would undo the changes of refused_by
    kKeep,      // leave them: the configuration keeps this tool's failures
  };
  Kind kind = Kind::kRollBack;
  std::vector<BoundaryFact> refused_by;  // kRefuse: the later changes a rollback would undo
  std::string reason;                    // kRefuse, kKeep: why, in one line

  friend bool operator==(const RollbackDecision&, const RollbackDecision&) = default;
};

// "rolled_back", "refused", "kept".
std::string_view to_string(RollbackDecision::Kind kind);

// When failed calls are rolled back (config: hooks.rollback_on_failure,
// hooks.keep_failed_tools).
struct RollbackPolicy {
  bool rollback_on_failure = true;
  std::set<std::string> keep_failed_tools;  // tools whose failures are never rolled back

  // The decision for a failed call of tool call_id, given the boundaries recorded
  // after its pre-tool boundary (oldest first):
  //   rollback_on_failure off, or tool in keep_failed_tools       -> kKeep
  //   a later boundary changed files that are still changed: another
  //   call's post-tool one, or one of no call (an edit between calls,
  //   a restore, a manual snapshot); or any boundary of another run
  //   on the workspace that changed files                         -> kRefuse
  //   otherwise                                                   -> kRollBack
  RollbackDecision decide(const std::string& tool, const std::string& call_id,
                          const std::vector<BoundaryFact>& since_pre) const;
};

}  // namespace sandbox
