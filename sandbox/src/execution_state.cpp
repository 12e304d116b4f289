#include "sandbox/execution_state.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "fsnap/store_layout.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/containment.hpp"
#include "statekit/saga.hpp"

namespace sandbox {

namespace {

// The k-th stream of seed (splitmix64 of seed and k): one seed makes every id source of
// a state, each its own, and neighbouring seeds share none.
std::uint64_t stream_of(std::uint64_t seed, std::uint64_t k) {
  std::uint64_t z = seed + (k + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

ExecutionState::ExecutionState(std::shared_ptr<Session> session, ResourceRegistry resources,
                               std::shared_ptr<const fsnap::Clock> clock,
                               std::optional<std::uint64_t> seed,
                               std::shared_ptr<CheckpointSink> checkpoints)
    : session_(std::move(session)),
      resources_(std::move(resources)),
      clock_(std::move(clock)),
      rng_(seed ? *seed : std::random_device{}()),
      ids_(std::make_shared<fsnap::IdSource>(
          seed ? std::optional<std::uint64_t>(stream_of(*seed, 0)) : std::nullopt)),
      checkpoints_(std::move(checkpoints)),
      session_trees_(std::make_shared<SessionTrees>()) {
  if (session_ == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "an ExecutionState needs a session");
  }
  if (clock_ == nullptr) clock_ = std::make_shared<fsnap::SystemClock>();
  if (seed) {
    // The session's id and its snapshots' ids, and each host filesystem's checkpoint
    // ids, from the same seed: one seed replays every id of the state.
    session_->draw_ids_from(std::make_shared<fsnap::IdSource>(stream_of(*seed, 1)));
    std::uint64_t next = 2;
    for (const ResourceRegistry::Entry* entry : resources_.snapshotable()) {
      if (entry->host == nullptr) continue;
      entry->host->draw_ids_from(std::make_shared<fsnap::IdSource>(stream_of(*seed, next++)));
    }
  }
  register_builtin_slice_types();
  register_builtin_resource_codecs();
}

void ExecutionState::share_session_trees(std::shared_ptr<SessionTrees> trees) {
  if (trees == nullptr) throw Error(ErrorCode::kInvalidArgument, "no session trees to share");
  session_trees_ = std::move(trees);
}

namespace {

// The ledger records of one session snapshot in the stores of host filesystems: the
// session tree is written once per store, when its first checkpoint needs it, and
// anchored by each checkpoint's note.
class SessionRecords {
 public:
  SessionRecords(SessionTrees& trees, const SessionSnapshot& session)
      : trees_(trees), session_(session) {}

  // The record of checkpoint c in repo, naming the session tree.
  LedgerRecord of(fsnap::ShadowRepo& repo, const fsnap::Checkpoint& c) {
    auto [it, fresh] = written_.try_emplace(&repo);
    if (fresh) it->second = trees_.write(repo, session_);
    LedgerRecord record =
        LedgerRecord::for_checkpoint(c, it->second, SessionTrees::SessionStamp::of(session_));
    // The agent's conversation as the store holds it at this boundary.
    if (!c.meta.run.empty()) {
      record.home_commit = repo.ref_target(fsnap::layout::home_ref(c.meta.run)).value_or("");
    }
    return record;
  }
  // The note of record (made by of), keeping its session tree reachable.
  static fsnap::Note note(const LedgerRecord& record) {
    return SessionTrees::anchored(record.note(), record.run, record.session_tree);
  }

 private:
  SessionTrees& trees_;
  const SessionSnapshot& session_;
  std::map<const fsnap::ShadowRepo*, std::string> written_;  // the tree in each store
};

// One part of a restore: a resource and its snapshot.
using RestorePart = std::pair<const ResourceRegistry::Entry*, const ResourceSnapshot*>;

// The parts of snapshot that request restores, host filesystems first; throws
// SnapshotMismatchError when a resource of it is not one of resources.
std::vector<RestorePart> restorable_parts(const ResourceRegistry& resources,
                                          const CompositeSnapshot& snapshot,
                                          const ExecutionState::RestoreRequest& request) {
  std::vector<RestorePart> parts;
  for (const auto& [name, value] : snapshot.resources) {
    const ResourceRegistry::Entry* entry = resources.find(std::string_view(name));
    if (entry == nullptr || !entry->restore) {
      throw SnapshotMismatchError("snapshot " + snapshot.id + " holds resource '" + name +
                                  "', which this state does not have");
    }
    if (entry->snapshot_type != value.type) {
      throw SnapshotMismatchError("snapshot " + snapshot.id +
                                  " holds a snapshot of another kind for resource '" + name + "'");
    }
    if (request.only && request.only->count(name) == 0) continue;  // left as it is
    if (request.paths && entry->host == nullptr) continue;         // paths are files'
    parts.emplace_back(entry, &value);
  }
  std::stable_partition(parts.begin(), parts.end(),
                        [](const RestorePart& part) { return part.first->host != nullptr; });
  return parts;
}

// The failed restore of snapshot id: RestoreFailedError when everything was left as it
// was, kCorrupt (saying what could not be put back) when not.
[[noreturn]] void throw_restore_failure(const statekit::SagaFailed& e, const std::string& id) {
  std::string failure =
      "cannot restore resource '" + e.failed_step() + "' of snapshot " + id + ": " + e.cause();
  // A host restore says kCorrupt when it could not put its own files back.
  bool left_as_before = e.cause_code() != ErrorCode::kCorrupt && e.compensation_failures().empty();
  std::string leftover;
  for (const statekit::CompensationFailure& f : e.compensation_failures()) {
    leftover += "; and could not put back '" + f.step + "': " + f.error;
  }
  if (!left_as_before) throw Error(ErrorCode::kCorrupt, failure + leftover);
  throw RestoreFailedError(failure);
}

}  // namespace

CompositeSnapshot ExecutionState::snapshot(const SnapshotMetadata& metadata) {
  return snapshot(metadata, {});
}

CompositeSnapshot ExecutionState::snapshot(const SnapshotMetadata& metadata,
                                           const std::vector<LedgerRecord>& amends) {
  CompositeSnapshot snap;
  snap.id = ids_->hex(32);
  snap.created_at = clock_->now();
  snap.metadata = metadata;
  std::map<std::string, std::string> tags;
  if (!metadata.tag.empty()) tags["tag"] = metadata.tag;
  if (!metadata.label.empty()) tags["label"] = metadata.label;
  snap.session = session_->snapshot(kStatePolicies, /*include_all=*/true, std::move(tags));

  SessionRecords records(*session_trees_, snap.session);
  bool recorded = false;
  for (const ResourceRegistry::Entry* entry : resources_.snapshotable()) {
    ResourceRegistry::CaptureRequest request;
    request.meta = metadata;  // its CheckpointMeta part
    request.separate_outside_changes = metadata.separate_outside_changes;
    if (entry->host != nullptr) {
      fsnap::ShadowRepo& repo = entry->host->repo();
      request.notes = [&](const fsnap::Checkpoint& c) {
        LedgerRecord record = records.of(repo, c);
        record.set_outcome(metadata.outcome);
        record.decision = metadata.decision;
        record.safety_event = metadata.safety_event;
        record.paths = metadata.paths;
        record.parent_call_id = metadata.parent_call_id;
        record.undoes = metadata.undoes;
        std::vector<fsnap::Note> notes{SessionRecords::note(record)};
        if (!recorded) {
          snap.record = record;
          recorded = true;
          // The amendments go into the first host store, whose commits they name.
          for (const LedgerRecord& r : amends) {
            if (!r.commit.empty()) notes.push_back(r.note());
          }
        }
        return notes;
      };
      request.outside_notes = [&](const fsnap::Checkpoint& c) {
        LedgerRecord record = records.of(repo, c);
        record.result_summary = "changes made outside any tool call";
        return std::vector<fsnap::Note>{SessionRecords::note(record)};
      };
    }
    snap.resources.emplace(entry->name, entry->snapshot(request));
  }
  if (!recorded) {
    snap.record.run = metadata.run;
    snap.record.phase = metadata.phase;
    snap.record.tool_call_id = metadata.tool_call_id;
    snap.record.tool_name = metadata.tool_name;
    snap.record.set_outcome(metadata.outcome);
    snap.record.decision = metadata.decision;
    snap.record.safety_event = metadata.safety_event;
    snap.record.paths = metadata.paths;
    snap.record.parent_call_id = metadata.parent_call_id;
    snap.record.undoes = metadata.undoes;
  }
  return snap;
}

ExecutionState::StateRestore ExecutionState::restore(const CompositeSnapshot& snapshot) {
  return restore(snapshot, ExecutionState::RestoreRequest{});
}

ExecutionState::StateRestore ExecutionState::restore(
    const CompositeSnapshot& snapshot, const ExecutionState::RestoreRequest& request) {
  // 1. Everything must fit before anything changes. Host filesystems go first: they
  // are the parts that can fail half-way, and they put themselves back when they do.
  std::vector<RestorePart> parts = restorable_parts(resources_, snapshot, request);

  // 2. Resources, each with a way back.
  SessionSnapshot session_before = session_->snapshot(kStatePolicies, /*include_all=*/true);
  SessionRecords before_records(*session_trees_, session_before);
  ResourceRegistry::RestoreContext context;
  context.run = request.run.empty() ? snapshot.metadata.run : request.run;
  context.tool_call_id = request.tool_call_id;
  context.tool_name = request.tool_name;
  context.paths = request.paths;
  // A host's safety checkpoint is recorded in its own store, with the session before.
  auto restore_part = [&](const ResourceRegistry::Entry& entry, const ResourceSnapshot& value) {
    context.safety_notes = nullptr;
    context.only_paths.reset();
    if (request.only && entry.host != nullptr) {
      const std::set<std::string>& paths = request.only->at(entry.name);
      if (paths.count("") == 0) context.only_paths = paths;
    }
    if (entry.host != nullptr) {
      fsnap::ShadowRepo& repo = entry.host->repo();
      context.safety_notes = [&](const fsnap::Checkpoint& c) {
        LedgerRecord record = before_records.of(repo, c);
        record.result_summary =
            request.summary.empty() ? "before restoring " + snapshot.id : request.summary;
        return std::vector<fsnap::Note>{SessionRecords::note(record)};
      };
    }
    return entry.restore(value, context);
  };
  // One saga: each part restored with the way back to its present state, the session
  // last (it cannot fail once the parts fit). A part that fails is its own to leave as
  // it was — a host restore puts its files back, a resource's restore is atomic — and
  // the parts before it are put back in reverse order.
  ExecutionState::StateRestore out;
  statekit::Saga saga("restore of " + snapshot.id);
  for (const auto& [entry, value] : parts) {
    saga.step<std::vector<ResourceSnapshot>>(
        entry->name,
        [&, entry = entry, value = value](statekit::SagaContext&) {
          std::vector<ResourceSnapshot> ways_back;
          if (entry->host == nullptr) {
            ResourceRegistry::CaptureRequest request;
            request.meta.phase = fsnap::Phase::kSafety;
            request.meta.run = context.run;
            ways_back.push_back(entry->snapshot(request));
          }
          std::optional<fsnap::RestoreReport> report = restore_part(*entry, *value);
          if (report) {
            if (report->safety) {
              ways_back.push_back(ResourceSnapshot::of(fsnap::to_snapshot(*report->safety)));
            }
            out.filesystems.emplace(entry->name, std::move(*report));
          }
          return ways_back;
        },
        [&, entry = entry](const std::vector<ResourceSnapshot>& ways_back) {
          for (const ResourceSnapshot& back : ways_back) restore_part(*entry, back);
        });
  }
  if (request.session) {
    saga.step<void>("session", [&](statekit::SagaContext&) {
      session_->rollback(snapshot.session, /*preserve_logs=*/true);
    });
  }
  try {
    saga.run();
  } catch (const statekit::SagaFailed& e) {
    throw_restore_failure(e, snapshot.id);
  }
  return out;
}

std::unique_ptr<ExecutionState> ExecutionState::fork(const CompositeSnapshot& snapshot,
                                                     ForkParts parts) const {
  if (!parts.session || parts.session == session_) {
    throw Error(ErrorCode::kInvalidArgument, "a fork of the state needs a session of its own");
  }
  for (const auto& [name, checkpoint] : snapshot.host_checkpoints()) {
    throw Error(ErrorCode::kInvalidArgument,
                "resource " + fsnap::quote_input(name) +
                    " is a host workspace: a run on disk is forked by `shadowbox rewind` (a "
                    "new run, in a workspace of its own, from a checkpoint)");
  }
  for (const ResourceRegistry::Entry* mine : resources_.snapshotable()) {
    for (const ResourceRegistry::Entry* theirs : parts.resources.snapshotable()) {
      if (mine->object == theirs->object) {
        throw Error(ErrorCode::kInvalidArgument,
                    "resource " + fsnap::quote_input(theirs->name) +
                        " of the fork is this state's own: a fork needs new resources");
      }
    }
  }
  auto fork = std::make_unique<ExecutionState>(parts.session, std::move(parts.resources), clock_,
                                               parts.seed);
  RestoreRequest request;
  request.session = false;
  fork->restore(snapshot, request);
  parts.session->rollback(snapshot.session, /*preserve_logs=*/false);
  if (containment_setup_) {
    fork->containment_setup_ = containment_setup_;
    fork->continue_containment(containment_state(snapshot.session));
  }
  return fork;
}

void ExecutionState::set_containment(policy::ExecutionConfig config, policy::RunMetadata metadata,
                                     std::shared_ptr<policy::ShieldPipeline> pipeline) {
  containment_setup_ = ContainmentSetup{config, std::move(metadata), std::move(pipeline)};
  continue_containment(std::nullopt);
}

void ExecutionState::continue_containment(std::optional<policy::ContainmentState> state) {
  if (!containment_setup_) return;
  std::shared_ptr<const fsnap::Clock> clock = clock_;
  containment_ = std::make_shared<policy::ExecutionContext>(
      containment_setup_->config, containment_setup_->metadata, containment_setup_->pipeline,
      [clock] { return clock->now(); }, std::move(state));
}

void ExecutionState::restart_containment(bool keep_count) {
  if (!containment_) return;
  policy::ContainmentState before = containment_->state();
  policy::ContainmentState counted;
  if (keep_count) {
    counted = before;
    counted.aborted = false;
    counted.abort_reason.clear();
    counted.halted_by.reset();
    counted.refused_in_a_row = 0;  // the refusals that stopped it do not stop it again
    counted.repeat = {};           // nor does the streak of a loop it halted for
  }
  counted.next_node = before.next_node;  // node ids stay unique in the run
  counted.started_at = clock_->now();
  continue_containment(counted);
  record_containment();
}

void ExecutionState::record_containment() {
  if (containment_) sandbox::record_containment(*session_, containment_->state());
}

std::map<std::string, fsnap::FilesystemSnapshot> CompositeSnapshot::host_checkpoints() const {
  std::map<std::string, fsnap::FilesystemSnapshot> out;
  for (const auto& [name, value] : resources) {
    const fsnap::FilesystemSnapshot* fs = value.get<fsnap::FilesystemSnapshot>();
    if (fs != nullptr && !fs->commit.empty()) out.emplace(name, *fs);
  }
  return out;
}

std::map<std::string, std::string> CompositeSnapshot::file_trees() const {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : resources) {
    const fsnap::FilesystemSnapshot* fs = value.get<fsnap::FilesystemSnapshot>();
    if (fs != nullptr) out.emplace(name, fs->tree.empty() ? fs->id : fs->tree);
  }
  return out;
}

std::map<std::string, std::vector<fsnap::SkippedPath>> CompositeSnapshot::file_skipped() const {
  std::map<std::string, std::vector<fsnap::SkippedPath>> out;
  for (const auto& [name, value] : resources) {
    const fsnap::FilesystemSnapshot* fs = value.get<fsnap::FilesystemSnapshot>();
    if (fs != nullptr) out.emplace(name, fs->skipped);
  }
  return out;
}

}  // namespace sandbox
