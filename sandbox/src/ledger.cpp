#include "sandbox/ledger.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <iterator>
#include <set>

#include <Poco/JSON/Parser.h>

#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/store_layout.hpp"
#include "sandbox/containment.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/rollback_policy.hpp"

namespace sandbox {

// ---- Ledger ---------------------------------------------------------------------

Ledger::Ledger(std::shared_ptr<fsnap::ShadowRepo> repo, std::shared_ptr<SessionTrees> trees)
    : repo_(std::move(repo)), trees_(trees ? std::move(trees) : std::make_shared<SessionTrees>()) {
  if (repo_ == nullptr) throw Error(ErrorCode::kInvalidArgument, "a Ledger needs a repository");
}

Ledger Ledger::of(const fsnap::Store& store) {
  return Ledger(
      std::make_shared<fsnap::ShadowRepo>(fsnap::ShadowRepo::open(store.repo_dir(), false)));
}

std::optional<LedgerRecord> Ledger::read(const fsnap::Checkpoint& checkpoint) const {
  std::optional<std::string> note = repo_->note(checkpoint.commit);
  if (!note) return std::nullopt;
  try {
    return LedgerRecord::from_json(*note);
  } catch (const Error& e) {
    throw Error(ErrorCode::kCorrupt, "the ledger note of checkpoint " + checkpoint.id +
                                         " (commit " + checkpoint.commit +
                                         ") is damaged: " + e.what());
  }
}

fsnap::Checkpoint Ledger::resolve(std::string_view ref) const {
  constexpr std::string_view kFailed = "failed:";
  if (ref.substr(0, kFailed.size()) != kFailed) return repo_->resolve(ref);
  std::string call(ref.substr(kFailed.size()));
  if (call.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                fsnap::quote_input(ref) + " names no tool call id (use failed:<tool_call_id>)");
  }
  // Newest first: the call's end, then (after a rollback) the safety checkpoint taken
  // before it, then its pre-tool checkpoint.
  std::optional<fsnap::Checkpoint> end;
  for (fsnap::Checkpoint& c : repo_->log({}, 0)) {
    if (c.meta.tool_call_id != call) continue;
    if (c.meta.phase == fsnap::Phase::kSafety) return std::move(c);
    if (c.meta.phase == fsnap::Phase::kPreTool) {
      // A rollback that had nothing to put back took no safety checkpoint: the
      // workspace as the call left it is the one its end records.
      if (end) return std::move(*end);
      throw Error(ErrorCode::kNotFound, "tool call " + fsnap::quote_input(call) +
                                            " has not ended: it has no failed state");
    }
    if (end ||
        (c.meta.phase != fsnap::Phase::kPostTool && c.meta.phase != fsnap::Phase::kCheckpoint)) {
      continue;
    }
    std::optional<LedgerRecord> record = read(c);
    if (!record || !record->success) {
      throw Error(ErrorCode::kNotFound, "cannot tell whether tool call " +
                                            fsnap::quote_input(call) + " failed: checkpoint " +
                                            c.id + " that ended it has no outcome in its record");
    }
    if (*record->success) {
      throw Error(ErrorCode::kNotFound, "tool call " + fsnap::quote_input(call) +
                                            " did not fail (the workspace it left is post:" + call +
                                            ")");
    }
    if (record->rollback.empty() && c.meta.phase == fsnap::Phase::kCheckpoint &&
        !c.parent.empty()) {
      // Recorded before safety checkpoints named their call: the one before the end of a
      // rollback is its safety checkpoint.
      fsnap::Checkpoint before = repo_->read_checkpoint(c.parent);
      if (before.meta.phase == fsnap::Phase::kSafety) return before;
    }
    if (record->rollback != to_string(RollbackDecision::Kind::kRollBack)) return std::move(c);
    end = std::move(c);  // rolled back: the safety checkpoint comes next
  }
  if (end) return std::move(*end);
  throw Error(ErrorCode::kNotFound, "no tool call " + fsnap::quote_input(call));
}

