// BoundaryLog — where the transaction core (ToolTransactions) keeps and finds the tool
// boundaries of a run. Two kinds exist: the ledger of a store (LedgerBoundaryLog: the
// CLI, hooks and `shadowbox run`, whose steps come from several processes) and memory
// (MemoryBoundaryLog: the in-process ToolRunner).
//
// Thread-safety: implementations say; ToolTransactions calls a log only inside a step.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/execution_state.hpp"
#include "sandbox/ledger_record.hpp"
#include "sandbox/rollback_policy.hpp"

namespace sandbox {

// A tool boundary as a step recorded it.
struct Boundary {
  CompositeSnapshot snapshot;  // the state at the boundary
  LedgerRecord record;         // what the ledger says of it (no commit without a host workspace)
  // For a pre-tool boundary: whether its call has ended (a boundary ending the call was
  // recorded after it).
  bool ended = false;
};

// The tool boundaries of one run.
class BoundaryLog {
 public:
  // A boundary recorded after a call's pre-tool boundary, as the rollback decision sees
  // it: the fact (changed_files: its files differ from the boundary before it), and the
  // file trees (by resource name) of it and of the boundary before it, with the paths
  // each skipped (files over capture.max_file_size, in no tree: fsnap::SkippedPath).
  struct LaterBoundary {
    BoundaryFact fact;
    std::map<std::string, std::string> trees;
    std::map<std::string, std::string> previous_trees;
    std::map<std::string, std::vector<fsnap::SkippedPath>> skipped;
    std::map<std::string, std::vector<fsnap::SkippedPath>> previous_skipped;
    fsnap::TimePoint recorded_at{};  // when its checkpoint was taken
  };

  // Held while a step runs; the step ends when it is destroyed.
  class StepHold {
   public:
    virtual ~StepHold() = default;
  };

  virtual ~BoundaryLog() = default;

  // Starts a step: holds the run so that no other step runs meanwhile (in any process),
  // and brings state's session up to the run's newest record. Null if there is nothing
  // to hold.
  virtual std::unique_ptr<StepHold> begin_step(ExecutionState& state) = 0;
  // Remembers a boundary the step just recorded.
  virtual void remember(const Boundary& boundary) = 0;
  // Forgets the open call call_id (it was discarded: as if it never ran).
  virtual void forget(const std::string& call_id) = 0;
  // The newest pre-tool boundary of call_id (with whether the call has ended), or
  // nullopt.
  virtual std::optional<Boundary> pre_tool(const std::string& call_id) const = 0;
  // pre_tool, looking only among the newest boundaries (a log that keeps few may look
  // at all): cheap enough to ask before every call.
  virtual std::optional<Boundary> recent_pre_tool(const std::string& call_id,
                                                  std::size_t newest) const {
    (void)newest;
    return pre_tool(call_id);
  }
  // Whether call_id has ended (nullopt: it has no pre-tool boundary): pre_tool's ended,
  // without reading the boundary's record and session.
  virtual std::optional<bool> call_ended(const std::string& call_id) const {
    std::optional<Boundary> pre = pre_tool(call_id);
    return pre ? std::optional<bool>(pre->ended) : std::nullopt;
  }
  // The calls with a pre-tool boundary and none that ends them, oldest first.
  virtual std::vector<std::string> open_calls() const = 0;
  // Whether some call is open (a log that keeps many may look only among the newest
  // boundaries): cheap enough to ask before every call.
  virtual bool has_open_call() const { return !open_calls().empty(); }
  // The boundaries recorded after pre, oldest first (safety checkpoints left out: they
  // record a state, they do not change it).
  virtual std::vector<LaterBoundary> since(const Boundary& pre) const = 0;
};

}  // namespace sandbox
