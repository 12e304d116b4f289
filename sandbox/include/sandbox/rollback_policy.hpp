// RollbackPolicy — the one place that decides what becomes of a failed tool call: the
// paths only it can have changed put back as they were at its pre-tool boundary, the
// rest kept and named; refused when nothing is only its own; kept because the
// configuration says so; or nothing to do when it changed nothing. The transaction core
// (ToolTransactions) asks it for every failure, whichever path the call came by: the
// in-process ToolRunner, a hook event, or `shadowbox rollback`.
//
// Thread-safety: a plain value; decide() is a pure function.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"

namespace sandbox {

// What a decision needs to know about one boundary recorded after a call's pre-tool
// boundary.
struct BoundaryFact {
  fsnap::Phase phase = fsnap::Phase::kCheckpoint;
  std::string call_id;  // "" for a boundary of no tool call
  std::string tool_name;
  std::string checkpoint_id;   // "" without a host filesystem
  bool changed_files = false;  // its files differ from those of the boundary before it
  // "" for a boundary of the failed call's own run; else the other run of the same
  // store (and so of the same workspace) that recorded it.
  std::string run;
  friend bool operator==(const BoundaryFact&, const BoundaryFact&) = default;
};

// A tool call open while files changed, as the rollback decision sees it.
struct OpenCall {
  std::string id;
  std::string tool_name;
  // The workspace paths the call can change when its tool names them (an edit of one
  // file: Claude Code's Edit, Gemini's replace, Codex's apply_patch); nullopt when it
  // may change anything (a shell command).
  std::optional<std::set<std::string>> paths;
  // The call it runs inside of ("" for none): a nested call's changes are its outer
  // call's too.
  std::string parent;
  friend bool operator==(const OpenCall&, const OpenCall&) = default;
};

// What changed between two boundaries after a failed call's pre-tool boundary (or
// between the newest one and the failure), and who can have changed it.
struct ChangeWindow {
  // The boundary that ends the window (for the last window, the failed call itself).
  BoundaryFact seen_at;
  // By resource name: the paths that changed in the window and that a rollback would
  // change ("" for a whole resource that cannot say which paths changed).
  std::map<std::string, std::set<std::string>> changed;
  // Of those, the paths that are a directory at the end of the window (a call that
  // names a file can have made the directories above it, and nothing else there).
  std::map<std::string, std::set<std::string>> directories;
  // The calls open throughout the window, the failed call among them (empty for a
  // window of another run or of a restore).
  std::vector<OpenCall> open;
};

// A path a rollback leaves as it is, and why.
struct KeptPath {
  std::string resource;
  std::string path;  // "" for a whole resource
  std::string why;   // "changed by Edit toolu_2", "changed outside any tool call", ...
  friend bool operator==(const KeptPath&, const KeptPath&) = default;
};

// What to do with a failed call.
struct RollbackDecision {
  enum class Kind {
    kRollBack,   // put back what only the failed call can have changed (restore), its
                 // STATE slices too when that is everything it changed
    kRefuse,     // put back nothing: everything changed since is (also) another's
    kKeep,       // put back nothing: the configuration keeps this failure
    kUnchanged,  // nothing to put back: the call changed no file
  };
  Kind kind = Kind::kRollBack;
  // kRollBack: by resource name, the paths to put back ("" for a whole resource).
  std::map<std::string, std::set<std::string>> restore;
  // kRollBack, kRefuse: the changed paths left as they are because another call, another
  // run or a person can have made them.
  std::vector<KeptPath> kept;
  // The boundaries whose changes are kept (kept's, by boundary).
  std::vector<BoundaryFact> refused_by;
  std::string reason;  // kRefuse, kKeep, kUnchanged, and a kRollBack that kept paths: why

  // Whether everything the failed call changed is put back.
  bool complete() const { return kind == Kind::kRollBack && kept.empty(); }
  friend bool operator==(const RollbackDecision&, const RollbackDecision&) = default;
};

// "rolled_back", "refused", "kept", "unchanged".
std::string_view to_string(RollbackDecision::Kind kind);

// What makes a failure kept rather than rolled back, beyond its tool's name (config:
// rollback.keep_failures): every field given must match.
struct KeepRule {
  std::string tool;             // the tool's name; "" for any
  std::string command;          // a glob the call's command must match; "" for any
  std::vector<int> exit_codes;  // the exit statuses it applies to; empty for any
  friend bool operator==(const KeepRule&, const KeepRule&) = default;
};

// What a rule is matched against: the failed call as its agent described it.
struct FailedCall {
  std::string tool;
  std::string command;           // a shell tool's command line ("" when not one)
  std::optional<int> exit_code;  // when the agent reports one
};

// When failed calls are rolled back (config: rollback.*, RollbackSettings::policy()).
struct RollbackPolicy {
  bool rollback_on_failure = true;
  std::set<std::string> keep_failed_tools;  // tools whose failures are never rolled back
  std::vector<KeepRule> keep_failures;      // failures kept by what the call was

  // Whether the configuration keeps call's failure (and, if so, why, in a few words).
  std::optional<std::string> keeps(const FailedCall& call) const;

  // The decision for the failed call call_id, given what changed since its pre-tool
  // boundary, window by window (oldest first), and differing: by resource name, the
  // paths that differ now from the pre-tool boundary.
  //   the configuration keeps the failure (keeps())               -> kKeep
  //   nothing differs                                              -> kUnchanged
  //   A path is the failed call's when every change to it was made while the failed
  //   call was open and no other call that can change it was (a call that names its
  //   paths can change only those; a call nested in the failed one is the failed
  //   one); a directory only when everything below it is too.
  //   some path is the failed call's                               -> kRollBack of those
  //   none                                                         -> kRefuse
  // A window of another run, or of a restore or an edit between calls, makes its paths
  // someone else's.
  RollbackDecision decide(const FailedCall& call, const std::string& call_id,
                          const std::vector<ChangeWindow>& windows,
                          const std::map<std::string, std::set<std::string>>& differing) const;
};

}  // namespace sandbox
