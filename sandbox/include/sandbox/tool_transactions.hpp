// ToolTransactions — the transaction core (docs/conformance/EXECUTION_STATE.md, Tool
// Transaction Semantics): every tool boundary of one run, on one ExecutionState,
// recorded in one BoundaryLog. The in-process ToolRunner, the hook path and the CLI all
// go through it, so a tool call is the same transaction whichever way it comes.
//
//   begin(call)             under containment, the call is admitted first: denied,
//                           nothing runs (it is no step, and no failure: it is counted
//                           as refused) and the step records one `denied` boundary with
//                           the decision and its SafetyEvent; else the pre-tool boundary
//                           (a step): files and session, and a record with the call's
//                           input
//   succeed(id, result)     logs ToolInvoked, then the post-tool boundary; the pre-tool
//                           record gets the outcome too, in the same notes commit
//   fail(id, error)         the one rollback decision (RollbackPolicy::decide), then:
//                             rolled back: the files and STATE slices of the pre-tool
//                               boundary come back (LOG slices keep everything), after
//                               a safety checkpoint attributed to the call: the state
//                               it left (failed:<id>)
//                             refused / kept: nothing is put back
//                           logs ToolInvoked (failed) and records the boundary that ends
//                           the call (phase checkpoint after a rollback, post_tool
//                           otherwise); the pre-tool record gets the outcome too, and
//                           both say what became of the call (LedgerRecord::rollback)
//   agent_denied(id, why)   the agent's own permissions refused the open call: it never
//                           ran, is no step, and is counted as denied by the agent
//   discard(id)             as if the call never ran: files and STATE back, nothing
//                           logged; a boundary of the result, attributed to no call
//   checkpoint(...)         a boundary of no tool call
//   restore(target)         makes files and STATE slices exactly target's (LOG slices keep
//                           everything), then a boundary of the result
//   restore_paths(target, paths)  only those paths of the files target's; the session
//                           as it is
//   undo(id)                reverses an ended call's file changes, keeping every later
//                           one (a three-way merge), as a call of its own: undo-<id>
//
// Every step keeps the run's figures (runs/run_stats.hpp: the CallTally) with its
// boundary. Each step holds the run for its whole duration (BoundaryLog::begin_step: the store
// lock for a ledger), starts from the run's newest session, and writes its checkpoint
// and ledger record together, so steps of parallel tool calls serialise and lose
// nothing. Every step ends with a boundary of its own, so the run's newest boundary is
// always its current state.
//
// Thread-safety: one step at a time per object (the log serialises steps of different
// objects and processes).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fsnap/host_filesystem.hpp"
#include "policy/execution_context.hpp"
#include "sandbox/boundary_log.hpp"
#include "sandbox/execution_state.hpp"
#include "sandbox/rollback_policy.hpp"
#include "sandbox/run_events.hpp"

namespace sandbox {

// A tool call as the model made it.
struct ToolCall {
  std::string id;
  std::string name;
  std::string params;  // JSON text (or a summary of it)
  // The workspace paths (relative to its root) the call can change, when its tool names
  // them (an edit of one file); nullopt when it may change anything (a shell command).
  // A rollback of another call leaves what this one can have changed alone, and a
  // rollback of this one puts back only these paths.
  std::optional<std::vector<std::string>> paths;
  // The call this one runs inside of ("" for none): what a nested call changes is its
  // outer call's too, so a failed outer call puts it back with its own changes.
  std::string parent;
};

// What an agent says of a failed call beyond its error, for the rules that keep
// failures (RollbackPolicy::keeps).
struct FailureDetails {
  std::string command;           // a shell tool's command line
  std::optional<int> exit_code;  // when the agent reports one
};

// What a step did.
struct StepResult {
  Boundary boundary;  // the boundary the step recorded
  // What a rollback or restore did to the host workspace.
  std::optional<fsnap::RestoreReport> restore;
  // begin() under containment: its answer (kHalt: the call was denied, must not run,
  // and the boundary is a `denied` one), and the limit that tripped.
  policy::Decision decision = policy::Decision::kAllow;
  std::optional<policy::SafetyEvent> safety_event;
};

// What became of a failed call.
struct FailureResult {
  RollbackDecision decision;
  std::string result_summary;  // as recorded: the error, with the reason when not rolled back
  StepResult step;
};

// What ToolTransactions::undo did.
struct UndoResult {
  // A path an undo cannot reverse, and why ("changed again since, in or next to the lines
  // the call changed; last changed by Edit toolu_3", "changed while Bash toolu_2 ran
  // too", ...).
  struct UndoConflict {
    std::string path;
    std::string why;
    friend bool operator==(const UndoConflict&, const UndoConflict&) = default;
  };

