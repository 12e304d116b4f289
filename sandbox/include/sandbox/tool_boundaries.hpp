// ToolBoundaries — the transaction of a tool that runs outside this process (a
// Claude Code tool, a shell command), driven step by step: pre_tool before it runs,
// then post_tool if it succeeded or rollback_tool if it failed. Each step is a
// checkpoint of the workspace with a ledger record, exactly as ToolRunner records an
// in-process call, so both paths leave identical files, STATE slices and records.
//
// The run's session lives in the ledger: each step starts from the newest record of
// the run and records the session it leaves.
//
// Thread-safety: one step at a time per workspace (the CLI and hooks serialise on
// the store lock for each write).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "fsnap/host_filesystem.hpp"
#include "sandbox/ledger.hpp"
#include "sandbox/session.hpp"

namespace sandbox {

// What a step did.
struct BoundaryResult {
  fsnap::Checkpoint checkpoint;                 // the checkpoint the step recorded
  LedgerRecord record;                          // its ledger record
  std::optional<fsnap::RestoreReport> restore;  // for rollback_tool and restore
};

// Steps of externally run tool calls on one workspace and run.
class ToolBoundaries {
 public:
  ToolBoundaries(fsnap::HostFilesystem& workspace, Ledger& ledger, std::string run);

  // Checkpoint before tool call `call_id` runs. With separate_outside_changes, files
  // changed since the run's newest checkpoint are first recorded as a checkpoint of
  // their own (attributed to no tool) — from the same single capture.
  BoundaryResult pre_tool(const std::string& call_id, const std::string& tool_name,
                          const std::string& input, const std::string& tag = "",
                          bool separate_outside_changes = false);
  // Checkpoint after the call succeeded: logs ToolInvoked and records the outcome on
  // the pre-tool record too.
  // With success false: the call failed and its changes are kept (not rolled back).
  BoundaryResult post_tool(const std::string& call_id, const std::string& result_summary,
                           const std::string& tag = "", bool success = true);
  // The call failed: restores the files of its pre-tool checkpoint and the STATE
  // slices recorded there (LOG slices keep everything), logs the failure, and
  // checkpoints the result (phase checkpoint).
  BoundaryResult rollback_tool(const std::string& call_id, const std::string& result_summary);
  // A checkpoint not tied to a tool call (manual, checkpoint, …) with the run's
  // current session, after change (if given) has dispatched events to it.
  BoundaryResult checkpoint(const fsnap::CheckpointMeta& meta,
                            const std::function<void(Session&)>& change = nullptr,
                            const std::string& summary = "");
  // If the workspace differs from the run's newest checkpoint (someone edited files
  // between tool calls), records that state as a checkpoint attributed to no tool.
  std::optional<BoundaryResult> record_outside_changes();
  // Restores target (files, and STATE slices if target has a record), then
  // checkpoints the result. A dry run changes and records nothing.
  BoundaryResult restore(const fsnap::Checkpoint& target, bool dry_run);

  // The run's current session (rebuilt from its newest record; empty if none).
  std::shared_ptr<Session> current_session() const;

 private:
  std::optional<LedgerRecord> pre_record(const std::string& call_id, fsnap::Checkpoint* pre) const;
  BoundaryResult record(const fsnap::CheckpointMeta& meta, const Session& session,
                        std::optional<bool> success, const std::string& result,
                        std::optional<std::int64_t> elapsed_ms, const std::string& input);

  fsnap::HostFilesystem& workspace_;
  Ledger& ledger_;
  std::string run_;
};

}  // namespace sandbox
