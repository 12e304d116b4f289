#include "sandbox/tool_transactions.hpp"

#include <iostream>
#include <set>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/call_tally.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/sha256.hpp"

namespace sandbox {

namespace {

std::int64_t milliseconds_between(fsnap::TimePoint from, fsnap::TimePoint to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

}  // namespace

ToolTransactions::ToolTransactions(ExecutionState& state, BoundaryLog& log, RollbackPolicy policy,
                                   std::string run)
    : state_(state), log_(log), policy_(std::move(policy)), run_(std::move(run)) {}

std::unique_ptr<BoundaryLog::StepHold> ToolTransactions::begin_step() {
  std::unique_ptr<BoundaryLog::StepHold> step = log_.begin_step(state_);
  if (step_hook_) step_hook_();
  return step;
}

Boundary ToolTransactions::record(SnapshotMetadata meta, const std::vector<LedgerRecord>& amends) {
  meta.run = run_;
  Boundary b;
  b.snapshot = state_.snapshot(meta, amends);
  b.record = b.snapshot.record;
  log_.remember(b);
  return b;
}

Boundary ToolTransactions::open_call(const std::string& call_id) const {
  std::optional<Boundary> pre = log_.pre_tool(call_id);
  if (!pre) {
    throw Error(ErrorCode::kNotFound, "tool call " + fsnap::quote_input(call_id) +
                                          " has no pre-tool checkpoint in run " +
                                          fsnap::quote_input(run_));
  }
  if (pre->ended) {
    std::string how = !pre->record.success   ? ""
                      : *pre->record.success ? " (it succeeded)"
                                             : " (it failed)";
    throw Error(ErrorCode::kConflict,
                "tool call " + fsnap::quote_input(call_id) + " has ended already" + how +
                    "; to put the workspace back to before it, restore its pre-tool checkpoint "
                    "(shadowbox restore pre:" +
                    call_id + ")");
  }
  return *pre;
}

namespace {

// Whether boundary fact ends its call: its post-tool boundary, or the one recorded after
// its rollback or when it never ran.
bool ends_call(const BoundaryFact& fact) {
  return !fact.call_id.empty() &&
         (fact.phase == fsnap::Phase::kPostTool || fact.phase == fsnap::Phase::kCheckpoint);
}

}  // namespace

OpenCall ToolTransactions::open_call_facts(const std::string& call_id) const {
  OpenCall call;
  call.id = call_id;
  if (std::optional<Boundary> pre = log_.pre_tool(call_id)) {
    call.tool_name = pre->record.tool_name;
    call.parent = pre->record.parent_call_id;
    if (pre->record.paths) call.paths.emplace(pre->record.paths->begin(), pre->record.paths->end());
  }
  return call;
}

ToolTransactions::PathSets ToolTransactions::changed_paths(const Trees& from, const Trees& to,
                                                           const SkippedPaths& from_skipped,
                                                           const SkippedPaths& to_skipped,
                                                           PathSets* directories) const {
  // What changed from one tree of each resource to another: paths for a host workspace
  // (with the files over the size limit, which no tree holds, by what each side
  // skipped), the whole resource ("") for one that cannot say; and which of them are
  // directories in to.
  PathSets paths;
  auto skipped = [](const SkippedPaths& s, const std::string& name) {
    auto found = s.find(name);
    return found == s.end() ? std::vector<fsnap::SkippedPath>{} : found->second;
  };
  for (const auto& [name, tree] : to) {
    auto before = from.find(name);
    if (before == from.end()) continue;
    std::vector<std::string> large =
        fsnap::large_file_changes(skipped(from_skipped, name), skipped(to_skipped, name));
    if (before->second == tree && large.empty()) continue;
    const ResourceRegistry::Entry* entry = state_.resources().find(std::string_view(name));
    if (entry == nullptr || entry->host == nullptr) {
      paths[name].insert("");
      continue;
    }
    for (const fsnap::TreeChange& c : entry->host->repo().diff_trees(before->second, tree)) {
      paths[name].insert(c.path);
      if (directories && c.after && c.after->type == fsnap::EntryType::kDirectory) {
        (*directories)[name].insert(c.path);
      }
    }
    paths[name].insert(large.begin(), large.end());
  }
  return paths;
}

ToolTransactions::Windows ToolTransactions::windows_since(
    const Boundary& pre, const std::vector<BoundaryLog::LaterBoundary>& later,
    std::optional<std::size_t> until) {
  Windows out;
  out.open = calls_open_after(pre, later);
  out.newest = pre.snapshot.file_trees();  // of this run
  out.newest_skipped = pre.snapshot.file_skipped();
  for (std::size_t i = 0; i < later.size(); ++i) {
    const BoundaryLog::LaterBoundary& b = later[i];
    // Up to a boundary: this run's after it, and the other runs' recorded after it,
    // came later.
    if (until && (b.fact.run.empty() ? i > *until : b.recorded_at > later[*until].recorded_at)) {
      continue;
    }
    ChangeWindow window;
    window.seen_at = b.fact;
    if (b.fact.changed_files) {
      window.changed = changed_paths(b.previous_trees, b.trees, b.previous_skipped, b.skipped,
                                     &window.directories);
    }
    if (b.fact.run.empty()) {
      window.open = out.open_now();
      out.newest = b.trees;
      out.newest_skipped = b.skipped;
      if (b.fact.phase == fsnap::Phase::kPreTool && out.open.count(b.fact.call_id) == 0) {
        out.open.emplace(b.fact.call_id, open_call_facts(b.fact.call_id));
      }
      if (ends_call(b.fact)) out.open.erase(b.fact.call_id);
    }
    out.windows.push_back(std::move(window));
  }
  return out;
}

std::vector<OpenCall> ToolTransactions::Windows::open_now() const {
  std::vector<OpenCall> calls;
  for (const auto& [id, call] : open) calls.push_back(call);
  return calls;
}

ToolTransactions::ChangesSince ToolTransactions::changes_since(const Boundary& pre) {
  ChangesSince out;
  Windows seen = windows_since(pre, log_.since(pre), std::nullopt);
  out.windows = std::move(seen.windows);

  // From the newest boundary to now: what the workspace is now (a capture, recorded by
  // no checkpoint). A resource that cannot be compared counts as changed.
  Trees now;
  SkippedPaths now_skipped;
  for (const auto& [name, tree] : seen.newest) {
    const ResourceRegistry::Entry* entry = state_.resources().find(std::string_view(name));
    if (entry == nullptr || entry->host == nullptr) {
      now[name] = "";
      continue;
    }
    fsnap::CaptureReport capture = entry->host->capture_report();
    now[name] = capture.tree;
    now_skipped[name] = std::move(capture.skipped);
  }
  ChangeWindow last;
  last.seen_at.phase = fsnap::Phase::kPostTool;
  last.seen_at.call_id = pre.snapshot.metadata.tool_call_id;
  last.seen_at.tool_name = pre.snapshot.metadata.tool_name;
  last.seen_at.changed_files = true;
  last.changed =
      changed_paths(seen.newest, now, seen.newest_skipped, now_skipped, &last.directories);
  last.open = seen.open_now();
  out.windows.push_back(std::move(last));
  out.differing =
      changed_paths(pre.snapshot.file_trees(), now, pre.snapshot.file_skipped(), now_skipped);

  out.state_changed = state_changed_since(pre);
  return out;
}

std::map<std::string, OpenCall> ToolTransactions::calls_open_after(
    const Boundary& pre, const std::vector<BoundaryLog::LaterBoundary>& later) const {
  // The failed call, those that end later without having begun later, and those still
  // open that began before it.
  std::set<std::string> begun_later, ended_later;
  for (const BoundaryLog::LaterBoundary& b : later) {
    if (!b.fact.run.empty()) continue;
    if (b.fact.phase == fsnap::Phase::kPreTool) begun_later.insert(b.fact.call_id);
    if (ends_call(b.fact)) ended_later.insert(b.fact.call_id);
  }
  std::map<std::string, OpenCall> open;
  auto add = [&](const std::string& id) {
    if (open.count(id) == 0 && begun_later.count(id) == 0) open.emplace(id, open_call_facts(id));
  };
  add(pre.snapshot.metadata.tool_call_id);
  for (const std::string& id : ended_later) add(id);
  for (const std::string& id : log_.open_calls()) add(id);
  return open;
}

bool ToolTransactions::state_changed_since(const Boundary& pre) const {
  SessionSnapshot now = state_.session().snapshot(kStatePolicies);
  SessionSnapshot then = pre.snapshot.session;
  for (auto it = then.slices.begin(); it != then.slices.end();) {
    auto policy = then.policies.find(it->first);
    bool state = policy != then.policies.end() && policy->second == SlicePolicy::kState;
    it = state ? std::next(it) : then.slices.erase(it);
  }
  then.covered = now.covered;
  return !SessionSnapshot::diff(then, now).empty();
}

void ToolTransactions::log_invocation(const Boundary& pre, bool success, const std::string& summary,
                                      std::int64_t elapsed_ms) {
  const SnapshotMetadata& m = pre.snapshot.metadata;
  ToolInvoked event{m.tool_call_id, m.tool_name, pre.record.input_summary,
                    success,        summary,     elapsed_ms};
  // Telemetry: a reducer that fails must not fail the call.
  try {
    if (!state_.session().has_reducer<ToolInvoked, ToolInvoked>()) {
      state_.session().register_reducer<ToolInvoked, ToolInvoked>(
          statekit::reducers::append_all<ToolInvoked>);
    }
    state_.session().dispatch(event);
  } catch (const std::exception& e) {
    std::cerr << "shadowbox: warning: could not log the invocation of " << m.tool_name << " ("
              << m.tool_call_id << "): " << e.what() << '\n';
  }
}

Boundary ToolTransactions::end_call(const Boundary& pre, fsnap::Phase phase, bool success,
                                    const std::string& summary, std::int64_t elapsed_ms,
                                    const std::string& tag, bool move_tag,
                                    const RollbackDecision* rollback,
                                    const fsnap::RestoreReport* restored, bool agent_denied) {
  const SnapshotMetadata& pm = pre.snapshot.metadata;
  SnapshotMetadata meta;
  meta.tag = tag;
  meta.move_tag = move_tag;
  meta.tool_call_id = pm.tool_call_id;
  meta.tool_name = pm.tool_name;
  meta.undoes = pre.record.undoes;
  meta.phase = phase;
  meta.outcome = CallOutcome{pre.record.input_summary, success, summary, elapsed_ms};
  meta.outcome.agent_denied = agent_denied;
  if (rollback != nullptr) {
    meta.outcome.rollback = to_string(rollback->kind);
    meta.outcome.rollback_reason = rollback->reason;
    for (const KeptPath& kept : rollback->kept) {
      meta.outcome.rollback_kept.emplace_back(kept.path.empty() ? kept.resource : kept.path,
                                              kept.why);
    }
  }
  if (restored != nullptr) {
    for (const fsnap::UnrestoredPath& u : restored->unrestored) {
      meta.outcome.rollback_unrestored.emplace_back(u.path, u.why);
    }
  }
  // The pre-tool record learns the outcome in the notes commit of the boundary that
  // ends the call: one commit rather than a second one after it (a notes commit
  // rewrites the notes tree's root, 7 KB before packing). Whether a call ended is the
  // run's to say (the chain, not a record): a crash after the notes ref moved and before
  // the run's did leaves the outcome in the pre-tool record of a call the run shows
  // open, which the boundary that ends it later amends again.
  LedgerRecord amended = pre.record;
  amended.set_outcome(meta.outcome);
  Boundary end = record(meta, {amended});
  keep_in_store(pre, end, success, summary, elapsed_ms);
  return end;
}

void ToolTransactions::keep_in_store(const Boundary& pre, const Boundary& end, bool success,
                                     const std::string& summary, std::int64_t elapsed_ms) {
  CheckpointSink* store = state_.checkpoints();
  if (store == nullptr) return;
  ToolCheckpoint c;
  c.tool_call_id = pre.snapshot.metadata.tool_call_id;
  c.tool_name = pre.snapshot.metadata.tool_name;
  c.params = pre.record.input_summary;
  c.pre_snapshot = pre.snapshot;
  if (end.snapshot.metadata.phase == fsnap::Phase::kPostTool) {
    c.post_snapshot = end.snapshot;
  } else {
    c.rollback_snapshot = end.snapshot;
  }
  c.result_summary = summary;
  c.success = success;
  c.elapsed = std::chrono::milliseconds(elapsed_ms);
  c.recorded_at = state_.clock().now();
  store->record(std::move(c));
}

StepResult ToolTransactions::begin(const ToolCall& call, const BeginOptions& options) {
  if (call.id.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "a pre-tool checkpoint needs a tool call id");
  }
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  // Begun again while open (an agent that sent its pre-tool event twice, a hook run
  // twice): the first begin stands — its boundary is the call's, and the one its end
  // completes. Calls in flight are among the newest boundaries.
  constexpr std::size_t kRecent = 32;
  if (std::optional<Boundary> earlier = log_.recent_pre_tool(call.id, kRecent);
      earlier && !earlier->ended) {
    return StepResult{*earlier, std::nullopt};
  }
  SnapshotMetadata meta;
  meta.tag = options.tag;
  meta.move_tag = options.move_tag;
  meta.tool_call_id = call.id;
  meta.tool_name = call.name;
  meta.outcome.input_summary = call.params;
  if (options.before_admission) options.before_admission();
  policy::Admission admission;
  if (policy::ExecutionContext* containment = state_.containment()) {
    // The repeat guard compares calls by a digest of their input.
    std::string fingerprint;
    if (containment->config().repeat.enabled()) {
      fingerprint =
          sha256_hex(options.canonical_input.empty() ? call.params : options.canonical_input);
    }
    admission = containment->admit(policy::NodeKind::kTool,
                                   {.operation_name = call.name,
                                    .key = call.name,
                                    .cost_estimate_hint = options.cost_estimate_usd,
                                    .input_fingerprint = fingerprint});
    state_.record_containment();
    meta.decision = std::string(policy::to_string(admission.decision));
    meta.safety_event = admission.event;
    if (admission.decision == policy::Decision::kHalt) {
      // Denied: nothing runs — no step, no failure, no invocation. One boundary says so;
      // the files are as they were.
      std::string summary = "denied: " + (admission.event ? admission.event->reason : "");
      update_call_tally(state_.session(), [](CallTally& t) { ++t.refused; });
      meta.phase = fsnap::Phase::kDenied;
      meta.outcome.success = false;
      meta.outcome.result_summary = summary;
      meta.outcome.elapsed_ms = 0;
      StepResult out{record(std::move(meta)), std::nullopt};
      out.decision = policy::Decision::kHalt;
      out.safety_event = admission.event;
      step.reset();
      publish(call.id, call.name, "denied", summary, admission.event);
      return out;
    }
    containment_nodes_[call.id] = admission.node_id;
  }
  update_call_tally(state_.session(), [](CallTally& t) { ++t.steps; });
  meta.phase = fsnap::Phase::kPreTool;
  meta.paths = call.paths;
  meta.parent_call_id = call.parent;
  meta.separate_outside_changes = options.separate_outside_changes && !log_.has_open_call();
  StepResult out{record(std::move(meta)), std::nullopt};
  out.decision = admission.decision;
  out.safety_event = admission.event;
  step.reset();
  publish(call.id, call.name, "begin", call.params, admission.event);
  return out;
}

StepResult ToolTransactions::end_unbegun(const ToolCall& call, bool success,
                                         const std::string& summary) {
  if (call.id.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "a post-tool checkpoint needs a tool call id");
  }
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  if (log_.pre_tool(call.id)) {
    throw Error(ErrorCode::kConflict, "tool call " + fsnap::quote_input(call.id) +
                                          " has a pre-tool checkpoint: end it as any other");
  }
  Boundary pre;  // what the lost pre-tool boundary would have said of the call
  pre.snapshot.metadata.tool_call_id = call.id;
  pre.snapshot.metadata.tool_name = call.name;
  pre.record.input_summary = call.params;
  if (policy::ExecutionContext* containment = state_.containment()) {
    // The call ran: it is a step, whatever admission would have said.
    containment_nodes_[call.id] = containment->count_unadmitted(
        policy::NodeKind::kTool, {.operation_name = call.name, .key = call.name});
    complete_containment(pre, success, 0, success ? "" : summary);
  }
  update_call_tally(state_.session(), [success](CallTally& t) {
    ++t.steps;
    if (!success) ++t.failed;
  });
  log_invocation(pre, success, summary, 0);
  SnapshotMetadata meta;
  meta.tool_call_id = call.id;
  meta.tool_name = call.name;
  meta.phase = fsnap::Phase::kPostTool;
  meta.outcome = CallOutcome{call.params, success, summary, 0};
  StepResult out{record(std::move(meta)), std::nullopt};
  step.reset();
  publish(call.id, call.name, success ? "succeeded" : "failed", summary, std::nullopt);
  return out;
}