  enum class Outcome {
    kUndone,   // the call's changes are reversed; recorded as the call undo_call_id
    kNothing,  // nothing to reverse (reason): nothing was recorded
    kRefused,  // a later change overlaps the call's (conflicts): nothing was changed
  };
  Outcome outcome = Outcome::kNothing;
  std::string call_id;  // the call undone, and its tool
  std::string tool_name;
  std::string reason;                           // kNothing, kRefused: why, in a few words
  std::vector<UndoConflict> conflicts;          // kRefused: every path in the way, with why
  std::vector<KeptPath> kept;                   // changed while another call ran too: left as is
  std::string undo_call_id;                     // kUndone: the id its boundaries carry
  std::vector<std::string> paths;               // kUndone: the paths it changed
  std::optional<Boundary> begin;                // kUndone: its pre-tool boundary (the workspace
                                                // before it: its safety checkpoint)
  std::optional<Boundary> end;                  // kUndone: its post-tool boundary
  std::optional<fsnap::RestoreReport> restore;  // kUndone: what it did to the files
};

// The tool name an undo's boundaries carry.
inline constexpr const char* kUndoToolName = "undo";

// How a pre-tool boundary is taken.
struct BeginOptions {
  std::string tag;
  bool move_tag = false;         // see fsnap::CheckpointMeta::move_tag
  double cost_estimate_usd = 0;  // containment: a call that would cross the ceiling is denied
  // Record files changed since the run's newest boundary (by a person, a background
  // process) as a boundary of their own first, attributed to no tool — so that they are
  // not taken for the call's, and a rollback of another call does not undo them. Only
  // while no other call is open: changes seen then are the open calls'.
  bool separate_outside_changes = true;
  // Called inside the step, with the run's state current, before containment admits the
  // call (after the step hook, set_step_hook).
  std::function<void()> before_admission;
  // The call's whole input in a canonical form (the repeat guard compares its digest);
  // "": the params are compared as they are.
  std::string canonical_input;
};

// The transaction core of one run.
class ToolTransactions {
 public:
  ToolTransactions(ExecutionState& state, BoundaryLog& log, RollbackPolicy policy,
                   std::string run = std::string(fsnap::kDefaultRun));