std::optional<LedgerRecord> Ledger::latest(const std::string& run) const {
  // Newest first, in growing windows: the tip has a record (a checkpoint and its record
  // land together), so usually only that one note is read.
  std::size_t seen = 0;
  for (std::size_t window = 1;; window *= 8) {
    std::vector<fsnap::Checkpoint> chain = repo_->log(run, window);
    for (std::size_t i = seen; i < chain.size(); ++i) {
      if (std::optional<LedgerRecord> r = read(chain[i])) return r;
    }
    if (chain.size() < window) return std::nullopt;
    seen = chain.size();
  }
}

std::vector<LedgerRecord> Ledger::records(const std::string& run) const {
  std::vector<fsnap::Checkpoint> chain = repo_->log(run, 0);
  std::vector<LedgerRecord> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (std::optional<LedgerRecord> r = read(*it)) out.push_back(std::move(*r));
  }
  return out;
}

SessionSnapshot Ledger::session(const LedgerRecord& record) const {
  if (!record.session_tree.empty()) {
    try {
      return trees_->read(*repo_, record.session_tree, record.session_stamp);
    } catch (const SnapshotMismatchError&) {
      throw;
    } catch (const Error& e) {
      throw Error(ErrorCode::kCorrupt, "the session of checkpoint " + record.checkpoint_id +
                                           " (commit " + record.commit + "): " + e.what());
    }
  }
  if (!record.session_json.empty()) return SessionSnapshot::from_json(record.session_json);
  return SessionSnapshot();
}

std::string Ledger::session_json(const LedgerRecord& record) const {
  if (record.session_tree.empty()) return record.session_json;
  try {
    return trees_->read_json(*repo_, record.session_tree, record.session_stamp);
  } catch (const Error& e) {
    throw Error(ErrorCode::kCorrupt, "the session of checkpoint " + record.checkpoint_id +
                                         " (commit " + record.commit + "): " + e.what());
  }
}

namespace {

// The names of the slice types a record's session holds items of.
std::vector<std::string> slice_types_of(const Ledger& ledger, SessionTrees& trees,
                                        const LedgerRecord& record) {
  if (!record.session_tree.empty()) return trees.slice_types(ledger.repo(), record.session_tree);
  std::vector<std::string> out;
  if (record.session_json.empty()) return out;
  // An inline (v1) session: its JSON lists its slices.
  Poco::JSON::Parser parser;
  Poco::JSON::Object::Ptr root =
      parser.parse(record.session_json).extract<Poco::JSON::Object::Ptr>();
  Poco::JSON::Array::Ptr slices = root ? root->getArray("slices") : nullptr;
  for (std::size_t i = 0; slices && i < slices->size(); ++i) {
    Poco::JSON::Object::Ptr slice = slices->getObject(static_cast<unsigned>(i));
    Poco::JSON::Array::Ptr items = slice ? slice->getArray("items") : nullptr;
    if (items && items->size() > 0) out.push_back(slice->getValue<std::string>("type"));
  }
  return out;
}

}  // namespace

