// CheckpointStore — the pre- and post-tool composite snapshots of recent tool calls
// (docs/conformance/EXECUTION_STATE.md, Checkpoint Store), in a ring buffer, so state
// can be put back to any tool boundary: `rollback_to_tool(state, "call_b")` restores
// files and STATE slices exactly as before call_b, while LOG slices keep everything. The
// transaction core records every finished call here (when the ExecutionState has a
// store); the ledger, not this ring, is what persists them.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/execution_state.hpp"

namespace sandbox {

// The record of one tool call.
struct ToolCheckpoint {
  std::string tool_call_id;
  std::string tool_name;
  std::string params;  // the call's parameters (JSON text)
  CompositeSnapshot pre_snapshot;
  std::optional<CompositeSnapshot> post_snapshot;  // absent when the call was rolled back
  // When the call was rolled back: the state right after the rollback (phase
  // checkpoint), so the run's newest checkpoint is always its current state.
  std::optional<CompositeSnapshot> rollback_snapshot;
  std::string result_summary;
  bool success = false;
  std::optional<std::chrono::milliseconds> elapsed;
  TimePoint recorded_at;
};

// Recent tool checkpoints, newest last.
class CheckpointStore {
 public:
  // Keeps the newest `capacity` calls (at least 1).
  explicit CheckpointStore(std::size_t capacity = 100);

  // Records (or replaces) the checkpoint of a call.
  void record(ToolCheckpoint checkpoint);
  std::optional<CompositeSnapshot> get_pre_snapshot(const std::string& tool_call_id) const;
  std::optional<CompositeSnapshot> get_post_snapshot(const std::string& tool_call_id) const;
  std::optional<ToolCheckpoint> get(const std::string& tool_call_id) const;
  // Every kept checkpoint, oldest first.
  std::vector<ToolCheckpoint> list_checkpoints() const;
  std::size_t capacity() const { return capacity_; }

  // Restores state to before the call (the coordinated rollback of
  // docs/conformance/EXECUTION_STATE.md): files and STATE slices as in its pre-tool
  // snapshot, LOG slices kept. Records no boundary — ToolTransactions::restore does, for
  // a run whose history must show it. An unknown call id is Error kNotFound.
  void rollback_to_tool(ExecutionState& state, const std::string& tool_call_id) const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<std::string> order_;  // call ids, oldest first
  std::map<std::string, ToolCheckpoint> by_id_;
};

}  // namespace sandbox