  // The pre-tool boundary of call. Error kInvalidArgument for a call without an id. A
  // call begun again while it is open (an agent that sent its pre-tool event twice) is
  // answered with its first pre-tool boundary, and nothing is recorded: the call's end
  // completes that one, so no record stays open.
  StepResult begin(const ToolCall& call, const BeginOptions& options = {});
  // The end of a call whose pre-tool boundary never came (its hook was killed before it
  // recorded anything): a post-tool boundary with the call's id and outcome, so that
  // what it changed is its own and not an edit of no call. Counted by containment as a
  // step; never rolled back, since what the workspace was before it is not known.
  // Error kInvalidArgument without an id, kConflict if the call has a pre-tool boundary.
  StepResult end_unbegun(const ToolCall& call, bool success, const std::string& summary);
  // The call succeeded (and cost cost_usd, for containment). Error kNotFound if it has
  // no pre-tool boundary, kConflict if it ended already.
  StepResult succeed(const std::string& call_id, const std::string& result_summary,
                     const std::string& tag = "", double cost_usd = 0, bool move_tag = false);
  // The call failed (errors as succeed). What becomes of its files is
  // RollbackPolicy::decide's: the paths only it can have changed are put back (with the
  // STATE slices when that is everything it changed), the rest kept and named in the
  // record; nothing is done when it changed nothing.
  FailureResult fail(const std::string& call_id, const std::string& error, double cost_usd = 0,
                     const FailureDetails& details = {});
  // Puts files and STATE slices back to before the open call, logs nothing, records the
  // result as a boundary of no call, and forgets the call (errors as succeed).
  StepResult discard(const std::string& call_id);
  // The agent did not run the open call: its own permissions refused it (why: what it
  // told the model). Records a boundary that ends the call, outcome "denied by the
  // agent: why" (LedgerRecord::agent_denied), the files as they are; the call is no
  // step — containment gives it back — and is counted as denied by the agent (errors as
  // succeed).
  StepResult agent_denied(const std::string& call_id, const std::string& why);
  // The call never reported an outcome (its agent ended first): records a boundary that
  // ends it, outcome "not executed" and why, leaving files and state as they are and
  // containment's count untouched: it stays a step, since it may have run (errors as
  // succeed).
  StepResult close_unexecuted(const std::string& call_id, const std::string& why);
  // close_unexecuted for every call begun and not ended; returns their ids, oldest first.
  std::vector<std::string> close_open_calls(const std::string& why);
  // A boundary of no tool call (phase, tag from meta), after change (if given) has
  // changed the run's session; summary goes into its record.
  StepResult checkpoint(const fsnap::CheckpointMeta& meta,
                        const std::function<void(Session&)>& change = nullptr,
                        const std::string& summary = "");
  // Reverses the file changes of the ended call call_id and keeps every later change:
  // a three-way merge of the call's changes, reversed, into the workspace as it is now
  // (ancestor: the files as the call left them, its post-tool boundary; theirs: as they
  // were before it, its pre-tool boundary), text files merged line by line. Only the
  // paths the call alone can have changed are reversed (as a rollback decides; those a
  // call running at the same time can have changed are left, in kept). Where a later
  // change is in the way (the same lines changed again, a binary file changed again, a
  // file it changed removed since...), nothing is changed and every such path is named
  // (kRefused). Else the paths the merge changes are made so (fsnap::RestoreOptions::
  // only), recorded as a call of its own, undo_call_id ("undo-<call_id>"): a pre-tool
  // boundary of the workspace before it (its safety checkpoint) whose record names the
  // call undone (LedgerRecord::undoes) and the paths it changes, and a post-tool one
  // after — so undo(undo_call_id) puts the call's changes back. Files only: the session
  // is left as it is, and nothing is counted by containment. Errors, nothing changed:
  // kNotFound for a call with no pre-tool boundary in the run; kConflict for one still
  // open, one rolled back when it failed (nothing to undo), one ended without a post-tool
  // boundary; kInvalidArgument without a host workspace.
  UndoResult undo(const std::string& call_id);
  // Makes files and STATE slices exactly target's, then records the result.
  StepResult restore(const Boundary& target, const std::string& summary);
  // Makes only the named workspace paths (relative to its root; each with everything
  // below it) target's, as `git restore --source` does (fsnap::RestoreOptions::paths),
  // after a safety checkpoint, leaving every other path and the whole session as they
  // are, then records the result. Errors as RestoreOptions::paths says, nothing changed.
  StepResult restore_paths(const Boundary& target, const std::vector<std::string>& paths,
                           const std::string& summary);
  // Makes only the session slices named types (their SliceTypes names; a LOG slice
  // too) exactly target's — one target lacks is removed — leaving the files and every
  // other slice as they are, then records the result. Error kInvalidArgument, nothing
  // changed, for a name no registered slice type has.
  StepResult restore_slices(const Boundary& target, const std::vector<std::string>& types,
                            const std::string& summary);

  // Called at the start of every step that records a boundary, with the run's state
  // current (inside the step): where costs learned since the last boundary (the agent's
  // model requests) are charged, so that every boundary — and containment's admission of
  // a call — sees them. Null: none.
  void set_step_hook(std::function<void()> hook) { step_hook_ = std::move(hook); }
  const std::function<void()>& step_hook() const { return step_hook_; }

  ExecutionState& state() { return state_; }
  // The run's event channels: every boundary is published there once recorded.
  RunEvents& events() { return events_; }
  const RollbackPolicy& policy() const { return policy_; }
  const std::string& run() const { return run_; }