void ToolTransactions::complete_containment(const Boundary& pre, bool success, double cost_usd,
                                            const std::string& error) {
  policy::ExecutionContext* containment = state_.containment();
  if (containment == nullptr) return;
  const std::string& call_id = pre.snapshot.metadata.tool_call_id;
  std::string node;
  if (auto it = containment_nodes_.find(call_id); it != containment_nodes_.end()) {
    node = it->second;
    containment_nodes_.erase(it);
  }
  containment->complete(
      node, policy::CallResult{success, cost_usd, error, false, pre.snapshot.metadata.tool_name});
  state_.record_containment();
}

StepResult ToolTransactions::succeed(const std::string& call_id, const std::string& result_summary,
                                     const std::string& tag, double cost_usd, bool move_tag) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Boundary pre = open_call(call_id);
  complete_containment(pre, true, cost_usd, "");
  std::int64_t elapsed = milliseconds_between(pre.snapshot.created_at, state_.clock().now());
  log_invocation(pre, true, result_summary, elapsed);
  StepResult out{
      end_call(pre, fsnap::Phase::kPostTool, true, result_summary, elapsed, tag, move_tag),
      std::nullopt};
  step.reset();
  publish(call_id, pre.snapshot.metadata.tool_name, "succeeded", result_summary, std::nullopt);
  return out;
}

