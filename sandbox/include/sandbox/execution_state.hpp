// ExecutionState — the single root of all mutable state of a run
// (docs/conformance/EXECUTION_STATE.md): the session, the resource registry, an
// injectable clock and one seed for every id and random number of the run, and
// optionally a CheckpointSink that receives each finished call's checkpoints.
//
// A CompositeSnapshot captures the session and every snapshotable resource together.
// A host filesystem's part is a checkpoint commit, and the ledger record of the
// snapshot (its metadata, outcome and session) is written with it in one step, so a
// checkpoint never lands without its record.
//
// restore() puts every part back or, if any part fails, none (RestoreFailedError,
// state as before): host filesystems first (a host restore that fails part-way puts
// its files back itself), then the other resources, then the session.
//
// Thread-safety: snapshot and restore must not run concurrently with each other or
// with tool handlers; the session itself may be dispatched to from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/clock.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/id_source.hpp"
#include "policy/execution_context.hpp"
#include "sandbox/ledger_record.hpp"
#include "sandbox/resource_registry.hpp"
#include "sandbox/session.hpp"
#include "sandbox/session_trees.hpp"

namespace sandbox {

// When and why a composite snapshot was taken, and what its ledger record says: what
// its host checkpoints are asked for (the fsnap::CheckpointMeta it is: tag, label,
// phase, tool call, run, move_tag), and the record's own parts. The specification's
// snapshot tag ("pre:call_1", any text, repeated at will) is the label; the tag is a
// git ref name, unique in the store (what `shadowbox snapshot --tag` sets).
struct SnapshotMetadata : fsnap::CheckpointMeta {
  // The call's input and outcome as the record states them.
  CallOutcome outcome;
  // Containment's answer to the call, and the limit that tripped (see LedgerRecord).
  std::string decision;
  std::optional<policy::SafetyEvent> safety_event;
  // A pre-tool boundary: the paths the call's tool names (see LedgerRecord::paths).
  std::optional<std::vector<std::string>> paths;
  std::string parent_call_id;  // a pre-tool boundary: the call it runs inside of
  std::string undoes;          // the boundaries of an undo: the call it reverses
  // Host filesystems: files changed since the run's newest checkpoint are first
  // recorded as a checkpoint of their own, attributed to no tool (one capture for both).
  bool separate_outside_changes = false;

  friend bool operator==(const SnapshotMetadata&, const SnapshotMetadata&) = default;
};

// A consistent snapshot of all execution state.
struct CompositeSnapshot {
  std::string id;
  fsnap::TimePoint created_at;
  SessionSnapshot session;  // every slice; restore keeps LOG slices as they are
  std::map<std::string, ResourceSnapshot> resources;  // by resource name
  SnapshotMetadata metadata;
  // The ledger record written with it (with its first host checkpoint); without a host
  // workspace, the metadata and outcome alone (no commit, no session JSON).
  LedgerRecord record;

  // The host checkpoints among the resources (those with a commit), by resource name.
  std::map<std::string, fsnap::FilesystemSnapshot> host_checkpoints() const;
  // The git tree of each filesystem resource, by name (to tell whether files differ).
  std::map<std::string, std::string> file_trees() const;
  // The paths each filesystem resource's capture skipped, by name (files over the size
  // limit are in no tree: a change to one is seen here).
  std::map<std::string, std::vector<fsnap::SkippedPath>> file_skipped() const;

  // JSON through the slice and resource codecs, with every field (the metadata, with
  // its decision and safety event, and the record): from_json gives back the snapshot
  // to_json was given (times to the microsecond, as shadowbox records every time; the
  // session's slices equal item by item), and an in-memory filesystem's part can be
  // restored. Error kInvalidArgument if a part has no codec or the text is malformed,
  // SnapshotMismatchError (from_json) for a type this process lacks.
  std::string to_json() const;
  static CompositeSnapshot from_json(const std::string& json);
};

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
  fsnap::TimePoint recorded_at;
};

// Where the transaction core hands each finished call's checkpoints (ToolCheckpoint),
// when an ExecutionState has one: CheckpointStore keeps a ring of them for embedding
// programs; the product keeps its history in the ledger instead.
class CheckpointSink {
 public:
  virtual ~CheckpointSink() = default;
  // Records (or replaces) the checkpoint of a call.
  virtual void record(ToolCheckpoint checkpoint) = 0;
};

// The root of a run's mutable state.
class ExecutionState {
 public:
  // How restore treats what it replaces.
  struct RestoreRequest {
    // The run that receives host filesystems' safety checkpoints ("" = the snapshot's).
    std::string run;
    // Said in the ledger record of each safety checkpoint.
    std::string summary;
    // Part of the snapshot only (a rollback that keeps what others changed): by resource
    // name, the paths of a host filesystem to put back ("" alone: the whole resource);
    // resources not named are left as they are. nullopt: everything.
    std::optional<std::map<std::string, std::set<std::string>>> only;
    // Host filesystems: only these paths, each with everything below it
    // (fsnap::RestoreOptions::paths: `restore REF -- PATH...`); nullopt: all.
    std::optional<std::vector<std::string>> paths;
    // Whether the session's STATE slices are put back too.
    bool session = true;
    // A rollback: the failed tool call it undoes. Its safety checkpoint carries the call's
    // id and tool: the workspace as the call left it (`post:<id>`, `failed:<id>`).
    std::string tool_call_id;
    std::string tool_name;
  };

  // What a restore did to each host filesystem, by resource name.
  struct StateRestore {
    std::map<std::string, fsnap::RestoreReport> filesystems;
  };

