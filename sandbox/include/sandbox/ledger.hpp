// Ledger — reads the composite ledger of a store: one LedgerRecord per checkpoint,
// stored as a git note on the checkpoint commit under refs/notes/shadowbox. Records
// are written by the checkpoints themselves (ExecutionState::snapshot), so a
// checkpoint never lands without its record.
//
// LedgerBoundaryLog is the BoundaryLog of a run kept in a store: the CLI, the hooks and
// `shadowbox run` drive a run's tool calls through it, from several processes. A step
// holds the store lock and starts from the session of the run's newest record;
// reading it touches one note, not the run's history.
//
// Thread-safety: a Ledger borrows the process's ShadowRepo and shares its contract
// (one thread at a time). Steps of several processes serialise on the store lock.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "sandbox/boundary_log.hpp"
#include "sandbox/ledger_record.hpp"
#include "sandbox/session_trees.hpp"

namespace sandbox {

// Reads the ledger of one store.
class Ledger {
 public:
  // What Ledger::find matches (snapshot queries, docs/conformance/STATE_MANAGEMENT.md):
  // every criterion given.
  //
  //   Ledger::SnapshotQuery q;
  //   q.tag_pattern = "release-*";
  //   q.contains_slice = "plan";
  //   for (const fsnap::Checkpoint& c : ledger.find("", q)) { ... }
  struct SnapshotQuery {
    std::string tag_pattern;  // a glob (fnmatch) the checkpoint's tag matches; "" = any
    std::optional<std::chrono::system_clock::time_point> created_after;   // exclusive
    std::optional<std::chrono::system_clock::time_point> created_before;  // exclusive
    std::string contains_slice;  // a slice type name the session holds items of; "" = any
  };

  // Sessions are read through trees (a SessionTrees of its own if not given; share the
  // ExecutionState's, so that what one writes the other need not decode again).
  explicit Ledger(std::shared_ptr<fsnap::ShadowRepo> repo,
                  std::shared_ptr<SessionTrees> trees = nullptr);
  // A reader of store's ledger with a repository handle of its own (for a process that
  // has none open yet).
  static Ledger of(const fsnap::Store& store);

  // The record of a checkpoint, or nullopt if it has none. Error kCorrupt for a note
  // that is not a ledger record.
  std::optional<LedgerRecord> read(const fsnap::Checkpoint& checkpoint) const;
  // The record of the newest checkpoint of run that has one, or nullopt (also for a
  // run that does not exist).
  std::optional<LedgerRecord> latest(const std::string& run) const;
  // Every record of a run, oldest first (none for a run that does not exist).
  std::vector<LedgerRecord> records(const std::string& run) const;
  // The checkpoint a REF names: every form fsnap::ShadowRepo::resolve knows, and
  // `failed:<tool_call_id>`, the workspace as that failed call left it — the safety
  // checkpoint taken before its rollback, or the checkpoint that ended it when it was
  // not rolled back (refused, kept). Error kNotFound for a call that did not fail, has
  // not ended or does not exist; kInvalidArgument for `failed:` without an id.
  fsnap::Checkpoint resolve(std::string_view ref) const;
  // The checkpoints of run (of every run if "") that query matches, newest first.
  std::vector<fsnap::Checkpoint> find(const std::string& run, const SnapshotQuery& query) const;
  // The checkpoints that led to checkpoint in its run, oldest first, itself last.
  std::vector<fsnap::Checkpoint> lineage(const fsnap::Checkpoint& checkpoint) const;
  // The session a record holds (an empty snapshot for a record without one). Error
  // kCorrupt for a session tree that is missing or damaged.
  SessionSnapshot session(const LedgerRecord& record) const;
  // The same session as SessionSnapshot::to_json gives it ("" for a record without
  // one), with its items as stored: slice types this process does not know are kept.
  std::string session_json(const LedgerRecord& record) const;

  fsnap::ShadowRepo& repo() const { return *repo_; }
  const std::shared_ptr<SessionTrees>& session_trees() const { return trees_; }

 private:
  std::shared_ptr<fsnap::ShadowRepo> repo_;
  std::shared_ptr<SessionTrees> trees_;
};

// The boundaries of one run, kept in a store's ledger.
class LedgerBoundaryLog : public BoundaryLog {
 public:
  // resource is the name under which the ExecutionState holds the store's workspace.
  LedgerBoundaryLog(fsnap::Store store, std::shared_ptr<Ledger> ledger, std::string run,
                    std::string resource);

  // Takes the store lock and makes the state's session the one of the run's newest
  // record (empty for a new run), and continues the state's containment from the count
  // that session holds — unless the newest checkpoint is the one this log's last step
  // recorded, whose session the state holds already.
  std::unique_ptr<BoundaryLog::StepHold> begin_step(ExecutionState& state) override;
  void remember(const Boundary& boundary) override;
  void forget(const std::string& call_id) override;
  std::optional<Boundary> pre_tool(const std::string& call_id) const override;
  std::optional<Boundary> recent_pre_tool(const std::string& call_id,
                                          std::size_t newest) const override;
  // What the chain says (checkpoint messages only), no note read.
  std::optional<bool> call_ended(const std::string& call_id) const override;
  std::vector<std::string> open_calls() const override;
  // Looks among the newest 256 boundaries: a call open longer than that is not seen.
  bool has_open_call() const override;
  // The open calls begun among the run's newest boundaries (all of them for 0), oldest
  // first: what open_calls says, without reading the whole chain of a long run.
  std::vector<std::string> recent_open_calls(std::size_t newest) const;
  // The run's boundaries after pre, then those every other run of the store recorded
  // after pre (fact.run names the run): they changed the same workspace.
  std::vector<BoundaryLog::LaterBoundary> since(const Boundary& pre) const override;

  // The boundary at checkpoint c: its files, and the session and outcome of its record
  // (a checkpoint without a record restores files only).
  Boundary boundary_at(const fsnap::Checkpoint& c) const;

 private:
  // The boundaries of the store's other runs recorded after the time after, newest
  // first within each run (safety checkpoints left out).
  std::vector<BoundaryLog::LaterBoundary> other_runs_since(fsnap::TimePoint after) const;
  // The newest pre-tool checkpoint of call_id among the run's newest boundaries (all
  // for 0), and whether a newer one ends the call; nullopt if there is none.
  struct FoundPreTool {
    fsnap::Checkpoint checkpoint;
    bool ended = false;
  };
  std::optional<FoundPreTool> find_pre_tool(const std::string& call_id, std::size_t newest) const;

  fsnap::Store store_;
  std::shared_ptr<Ledger> ledger_;
  std::string run_;
  std::string resource_;
  // The commit of the boundary the last step recorded, while the state's session is the
  // one recorded with it; "" after a step that recorded nothing (or failed).
  std::string current_;
  // The call the last search of the whole chain found no pre-tool boundary of, and the
  // run's tip then: a call whose start was missed is looked for twice in one event (to
  // end it, then to record it after the fact), and a long run's chain is long.
  mutable std::mutex missing_mutex_;
  mutable std::string missing_call_;
  mutable std::string missing_at_;
};

}  // namespace sandbox
