#include "sandbox/tool_boundaries.hpp"

#include <stdexcept>

#include "fsnap/error.hpp"
#include "sandbox/builtin_slices.hpp"

namespace sandbox {

namespace {

std::int64_t elapsed_since(const fsnap::Checkpoint& pre) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now() -
                                                               pre.created_at)
      .count();
}

void ensure_tool_log(Session& session) {
  if (!session.has_reducer<ToolInvoked, ToolInvoked>()) {
    session.register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  }
}

}  // namespace

ToolBoundaries::ToolBoundaries(fsnap::HostFilesystem& workspace, Ledger& ledger, std::string run)
    : workspace_(workspace), ledger_(ledger), run_(std::move(run)) {}

std::shared_ptr<Session> ToolBoundaries::current_session() const {
  std::optional<LedgerRecord> latest = ledger_.latest(run_);
  auto session = latest && !latest->session_json.empty() ? Session::from_snapshot(latest->session())
                                                         : std::make_shared<Session>();
  ensure_tool_log(*session);
  return session;
}

BoundaryResult ToolBoundaries::record(const fsnap::CheckpointMeta& meta, const Session& session,
                                      std::optional<bool> success, const std::string& result,
                                      std::optional<std::int64_t> elapsed_ms,
                                      const std::string& input) {
  BoundaryResult out;
  out.checkpoint = workspace_.checkpoint(meta);
  out.record = LedgerRecord::for_checkpoint(out.checkpoint, session.snapshot(kStatePolicies, true));
  out.record.success = success;
  out.record.result_summary = result;
  out.record.elapsed_ms = elapsed_ms;
  out.record.input_summary = input;
  ledger_.write(out.record);
  return out;
}

std::optional<LedgerRecord> ToolBoundaries::pre_record(const std::string& call_id,
                                                       fsnap::Checkpoint* pre) const {
  // The call's pre-tool checkpoint is near the tip of its run: look there first, in
  // growing windows, rather than through every checkpoint of the store.
  std::size_t seen = 0;
  for (std::size_t window = 8;; window *= 8) {
    std::vector<fsnap::Checkpoint> chain;
    try {
      chain = workspace_.repo().log(run_, window);
    } catch (const fsnap::Error& e) {
      if (e.code() != fsnap::ErrorCode::kNotFound) throw;
    }
    for (std::size_t i = seen; i < chain.size(); ++i) {
      if (chain[i].meta.phase == fsnap::Phase::kPreTool && chain[i].meta.tool_call_id == call_id) {
        *pre = chain[i];
        return ledger_.read(*pre);
      }
    }
    if (chain.size() < window) break;
    seen = chain.size();
  }
  *pre = workspace_.repo().resolve("pre:" + call_id);  // another run, or a clear error
  return ledger_.read(*pre);
}

BoundaryResult ToolBoundaries::pre_tool(const std::string& call_id, const std::string& tool_name,
                                        const std::string& input, const std::string& tag,
                                        bool separate_outside_changes) {
  if (call_id.empty()) throw std::invalid_argument("a pre_tool checkpoint needs a tool call id");
  std::shared_ptr<Session> session = current_session();
  fsnap::CheckpointMeta meta{tag, fsnap::Phase::kPreTool, call_id, tool_name, run_};
  if (!separate_outside_changes) {
    return record(meta, *session, std::nullopt, "", std::nullopt, input);
  }
  fsnap::CheckpointMeta outside;
  outside.phase = fsnap::Phase::kCheckpoint;
  std::vector<fsnap::Checkpoint> recorded =
      workspace_.checkpoint_after_outside_changes(outside, meta);
  SessionSnapshot snapshot = session->snapshot(kStatePolicies, true);
  if (recorded.size() == 2) {
    LedgerRecord r = LedgerRecord::for_checkpoint(recorded[0], snapshot);
    r.result_summary = "changes made outside any tool call";
    ledger_.write(r);
  }
  BoundaryResult out;
  out.checkpoint = recorded.back();
  out.record = LedgerRecord::for_checkpoint(out.checkpoint, snapshot);
  out.record.input_summary = input;
  ledger_.write(out.record);
  return out;
}