  // Snapshot times come from clock. With a seed, every id and random number of the state
  // comes from it: rng() is seeded with it, and the composite snapshots' ids, the
  // session's id and its snapshots' ids, and each host filesystem's checkpoint ids are
  // drawn from streams of it (the session and the hosts are given theirs here), so
  // equal seeds (and clocks) replay equal ids. Without one, each keeps its own.
  ExecutionState(std::shared_ptr<Session> session, ResourceRegistry resources,
                 std::shared_ptr<const fsnap::Clock> clock = std::make_shared<fsnap::SystemClock>(),
                 std::optional<std::uint64_t> seed = std::nullopt,
                 std::shared_ptr<CheckpointSink> checkpoints = nullptr);

  Session& session() { return *session_; }
  const std::shared_ptr<Session>& session_ptr() const { return session_; }
  ResourceRegistry& resources() { return resources_; }
  const fsnap::Clock& clock() const { return *clock_; }
  const std::shared_ptr<const fsnap::Clock>& shared_clock() const { return clock_; }
  // The run's random generator, seeded for replay when a seed was given.
  std::mt19937_64& rng() { return rng_; }
  // The source of snapshot ids (seeded like rng()).
  const std::shared_ptr<fsnap::IdSource>& ids() const { return ids_; }
  CheckpointSink* checkpoints() const { return checkpoints_.get(); }
  // Writes the session of each host checkpoint as a session tree. Share it with the
  // Ledger that reads the run, so that neither decodes what the other has in hand.
  const std::shared_ptr<SessionTrees>& session_trees() const { return session_trees_; }
  void share_session_trees(std::shared_ptr<SessionTrees> trees);

  // Captures the session (all slices) and every snapshotable resource; a host
  // filesystem records a checkpoint with the snapshot's ledger record.
  CompositeSnapshot snapshot(const SnapshotMetadata& metadata = {});
  // The same, rewriting earlier ledger records (a call's pre-tool record, once its
  // outcome is known) in the notes commit of the new record, in the store of the first
  // host filesystem (nothing without one): one commit for both, so a record is amended
  // exactly when the checkpoint the amendment follows from is recorded.
  CompositeSnapshot snapshot(const SnapshotMetadata& metadata,
                             const std::vector<LedgerRecord>& amends);
  // Restores every part (files, other resources, STATE and CACHE slices; LOG slices
  // keep everything). Checks that every part fits first (SnapshotMismatchError,
  // nothing changed); if a part fails while restoring, puts back the parts already
  // restored and throws RestoreFailedError — or Error kCorrupt, saying what, if
  // something could not be put back.
  StateRestore restore(const CompositeSnapshot& snapshot, const RestoreRequest& request);
  // The same, for everything, with the snapshot's run receiving the safety checkpoints.
  StateRestore restore(const CompositeSnapshot& snapshot);
  // What a fork of the state is made of (fork()): parts that snapshots do not hold.
  struct ForkParts {
    // The fork's session: a new one with the registrations the fork needs (reducers,
    // middleware, windows, computed slices, which are code); its slices are replaced.
    std::shared_ptr<Session> session;
    // The fork's resources: for each resource of the snapshot, a new one under the same
    // name (a new InMemoryFilesystem, a new BudgetTracker), shared with no other state.
    ResourceRegistry resources;
    std::optional<std::uint64_t> seed;  // the fork's ids and random numbers (see above)
  };
  // A second state that starts where snapshot (one of this state's) left off: each
  // resource of parts put back as the snapshot has it, parts.session holding every slice
  // of the snapshot (LOG slices as they were then, too), on this state's clock, and with
  // this state's containment limits going on from the count the snapshot recorded. This
  // state is not touched; from then on the two go their own ways. Error
  // kInvalidArgument for a snapshot of a host workspace (a run on disk is forked by
  // `shadowbox rewind`: a new run in a workspace of its own) or for parts that are not
  // new ones; SnapshotMismatchError when parts lacks a resource of the snapshot.
  std::unique_ptr<ExecutionState> fork(const CompositeSnapshot& snapshot, ForkParts parts) const;

  // Puts every tool call under containment (docs/conformance/EXECUTION_CONTEXT.md) with
  // these limits: ToolTransactions admits each call first. The context runs on the
  // state's clock.
  void set_containment(policy::ExecutionConfig config, policy::RunMetadata metadata = {},
                       std::shared_ptr<policy::ShieldPipeline> pipeline = nullptr);
  // The containment context, or nullptr.
  policy::ExecutionContext* containment() const { return containment_.get(); }
  // Continues containment from what was counted elsewhere (the run's newest record):
  // a new context with the same limits and that state. No-op without containment.
  void continue_containment(std::optional<policy::ContainmentState> state);
  // Starts containment again (a run resumed, a new agent session): with keep_count, what
  // was counted (steps, refused calls, retries, spend, circuits, the window) goes on,
  // but a stop, an abort, the refusals in a row and the clock start afresh; without,
  // everything does. Records it in the
  // session. No-op without containment.
  void restart_containment(bool keep_count);
  // Keeps the containment's count in the session (ToolTransactions does at every tool
  // boundary; call it after a charge() or abort() between boundaries). No-op without
  // containment.
  void record_containment();

 private:
  std::shared_ptr<Session> session_;
  ResourceRegistry resources_;
  std::shared_ptr<const fsnap::Clock> clock_;
  std::mt19937_64 rng_;
  std::shared_ptr<fsnap::IdSource> ids_;
  std::shared_ptr<CheckpointSink> checkpoints_;
  std::shared_ptr<SessionTrees> session_trees_;
  struct ContainmentSetup {
    policy::ExecutionConfig config;
    policy::RunMetadata metadata;
    std::shared_ptr<policy::ShieldPipeline> pipeline;
  };
  std::optional<ContainmentSetup> containment_setup_;
  std::shared_ptr<policy::ExecutionContext> containment_;
};

}  // namespace sandbox
