#include "sandbox/ledger.hpp"

#include <algorithm>
#include <set>

#include "fsnap/error.hpp"
#include "fsnap/host_filesystem.hpp"
#include "sandbox/errors.hpp"

namespace sandbox {

// ---- Ledger ---------------------------------------------------------------------

Ledger::Ledger(std::shared_ptr<fsnap::ShadowRepo> repo) : repo_(std::move(repo)) {
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

// ---- LedgerBoundaryLog ------------------------------------------------------------

namespace {

// A step of a ledger run: the store lock.
class LockedStep : public StepHold {
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

std::unique_ptr<StepHold> LedgerBoundaryLog::begin_step(ExecutionState& state) {
  auto step = std::make_unique<LockedStep>(store_.lock());
  // The run's session is the one its newest record holds; other processes may have
  // added records since this one last looked.
  std::optional<LedgerRecord> latest = ledger_->latest(run_);
  SessionSnapshot session;
  if (latest && !latest->session_json.empty()) session = latest->session();
  state.session().rollback(session, /*preserve_logs=*/false);
  return step;
}

void LedgerBoundaryLog::remember(const Boundary&) {
  // The boundary and its record are in the store already.
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
  b.snapshot.metadata.tool_call_id = c.meta.tool_call_id;
  b.snapshot.metadata.tool_name = c.meta.tool_name;
  b.snapshot.metadata.phase = c.meta.phase;
  b.snapshot.metadata.run = c.meta.run;
  if (std::optional<LedgerRecord> record = ledger_->read(c)) {
    b.record = std::move(*record);
    if (!b.record.session_json.empty()) b.snapshot.session = b.record.session();
    b.snapshot.metadata.outcome = CallOutcome{b.record.input_summary, b.record.success,
                                              b.record.result_summary, b.record.elapsed_ms};
  } else {
    // Files only: a snapshot that covers no slice leaves the session as it is.
    b.snapshot.session.covered.clear();
    b.record = LedgerRecord::for_checkpoint(c, std::string());
  }
  return b;
}

std::optional<Boundary> LedgerBoundaryLog::pre_tool(const std::string& call_id) const {
  // The call's pre-tool checkpoint is near the tip of its run: look there first, in
  // growing windows, rather than through the whole chain.
  std::size_t seen = 0;
  for (std::size_t window = 8;; window *= 8) {
    std::vector<fsnap::Checkpoint> chain = ledger_->repo().log(run_, window);
    for (std::size_t i = seen; i < chain.size(); ++i) {
      if (chain[i].meta.phase == fsnap::Phase::kPreTool && chain[i].meta.tool_call_id == call_id) {
        return boundary_at(chain[i]);
      }
    }
    if (chain.size() < window) return std::nullopt;
    seen = chain.size();
  }
}

std::vector<BoundaryFact> LedgerBoundaryLog::since(const Boundary& pre) const {
  const fsnap::ShadowRepo& repo = ledger_->repo();
  std::string pre_commit = pre.record.commit;
  std::vector<fsnap::Checkpoint> chain = repo.log(run_, 0);  // newest first
  std::string pre_tree;
  for (const fsnap::Checkpoint& c : chain) {
    if (c.commit == pre_commit) pre_tree = c.tree;
  }
  // Paths whose content now differs from the pre-tool boundary's: a rollback would
  // change exactly these.
  std::set<std::string> differ_now;
  if (!chain.empty() && !pre_tree.empty()) {
    for (const fsnap::TreeChange& change : repo.diff_trees(pre_tree, chain.front().tree)) {
      differ_now.insert(change.path);
    }
  }
  std::vector<BoundaryFact> out;
  for (std::size_t i = 0; i < chain.size() && chain[i].commit != pre_commit; ++i) {
    const fsnap::Checkpoint& c = chain[i];
    if (c.meta.phase == fsnap::Phase::kSafety) continue;  // not a change, a record of one
    BoundaryFact fact;
    fact.phase = c.meta.phase;
    fact.call_id = c.meta.tool_call_id;
    fact.tool_name = c.meta.tool_name;
    fact.checkpoint_id = c.id;
    if (i + 1 < chain.size() && chain[i + 1].tree != c.tree) {
      // It changed files; does any of its changes still stand?
      for (const fsnap::TreeChange& change : repo.diff_trees(chain[i + 1].tree, c.tree)) {
        if (differ_now.count(change.path) != 0) {
          fact.changed_files = true;
          break;
        }
      }
    }
    out.push_back(std::move(fact));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace sandbox
