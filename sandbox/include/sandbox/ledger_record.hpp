// LedgerRecord — what the composite ledger says about one checkpoint: its phase, tool
// and call id, the call's input and outcome once known, and the session at that
// checkpoint, by the id of its session tree (SessionTrees). Stored as JSON in a git note
// on the checkpoint commit (refs/notes/shadowbox), written together with the checkpoint,
// so `git log --notes=shadowbox` shows it and a later process reads the same history.
// Records written before session trees (format v1) hold the whole session inline; they
// are still read.
//
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "policy/safety_event.hpp"
#include "sandbox/session_trees.hpp"

namespace sandbox {

// A tool call's input and outcome, as its records state them.
struct CallOutcome {
  std::string input_summary;    // what the tool was asked to do, if known
  std::optional<bool> success;  // the call's outcome, once known
  std::string result_summary;
  std::optional<std::int64_t> elapsed_ms;
  // A failed call: what became of its changes (RollbackDecision: "rolled_back",
  // "refused", "kept"), and why when they were not rolled back; "" otherwise.
  std::string rollback;
  std::string rollback_reason;
  // The changed paths it left as they were, each with why ("" path: a whole resource).
  std::vector<std::pair<std::string, std::string>> rollback_kept;
  // The paths it meant to put back and could not, each with why (a file over
  // capture.max_file_size whose copy was written in place: fsnap::RestoreReport).
  std::vector<std::pair<std::string, std::string>> rollback_unrestored;
  // The agent's own permissions refused the call: it never ran (result_summary: why).
  bool agent_denied = false;
  friend bool operator==(const CallOutcome&, const CallOutcome&) = default;
};

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
  // A failed call (its pre-tool record and the one that ends it): "rolled_back",
  // "refused" or "kept" (RollbackDecision), and why when not rolled back; "" otherwise.
  std::string rollback;
  std::string rollback_reason;
  // The changed paths it left as they were, each with why ("" path: a whole resource).
  std::vector<std::pair<std::string, std::string>> rollback_kept;
  // The paths the rollback meant to put back and could not, each with why (a file over
  // capture.max_file_size whose copy was written in place, a socket: see
  // fsnap::RestoreReport::unrestored). Written only when there are some.
  std::vector<std::pair<std::string, std::string>> rollback_unrestored;
  // A call the agent's own permissions refused (its pre-tool record and the one that
  // ends it): it never ran. Written only when set.
  bool agent_denied = false;
  // Containment's answer to the call ("allow", "degrade", "halt"; "" without
  // containment), and the limit that tripped, if one did.
  std::string decision;
  std::optional<policy::SafetyEvent> safety_event;
  // A pre-tool record of a call whose tool names the paths it changes: those paths
  // (relative to the workspace).
  std::optional<std::vector<std::string>> paths;
  // A pre-tool record of a nested call: the call it runs inside of.
  std::string parent_call_id;
  // The commit of the run's preserved agent HOME (refs/shadowbox/home/<run>) when the
  // record was written: the agent's conversation as the store held it at this boundary
  // ("" for a run with no preserved HOME). `run` preserves it after answering each
  // event (off the agent's path) and hook processes before recording one, so it may
  // lack what the agent wrote last; rewind looks in later ones for a call it lacks.
  std::string home_commit;
  // The records of an undo (`shadowbox undo`, recorded as a call of its own): the call
  // whose changes it reversed. Its pre-tool record's paths are the paths it changed.
  std::string undoes;
  // The session at this checkpoint: its session tree with the stamp the tree leaves out
  // (SessionTrees), or (a record of format v1) SessionSnapshot::to_json() inline.
  // Ledger::session reads either.
  std::string session_tree;
  SessionTrees::SessionStamp session_stamp;
  std::string session_json;

  friend bool operator==(const LedgerRecord&, const LedgerRecord&) = default;

  // Whether the record holds a session.
  bool has_session() const { return !session_tree.empty() || !session_json.empty(); }
  // Sets the input and outcome fields.
  void set_outcome(const CallOutcome& outcome);

  std::string to_json() const;
  // Error kCorrupt for a note that is not a ledger record.
  static LedgerRecord from_json(const std::string& json);
  // The record of checkpoint c with the session tree, before any outcome.
  static LedgerRecord for_checkpoint(const fsnap::Checkpoint& c, std::string session_tree,
                                     SessionTrees::SessionStamp stamp);
  // The note that stores this record on its commit.
  fsnap::Note note() const { return fsnap::Note{commit, to_json()}; }
};

}  // namespace sandbox