FailureResult ToolTransactions::fail(const std::string& call_id, const std::string& error,
                                     double cost_usd, const FailureDetails& details) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Boundary pre = open_call(call_id);
  complete_containment(pre, false, cost_usd, error);
  std::int64_t elapsed = milliseconds_between(pre.snapshot.created_at, state_.clock().now());
  const std::string& tool = pre.snapshot.metadata.tool_name;
  FailureResult out;
  FailedCall failed{tool, details.command, details.exit_code};
  std::optional<ChangesSince> changes;
  if (!policy_.keeps(failed)) changes = changes_since(pre);
  out.decision = changes ? policy_.decide(failed, call_id, changes->windows, changes->differing)
                         : policy_.decide(failed, call_id, {}, {});
  using Kind = RollbackDecision::Kind;
  // What is put back: everything when the call's changes are all its own; else only its
  // own paths, and no STATE slice (another call's may have changed it); when it changed
  // no file, its STATE slices if they changed.
  std::optional<ExecutionState::RestoreRequest> request;
  if (out.decision.kind == Kind::kRollBack) {
    request = ExecutionState::RestoreRequest{run_, "before rolling back " + call_id};
    request->tool_call_id = call_id;
    request->tool_name = tool;
    if (!out.decision.complete()) {
      request->only = out.decision.restore;
      request->session = false;
    }
  } else if (out.decision.kind == Kind::kUnchanged && changes && changes->state_changed) {
    request = ExecutionState::RestoreRequest{run_, "before rolling back " + call_id};
    request->only.emplace();  // no file
  }
  std::optional<fsnap::RestoreReport> report;
  if (request) {
    ExecutionState::StateRestore restored = state_.restore(pre.snapshot, *request);
    if (!restored.filesystems.empty()) report = std::move(restored.filesystems.begin()->second);
  }
  out.result_summary = out.decision.reason.empty() ? error : out.decision.reason + ": " + error;
  update_call_tally(state_.session(),
                    [rolled_back = out.decision.kind == Kind::kRollBack](CallTally& t) {
                      ++t.failed;
                      if (rolled_back) ++t.rolled_back;
                    });
  log_invocation(pre, false, out.result_summary, elapsed);
  fsnap::Phase phase =
      out.decision.kind == Kind::kRollBack ? fsnap::Phase::kCheckpoint : fsnap::Phase::kPostTool;
  out.step = StepResult{end_call(pre, phase, false, out.result_summary, elapsed, "", false,
                                 &out.decision, report ? &*report : nullptr),
                        std::move(report)};
  step.reset();
  publish(call_id, tool, "failed", out.result_summary, std::nullopt);
  return out;
}

