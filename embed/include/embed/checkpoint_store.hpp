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

namespace embed {

// Recent tool checkpoints, newest last.
class CheckpointStore : public sandbox::CheckpointSink {
 public:
  // Keeps the newest `capacity` calls (at least 1).
  explicit CheckpointStore(std::size_t capacity = 100);

  // Records (or replaces) the checkpoint of a call.
  void record(sandbox::ToolCheckpoint checkpoint) override;
  std::optional<sandbox::CompositeSnapshot> get_pre_snapshot(const std::string& tool_call_id) const;
  std::optional<sandbox::CompositeSnapshot> get_post_snapshot(
      const std::string& tool_call_id) const;
  std::optional<sandbox::ToolCheckpoint> get(const std::string& tool_call_id) const;
  // Every kept checkpoint, oldest first.
  std::vector<sandbox::ToolCheckpoint> list_checkpoints() const;
  std::size_t capacity() const { return capacity_; }

  // Restores state to before the call (the coordinated rollback of
  // docs/conformance/EXECUTION_STATE.md): files and STATE slices as in its pre-tool
  // snapshot, LOG slices kept. Records no boundary — ToolTransactions::restore does, for
  // a run whose history must show it. An unknown call id is Error kNotFound.
  void rollback_to_tool(sandbox::ExecutionState& state, const std::string& tool_call_id) const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::deque<std::string> order_;  // call ids, oldest first
  std::map<std::string, sandbox::ToolCheckpoint> by_id_;
};

}  // namespace embed