BoundaryResult ToolBoundaries::post_tool(const std::string& call_id,
                                         const std::string& result_summary, const std::string& tag,
                                         bool success) {
  fsnap::Checkpoint pre;
  std::optional<LedgerRecord> pre_rec = pre_record(call_id, &pre);
  std::int64_t elapsed = elapsed_since(pre);
  std::string tool_name = pre.meta.tool_name;
  std::string input = pre_rec ? pre_rec->input_summary : "";
  std::shared_ptr<Session> session = current_session();
  session->dispatch(ToolInvoked{call_id, tool_name, input, success, result_summary, elapsed});
  BoundaryResult out = record({tag, fsnap::Phase::kPostTool, call_id, tool_name, run_}, *session,
                              success, result_summary, elapsed, input);
  if (pre_rec) {
    pre_rec->success = success;
    pre_rec->result_summary = result_summary;
    pre_rec->elapsed_ms = elapsed;
    ledger_.write(*pre_rec);
  }
  return out;
}

BoundaryResult ToolBoundaries::rollback_tool(const std::string& call_id,
                                             const std::string& result_summary) {
  fsnap::Checkpoint pre;
  std::optional<LedgerRecord> pre_rec = pre_record(call_id, &pre);
  std::int64_t elapsed = elapsed_since(pre);
  std::shared_ptr<Session> session = current_session();
  fsnap::RestoreOptions options;
  options.run = run_;
  fsnap::RestoreReport report = workspace_.restore_checkpoint(pre, options);
  if (pre_rec && !pre_rec->session_json.empty()) {
    session->rollback_declaring(pre_rec->session());
  }
  std::string input = pre_rec ? pre_rec->input_summary : "";
  session->dispatch(
      ToolInvoked{call_id, pre.meta.tool_name, input, false, result_summary, elapsed});
  BoundaryResult out = record({"", fsnap::Phase::kCheckpoint, call_id, pre.meta.tool_name, run_},
                              *session, false, result_summary, elapsed, input);
  out.restore = std::move(report);
  if (pre_rec) {
    pre_rec->success = false;
    pre_rec->result_summary = result_summary;
    pre_rec->elapsed_ms = elapsed;
    ledger_.write(*pre_rec);
  }
  return out;
}

BoundaryResult ToolBoundaries::checkpoint(const fsnap::CheckpointMeta& meta,
                                          const std::function<void(Session&)>& change,
                                          const std::string& summary) {
  std::shared_ptr<Session> session = current_session();
  if (change) change(*session);
  fsnap::CheckpointMeta m = meta;
  m.run = run_;
  return record(m, *session, std::nullopt, summary, std::nullopt, "");
}

std::optional<BoundaryResult> ToolBoundaries::record_outside_changes() {
  std::vector<fsnap::Checkpoint> tip;
  try {
    tip = workspace_.repo().log(run_, 1);
  } catch (const fsnap::Error& e) {
    if (e.code() != fsnap::ErrorCode::kNotFound) throw;
  }
  if (tip.empty()) return std::nullopt;  // a new run: its first checkpoint is the baseline
  if (workspace_.capture_tree() == tip.front().tree) return std::nullopt;
  fsnap::CheckpointMeta meta;
  meta.phase = fsnap::Phase::kCheckpoint;
  return checkpoint(meta, nullptr, "changes made outside any tool call");
}

BoundaryResult ToolBoundaries::restore(const fsnap::Checkpoint& target, bool dry_run) {
  fsnap::RestoreOptions options;
  options.dry_run = dry_run;
  options.run = run_;
  BoundaryResult out;
  if (dry_run) {
    out.restore = workspace_.restore_checkpoint(target, options);
    return out;
  }
  std::optional<LedgerRecord> target_rec = ledger_.read(target);
  std::shared_ptr<Session> session = current_session();
  fsnap::RestoreReport report = workspace_.restore_checkpoint(target, options);
  if (target_rec && !target_rec->session_json.empty()) {
    session->rollback_declaring(target_rec->session());
  }
  out = record({"", fsnap::Phase::kCheckpoint, "", "", run_}, *session, std::nullopt,
               "restored " + target.id, std::nullopt, "");
  out.restore = std::move(report);
  return out;
}

}  // namespace sandbox