void ToolTransactions::publish(const std::string& call_id, const std::string& tool,
                               const std::string& phase, const std::string& summary,
                               const std::optional<policy::SafetyEvent>& safety) {
  // The boundary is recorded: a subscriber that fails is its own problem, never the
  // call's (an exception here would leave a begun call unrun, or an ended one
  // reported as failing).
  try {
    events_.tools.publish({call_id, tool, phase, summary});
    if (safety) events_.safety.publish(*safety);
  } catch (const std::exception& e) {
    std::cerr << "shadowbox: warning: a subscriber of the run's events failed on " << tool << " "
              << call_id << " (" << phase << "): " << e.what() << '\n';
  }
}

StepResult ToolTransactions::record_restore(const std::string& summary,
                                            ExecutionState::StateRestore restored) {
  std::optional<fsnap::RestoreReport> report;
  if (!restored.filesystems.empty()) report = std::move(restored.filesystems.begin()->second);
  SnapshotMetadata m;
  m.phase = fsnap::Phase::kCheckpoint;
  m.outcome.result_summary = summary;
  return StepResult{record(std::move(m)), std::move(report)};
}

StepResult ToolTransactions::discard(const std::string& call_id) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Boundary pre = open_call(call_id);
  ExecutionState::StateRestore restored =
      state_.restore(pre.snapshot, {run_, "before discarding " + call_id});
  log_.forget(call_id);
  return record_restore("discarded tool call " + call_id + ": as if it never ran",
                        std::move(restored));
}