 private:
  // Publishes a boundary of call (and its SafetyEvent) on the run's channels.
  void publish(const std::string& call_id, const std::string& tool, const std::string& phase,
               const std::string& summary, const std::optional<policy::SafetyEvent>& safety);
  // The open call call_id (under a step): its pre-tool boundary.
  Boundary open_call(const std::string& call_id) const;
  using PathSets = std::map<std::string, std::set<std::string>>;  // by resource name
  using Trees = std::map<std::string, std::string>;               // by resource name
  using SkippedPaths = std::map<std::string, std::vector<fsnap::SkippedPath>>;
  // The paths of each resource that differ from trees from to trees to (a whole
  // resource that cannot say: ""), and in directories those that are directories in to.
  PathSets changed_paths(const Trees& from, const Trees& to, const SkippedPaths& from_skipped,
                         const SkippedPaths& to_skipped, PathSets* directories = nullptr) const;
  // The windows between the boundaries of later (the log's since(pre)), with the calls
  // open in each, and this run's newest trees after them.
  struct Windows {
    std::vector<ChangeWindow> windows;
    std::map<std::string, OpenCall> open;  // after the last window
    Trees newest;
    SkippedPaths newest_skipped;
    std::vector<OpenCall> open_now() const;
  };
  // until: only up to this run's boundary later[*until] (the other runs' recorded after
  // it left out).
  Windows windows_since(const Boundary& pre, const std::vector<BoundaryLog::LaterBoundary>& later,
                        std::optional<std::size_t> until);
  // What changed since pre, window by window between boundaries up to now, with the
  // calls open in each (what RollbackPolicy::decide needs), and what differs now.
  struct ChangesSince {
    std::vector<ChangeWindow> windows;
    PathSets differing;
    bool state_changed = false;  // a STATE slice differs from pre's
  };
  ChangesSince changes_since(const Boundary& pre);
  // The calls open right after pre, given the boundaries recorded since (later).
  std::map<std::string, OpenCall> calls_open_after(
      const Boundary& pre, const std::vector<BoundaryLog::LaterBoundary>& later) const;
  // The pre-tool boundary of call_id, ended and not rolled back (undo's errors else).
  Boundary ended_call(const std::string& call_id) const;
  // Records the undo out says of as a call of its own around the restore of target's
  // paths only, on the workspace host captured as planned_on.
  UndoResult apply_undo(UndoResult out, fsnap::Checkpoint target, const std::set<std::string>& only,
                        const fsnap::CaptureReport& planned_on,
                        const ResourceRegistry::Entry& host);
  // Whether a STATE slice of the session differs from pre's.
  bool state_changed_since(const Boundary& pre) const;
  // The call call_id as the rollback decision sees it while open.
  OpenCall open_call_facts(const std::string& call_id) const;
  // Logs the call in the session's ToolInvoked slice (best effort, as telemetry).
  void log_invocation(const Boundary& pre, bool success, const std::string& summary,
                      std::int64_t elapsed_ms);
  // Records the boundary of meta and remembers it; amends are earlier records rewritten
  // in the same notes commit (ExecutionState::snapshot).
  Boundary record(SnapshotMetadata meta, const std::vector<LedgerRecord>& amends = {});
  // Records the checkpoint after a restore (or discard), with the summary and the report
  // of the restore's (first) filesystem.
  StepResult record_restore(const std::string& summary, ExecutionState::StateRestore restored);
  // Records the boundary that ends call pre (post_tool or, after a rollback, checkpoint);
  // for a failed call, with what became of its changes (rollback, and what its restore
  // could not put back) in both its records.
  Boundary end_call(const Boundary& pre, fsnap::Phase phase, bool success,
                    const std::string& summary, std::int64_t elapsed_ms, const std::string& tag,
                    bool move_tag = false, const RollbackDecision* rollback = nullptr,
                    const fsnap::RestoreReport* restored = nullptr, bool agent_denied = false);
  // Holds the run for a step (BoundaryLog::begin_step), then runs the step hook.
  std::unique_ptr<BoundaryLog::StepHold> begin_step();
  // Tells containment how the call ended and keeps its count in the session.
  void complete_containment(const Boundary& pre, bool success, double cost_usd,
                            const std::string& error);
  // Hands the finished call to the state's CheckpointStore, if it has one.
  void keep_in_store(const Boundary& pre, const Boundary& end, bool success,
                     const std::string& summary, std::int64_t elapsed_ms);

  ExecutionState& state_;
  BoundaryLog& log_;
  RollbackPolicy policy_;
  std::string run_;
  RunEvents events_;
  std::map<std::string, std::string> containment_nodes_;  // call id -> node id, admitted here
  std::function<void()> step_hook_;
};

}  // namespace sandbox