std::vector<fsnap::Checkpoint> Ledger::find(const std::string& run,
                                            const Ledger::SnapshotQuery& query) const {
  std::vector<fsnap::Checkpoint> out;
  for (const fsnap::Checkpoint& c : repo_->log(run, 0)) {
    if (!query.tag_pattern.empty() &&
        ::fnmatch(query.tag_pattern.c_str(), c.meta.tag.c_str(), 0) != 0) {
      continue;
    }
    if (query.created_after && c.created_at <= *query.created_after) continue;
    if (query.created_before && c.created_at >= *query.created_before) continue;
    if (!query.contains_slice.empty()) {
      std::optional<LedgerRecord> record = read(c);
      if (!record) continue;
      std::vector<std::string> types = slice_types_of(*this, *trees_, *record);
      if (std::find(types.begin(), types.end(), query.contains_slice) == types.end()) continue;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<fsnap::Checkpoint> Ledger::lineage(const fsnap::Checkpoint& checkpoint) const {
  std::vector<fsnap::Checkpoint> chain = repo_->log(checkpoint.meta.run, 0);  // newest first
  auto at = std::find_if(chain.begin(), chain.end(),
                         [&](const fsnap::Checkpoint& c) { return c.commit == checkpoint.commit; });
  if (at == chain.end()) {
    throw Error(ErrorCode::kNotFound, "checkpoint " + checkpoint.id + " is not in run " +
                                          fsnap::quote_input(checkpoint.meta.run));
  }
  return {std::make_reverse_iterator(chain.end()), std::make_reverse_iterator(at)};
}

// ---- LedgerBoundaryLog ------------------------------------------------------------

namespace {

// A step of a ledger run: the store lock.
class LockedStep : public BoundaryLog::StepHold {
 public:
  explicit LockedStep(fsnap::StoreLock lock) : lock_(std::move(lock)) {}

 private:
  fsnap::StoreLock lock_;
};

}  // namespace

LedgerBoundaryLog::LedgerBoundaryLog(fsnap::Store store, std::shared_ptr<Ledger> ledger,
                                     std::string run, std::string resource)
    : store_(std::move(store)),
      ledger_(std::move(ledger)),
      run_(std::move(run)),
      resource_(std::move(resource)) {}

std::unique_ptr<BoundaryLog::StepHold> LedgerBoundaryLog::begin_step(ExecutionState& state) {
  auto step = std::make_unique<LockedStep>(store_.lock());
  // The run's session is the one its newest record holds; other processes may have
  // added records since this one last looked.
  std::string known = std::move(current_);
  current_.clear();  // until this step records a boundary
  std::vector<fsnap::Checkpoint> tip = ledger_->repo().log(run_, 1);
  if (!known.empty() && !tip.empty() && tip.front().commit == known) return step;
  std::optional<LedgerRecord> latest = ledger_->latest(run_);
  SessionSnapshot session;
  if (latest && latest->has_session()) session = ledger_->session(*latest);
  state.session().rollback(session, /*preserve_logs=*/false);
  // Containment continues from what the run counted so far.
  state.continue_containment(containment_state(session));
  return step;
}

void LedgerBoundaryLog::remember(const Boundary& boundary) {
  // The boundary and its record are in the store already; the state holds its session.
  current_ = boundary.record.commit;
}

void LedgerBoundaryLog::forget(const std::string&) {
  // The call's pre-tool record stays, without an outcome, as the ledger's account of
  // a call that was begun and discarded.
}

Boundary LedgerBoundaryLog::boundary_at(const fsnap::Checkpoint& c) const {
  Boundary b;
  b.snapshot.id = c.id;
  b.snapshot.created_at = c.created_at;
  b.snapshot.resources.emplace(resource_, ResourceSnapshot::of(fsnap::to_snapshot(c)));
  b.snapshot.metadata.tag = c.meta.tag;
  b.snapshot.metadata.label = c.meta.label;
  b.snapshot.metadata.tool_call_id = c.meta.tool_call_id;
  b.snapshot.metadata.tool_name = c.meta.tool_name;
  b.snapshot.metadata.phase = c.meta.phase;
  b.snapshot.metadata.run = c.meta.run;
  if (std::optional<LedgerRecord> record = ledger_->read(c)) {
    b.record = std::move(*record);
    if (b.record.has_session()) b.snapshot.session = ledger_->session(b.record);
    b.snapshot.metadata.outcome =
        CallOutcome{b.record.input_summary, b.record.success,  b.record.result_summary,
                    b.record.elapsed_ms,    b.record.rollback, b.record.rollback_reason};
  } else {
    // Files only: a snapshot that covers no slice leaves the session as it is.
    b.snapshot.session.covered.clear();
    b.record = LedgerRecord::for_checkpoint(c, std::string(), SessionTrees::SessionStamp());
  }
  // The checkpoint is the truth about where the record sits (gc rewrites commits).
  b.record.commit = c.commit;
  b.record.checkpoint_id = c.id;
  return b;
}

namespace {

// Whether checkpoint c ends call_id: its post-tool checkpoint, or the one recorded
// after its rollback.
bool ends(const fsnap::Checkpoint& c, const std::string& call_id) {
  return c.meta.tool_call_id == call_id &&
         (c.meta.phase == fsnap::Phase::kPostTool || c.meta.phase == fsnap::Phase::kCheckpoint);
}

}  // namespace

std::optional<Boundary> LedgerBoundaryLog::pre_tool(const std::string& call_id) const {
  return recent_pre_tool(call_id, 0);
}

std::optional<Boundary> LedgerBoundaryLog::recent_pre_tool(const std::string& call_id,
                                                           std::size_t newest) const {
  std::optional<FoundPreTool> found = find_pre_tool(call_id, newest);
  if (!found) return std::nullopt;
  Boundary b = boundary_at(found->checkpoint);
  b.ended = found->ended;
  return b;
}

std::optional<bool> LedgerBoundaryLog::call_ended(const std::string& call_id) const {
  std::optional<FoundPreTool> found = find_pre_tool(call_id, 0);
  return found ? std::optional<bool>(found->ended) : std::nullopt;
}

std::optional<LedgerBoundaryLog::FoundPreTool> LedgerBoundaryLog::find_pre_tool(
    const std::string& call_id, std::size_t newest) const {
  // The call's pre-tool checkpoint is near the tip of its run: look there first, in
  // growing windows, rather than through the whole chain. Whether the call has ended
  // is what the chain says (a checkpoint that ends it is newer), not what a record says.
  std::size_t seen = 0;
  bool ended = false;
  std::string tip;  // the commit the search started from
  for (std::size_t window = newest != 0 ? newest : 8;; window *= 8) {
    std::vector<fsnap::Checkpoint> chain = ledger_->repo().log(run_, window);
    if (newest == 0 && seen == 0) {
      tip = chain.empty() ? "" : chain.front().commit;
      std::lock_guard<std::mutex> lock(missing_mutex_);
      if (!call_id.empty() && call_id == missing_call_ && tip == missing_at_) return std::nullopt;
    }
    for (std::size_t i = seen; i < chain.size(); ++i) {
      if (chain[i].meta.phase == fsnap::Phase::kPreTool && chain[i].meta.tool_call_id == call_id) {
        return FoundPreTool{std::move(chain[i]), ended};
      }
      ended = ended || ends(chain[i], call_id);
    }
    if (window == newest) return std::nullopt;
    if (chain.size() < window) {
      // The whole chain, from tip or a newer one: the same answer until it moves.
      if (newest == 0) {
        std::lock_guard<std::mutex> lock(missing_mutex_);
        missing_call_ = call_id;
        missing_at_ = tip;
      }
      return std::nullopt;
    }
    seen = chain.size();
  }
}

std::vector<std::string> LedgerBoundaryLog::open_calls() const {
  return recent_open_calls(0);
}

bool LedgerBoundaryLog::has_open_call() const {
  constexpr std::size_t kRecent = 256;
  return !recent_open_calls(kRecent).empty();
}

std::vector<std::string> LedgerBoundaryLog::recent_open_calls(std::size_t newest) const {
  std::vector<fsnap::Checkpoint> chain = ledger_->repo().log(run_, newest);  // newest first
  std::set<std::string> ended;
  std::vector<std::string> out;
  for (const fsnap::Checkpoint& c : chain) {
    if (c.meta.tool_call_id.empty()) continue;
    if (c.meta.phase == fsnap::Phase::kPreTool) {
      if (ended.count(c.meta.tool_call_id) == 0) out.insert(out.begin(), c.meta.tool_call_id);
      ended.insert(c.meta.tool_call_id);  // an older pre_tool of the same id is not open
    } else if (ends(c, c.meta.tool_call_id)) {
      ended.insert(c.meta.tool_call_id);
    }
  }
  return out;
}

std::vector<BoundaryLog::LaterBoundary> LedgerBoundaryLog::since(const Boundary& pre) const {
  std::vector<fsnap::Checkpoint> chain = ledger_->repo().log(run_, 0);  // newest first
  std::vector<BoundaryLog::LaterBoundary> out;
  std::size_t i = 0;
  for (; i < chain.size() && chain[i].commit != pre.record.commit; ++i) {
    const fsnap::Checkpoint& c = chain[i];
    if (c.meta.phase == fsnap::Phase::kSafety) continue;  // not a change, a record of one
    BoundaryLog::LaterBoundary later;
    later.fact.phase = c.meta.phase;
    later.fact.call_id = c.meta.tool_call_id;
    later.fact.tool_name = c.meta.tool_name;
    later.fact.checkpoint_id = c.id;
    later.recorded_at = c.created_at;
    later.trees = {{resource_, c.tree}};
    later.skipped = {{resource_, c.skipped}};
    if (i + 1 < chain.size()) {
      later.previous_trees = {{resource_, chain[i + 1].tree}};
      later.previous_skipped = {{resource_, chain[i + 1].skipped}};
    }
    later.fact.changed_files =
        later.trees != later.previous_trees || later.skipped != later.previous_skipped;
    out.push_back(std::move(later));
  }
  std::reverse(out.begin(), out.end());
  if (i == chain.size()) return out;
  // Every other run of the store works on the same workspace: what it recorded since
  // the call started is a change a rollback would undo too (put before this run's own).
  std::vector<BoundaryLog::LaterBoundary> others = other_runs_since(chain[i].created_at);
  out.insert(out.begin(), std::make_move_iterator(others.begin()),
             std::make_move_iterator(others.end()));
  return out;
}

std::vector<BoundaryLog::LaterBoundary> LedgerBoundaryLog::other_runs_since(
    fsnap::TimePoint after) const {
  const fsnap::ShadowRepo& repo = ledger_->repo();
  std::vector<BoundaryLog::LaterBoundary> out;
  for (const std::string& other : repo.runs()) {
    if (other == run_) continue;
    // Commit times are whole seconds: a tip older than that cannot be newer than after.
    std::optional<fsnap::TimePoint> tip = repo.ref_time(fsnap::layout::run_ref(other));
    if (!tip || *tip + std::chrono::seconds(1) < after) continue;
    // Newest first, read in growing windows until one reaches past after.
    std::vector<fsnap::Checkpoint> chain;
    for (std::size_t window = 16;; window *= 4) {
      chain = repo.log(other, window);
      if (chain.size() < window || chain.back().created_at <= after) break;
    }
    for (std::size_t i = 0; i < chain.size() && chain[i].created_at > after; ++i) {
      const fsnap::Checkpoint& c = chain[i];
      if (c.meta.phase == fsnap::Phase::kSafety) continue;
      BoundaryLog::LaterBoundary later;
      later.fact.phase = c.meta.phase;
      later.fact.call_id = c.meta.tool_call_id;
      later.fact.tool_name = c.meta.tool_name;
      later.fact.checkpoint_id = c.id;
      later.fact.run = other;
      later.recorded_at = c.created_at;
      later.trees = {{resource_, c.tree}};
      later.skipped = {{resource_, c.skipped}};
      if (i + 1 < chain.size()) {
        later.previous_trees = {{resource_, chain[i + 1].tree}};
        later.previous_skipped = {{resource_, chain[i + 1].skipped}};
      }
      // A run's first checkpoint is its baseline: a record of the workspace, no change.
      later.fact.changed_files = i + 1 < chain.size() && (later.trees != later.previous_trees ||
                                                          later.skipped != later.previous_skipped);
      out.push_back(std::move(later));
    }
  }
  return out;
}

}  // namespace sandbox