StepResult ToolTransactions::agent_denied(const std::string& call_id, const std::string& why) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Boundary pre = open_call(call_id);
  if (policy::ExecutionContext* containment = state_.containment()) {
    std::string node;
    if (auto it = containment_nodes_.find(call_id); it != containment_nodes_.end()) {
      node = it->second;
      containment_nodes_.erase(it);
    }
    containment->withdraw(node);
    state_.record_containment();
  }
  update_call_tally(state_.session(), [](CallTally& t) {
    if (t.steps > 0) --t.steps;
    ++t.agent_denied;
  });
  std::string summary = "denied by the agent: " + why;
  StepResult out{end_call(pre, fsnap::Phase::kCheckpoint, false, summary, 0, "", false, nullptr,
                          nullptr, /*agent_denied=*/true),
                 std::nullopt};
  step.reset();
  publish(call_id, pre.snapshot.metadata.tool_name, "denied by the agent", summary, std::nullopt);
  return out;
}

StepResult ToolTransactions::close_unexecuted(const std::string& call_id, const std::string& why) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Boundary pre = open_call(call_id);
  return StepResult{end_call(pre, fsnap::Phase::kCheckpoint, false, "not executed: " + why, 0, ""),
                    std::nullopt};
}

std::vector<std::string> ToolTransactions::close_open_calls(const std::string& why) {
  std::vector<std::string> closed;
  for (const std::string& id : log_.open_calls()) {
    try {
      close_unexecuted(id, why);
      closed.push_back(id);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kConflict) throw;  // it ended meanwhile (another process)
    }
  }
  return closed;
}

