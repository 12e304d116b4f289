// Ledger — the composite ledger persisted in the shadow repository: one JSON record
// per checkpoint, stored as a git note on the checkpoint commit under
// refs/notes/shadowbox, so `git log --notes=shadowbox` shows it and a new process can
// list a run's tool calls, rebuild the session at any checkpoint and roll back to any
// tool boundary.
//
// A record holds the checkpoint's phase, tool and call id, the call's outcome
// (success, result summary, elapsed time) once known, and the full session snapshot
// at that checkpoint. The latest state of a run is the record of the newest
// checkpoint that has one: reading it touches one note, not the run's history.
//
// Thread-safety: writes take the store lock, so several processes may share a ledger.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "sandbox/session.hpp"

namespace sandbox {

struct ToolCheckpoint;
class ExecutionState;

// The ledger record of one checkpoint.
struct LedgerRecord {
  std::string checkpoint_id;
  std::string commit;
  std::string run;
  fsnap::Phase phase = fsnap::Phase::kManual;
  std::string tool_call_id;
  std::string tool_name;
  std::string input_summary;    // what the tool was asked to do, if known
  std::optional<bool> success;  // the call's outcome, once known
  std::string result_summary;
  std::optional<std::int64_t> elapsed_ms;
  std::string session_json;  // SessionSnapshot::to_json() at this checkpoint

  // The session snapshot (decoded through the slice type registry).
  SessionSnapshot session() const { return SessionSnapshot::from_json(session_json); }

  std::string to_json() const;
  // std::invalid_argument for a note that is not a ledger record.
  static LedgerRecord from_json(const std::string& json);
  // The record of a checkpoint with the given session, before any outcome.
  static LedgerRecord for_checkpoint(const fsnap::Checkpoint& c, const SessionSnapshot& session);
};

// Reads and writes the ledger of one store.
class Ledger {
 public:
  explicit Ledger(fsnap::Store store);

  // Writes (or replaces) the record of record.commit.
  void write(const LedgerRecord& record);
  // The record of a checkpoint, or nullopt if it has none.
  std::optional<LedgerRecord> read(const fsnap::Checkpoint& checkpoint) const;
  // The record of the newest checkpoint of run that has one, or nullopt.
  std::optional<LedgerRecord> latest(const std::string& run) const;
  // Every record of a run, oldest first.
  std::vector<LedgerRecord> records(const std::string& run) const;

  // A CheckpointStore sink that persists the records of each tool call: the pre
  // checkpoint's record (with the outcome) and the record of the checkpoint that
  // ended the call (post, or the one taken after a rollback).
  std::function<void(const ToolCheckpoint&)> sink();

  // Puts state back to before tool call tool_call_id from the ledger alone (as a new
  // process would): the files of its pre-tool checkpoint and the STATE slices of the
  // session recorded there; LOG slices keep everything. std::out_of_range if the call
  // has no pre-tool record.
  void rollback_to_tool(ExecutionState& state, const std::string& tool_call_id);

  const fsnap::Store& store() const { return store_; }
  fsnap::ShadowRepo& repo() { return repo_; }

 private:
  fsnap::Store store_;
  fsnap::ShadowRepo repo_;
};

}  // namespace sandbox
