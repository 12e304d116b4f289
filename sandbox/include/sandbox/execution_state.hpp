// ExecutionState — the single root of all mutable state of a run
// (EXECUTION_STATE.md): the session, the resource registry, an injectable clock and
// a seeded random generator, and optionally a CheckpointStore. A CompositeSnapshot
// captures the session and every snapshotable resource together; restore puts all of
// them back or, if any part fails, none (RestoreFailedError, state as before).
//
// Thread-safety: snapshot and restore must not run concurrently with each other or
// with tool handlers; the session itself may be dispatched to from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "fsnap/checkpoint.hpp"
#include "sandbox/clock.hpp"
#include "sandbox/resource_registry.hpp"
#include "sandbox/session.hpp"

namespace sandbox {

class CheckpointStore;

// When and why a composite snapshot was taken.
struct SnapshotMetadata {
  std::string tag;
  std::string tool_call_id;
  std::string tool_name;
  fsnap::Phase phase = fsnap::Phase::kManual;
  std::string run = std::string(fsnap::kDefaultRun);  // the run checkpoints go to
  friend bool operator==(const SnapshotMetadata&, const SnapshotMetadata&) = default;

  fsnap::CheckpointMeta checkpoint_meta() const {
    return fsnap::CheckpointMeta{tag, phase, tool_call_id, tool_name, run};
  }
};

// A consistent snapshot of all execution state.
struct CompositeSnapshot {
  std::string id;
  TimePoint created_at;
  SessionSnapshot session;  // every slice; restore keeps LOG slices as they are
  std::map<std::string, ResourceSnapshot> resources;  // by resource name
  SnapshotMetadata metadata;

  // JSON through the slice and resource codecs; std::invalid_argument if a part has
  // no codec, SnapshotMismatchError (from_json) for a type this process lacks.
  std::string to_json() const;
  static CompositeSnapshot from_json(const std::string& json);
};

// The root of a run's mutable state.
class ExecutionState {
 public:
  ExecutionState(std::shared_ptr<Session> session, ResourceRegistry resources,
                 std::shared_ptr<const Clock> clock = std::make_shared<SystemClock>(),
                 std::optional<std::uint64_t> seed = std::nullopt,
                 std::shared_ptr<CheckpointStore> checkpoints = nullptr);

  Session& session() { return *session_; }
  const std::shared_ptr<Session>& session_ptr() const { return session_; }
  ResourceRegistry& resources() { return resources_; }
  const Clock& clock() const { return *clock_; }
  // The run's random generator, seeded for replay when a seed was given.
  std::mt19937_64& rng() { return rng_; }
  CheckpointStore* checkpoints() const { return checkpoints_.get(); }

  // Captures the session (all slices) and every snapshotable resource.
  CompositeSnapshot snapshot(const SnapshotMetadata& metadata = {});
  // Restores every part. Checks that every part fits first (SnapshotMismatchError,
  // nothing changed); if a part fails while restoring, puts back the parts already
  // restored and throws RestoreFailedError.
  void restore(const CompositeSnapshot& snapshot);

 private:
  std::shared_ptr<Session> session_;
  ResourceRegistry resources_;
  std::shared_ptr<const Clock> clock_;
  std::mt19937_64 rng_;
  std::shared_ptr<CheckpointStore> checkpoints_;
};

}  // namespace sandbox