StepResult ToolTransactions::checkpoint(const fsnap::CheckpointMeta& meta,
                                        const std::function<void(Session&)>& change,
                                        const std::string& summary) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  if (change) change(state_.session());
  SnapshotMetadata m{meta};  // its run is this run's (record sets it)
  m.outcome.result_summary = summary;
  return StepResult{record(std::move(m)), std::nullopt};
}

StepResult ToolTransactions::restore(const Boundary& target, const std::string& summary) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  ExecutionState::StateRestore restored =
      state_.restore(target.snapshot, {run_, "before restoring " + target.snapshot.id});
  return record_restore(summary, std::move(restored));
}

StepResult ToolTransactions::restore_paths(const Boundary& target,
                                           const std::vector<std::string>& paths,
                                           const std::string& summary) {
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  ExecutionState::RestoreRequest request{run_, "before restoring paths of " + target.snapshot.id};
  request.paths = paths;
  request.session = false;
  ExecutionState::StateRestore restored = state_.restore(target.snapshot, request);
  return record_restore(summary, std::move(restored));
}

StepResult ToolTransactions::restore_slices(const Boundary& target,
                                            const std::vector<std::string>& types,
                                            const std::string& summary) {
  std::vector<std::type_index> chosen;
  for (const std::string& name : types) {
    std::shared_ptr<const SliceType> type = SliceTypes::find(std::string_view(name));
    if (type == nullptr) {
      throw Error(ErrorCode::kInvalidArgument,
                  "no slice type " + fsnap::quote_input(name) +
                      " (the types of a session are "
                      "listed by shadowbox show REF --json, under ledger.session.slices)");
    }
    chosen.push_back(type->type);
  }
  std::unique_ptr<BoundaryLog::StepHold> step = begin_step();
  Session& session = state_.session();
  SessionSnapshot now = session.snapshot(kStatePolicies, /*include_all=*/true);
  SessionSnapshot wanted = now;
  for (std::type_index type : chosen) {
    auto there = target.snapshot.session.slices.find(type);
    if (there != target.snapshot.session.slices.end()) {
      wanted.slices[type] = there->second;
      auto policy = target.snapshot.session.policies.find(type);
      if (policy != target.snapshot.session.policies.end()) wanted.policies[type] = policy->second;
    } else {
      wanted.slices.erase(type);
      wanted.policies.erase(type);
    }
  }
  session.rollback(wanted, /*preserve_logs=*/false);
  return record_restore(summary, ExecutionState::StateRestore{});
}

}  // namespace sandbox
