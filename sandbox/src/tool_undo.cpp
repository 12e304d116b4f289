// ToolTransactions::undo: one tool call's file changes reversed, every later change
// kept — a three-way merge of the call's changes, reversed, into the live workspace,
// recorded as a call of its own so that it can be undone too.
#include <algorithm>
#include <chrono>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/tool_transactions.hpp"

namespace sandbox {

namespace {

// Whether a and b are the same path or one lies below the other.
bool related(const std::string& a, const std::string& b) {
  const std::string& shorter = a.size() <= b.size() ? a : b;
  const std::string& longer = a.size() <= b.size() ? b : a;
  return longer.compare(0, shorter.size(), shorter) == 0 &&
         (longer.size() == shorter.size() || longer[shorter.size()] == '/');
}

// The file over the size limit at path among skipped, as a list of at most one.
std::vector<fsnap::SkippedPath> large_file_at(const std::vector<fsnap::SkippedPath>& skipped,
                                              const std::string& path) {
  std::vector<fsnap::SkippedPath> out;
  for (const fsnap::SkippedPath& s : skipped) {
    if (s.path == path && s.reason == fsnap::kOverMaxFileSize) out.push_back(s);
  }
  return out;
}

bool same_large_file(const std::vector<fsnap::SkippedPath>& a,
                     const std::vector<fsnap::SkippedPath>& b) {
  return fsnap::large_file_changes(a, b).empty();
}

// Why the merge cannot reverse the call's change to a path. Its sides: ancestor, the
// files as the call left them; theirs, as they were before it; ours, as they are now.
std::string conflict_why(const fsnap::MergeConflict& c) {
  if (c.ancestor && c.theirs && !c.ours) return "the call changed it and it was removed since";
  if (c.ancestor && !c.theirs && c.ours) return "the call created it and it was changed since";
  if (!c.ancestor && c.theirs && c.ours) {
    return "the call removed it and it was created again since";
  }
  if (c.ancestor && c.theirs && c.ours) {
    if (c.binary) return "a binary file the call changed was changed again since";
    bool link = c.ours->type == fsnap::EntryType::kSymlink ||
                c.ancestor->type == fsnap::EntryType::kSymlink;
    if (link) return "a symlink the call changed was changed again since";
    return "changed again since, in or next to the lines the call changed";
  }
  return "changed since in a way that does not merge with the call's change";
}

// The three sides of an undo, in the run's workspace, and what of them is reversed.
struct UndoSides {
  std::string before, after;  // trees: the call's pre-tool and post-tool boundaries
  std::vector<fsnap::SkippedPath> before_skipped, after_skipped;
  std::set<std::string> own;  // the changed paths only the call can have made
  bool all_own = true;        // own is every path the call changed
};

// What an undo does to the workspace as it is now, or what stands in its way.
struct UndoPlan {
  std::vector<UndoResult::UndoConflict> conflicts;
  fsnap::Checkpoint target;    // the merged tree, and the files over the size limit
  std::set<std::string> only;  // the paths that change
};

// The merge works on files, as git's index does: a directory the call removed that held
// no file comes back from theirs where nothing is in its place now.
std::string with_removed_directories(fsnap::ShadowRepo& repo, const UndoSides& sides,
                                     const std::string& theirs, const std::string& now_tree,
                                     const std::string& merged) {
  auto added_directories = [&](const std::string& from) {
    std::set<std::string> out;
    for (const fsnap::TreeChange& c : repo.diff_trees(from, theirs)) {
      if (c.kind == fsnap::TreeChange::Kind::kAdded &&
          c.after->type == fsnap::EntryType::kDirectory && sides.own.count(c.path) != 0) {
        out.insert(c.path);
      }
    }
    return out;
  };
  std::set<std::string> removed_by_call = added_directories(sides.after);
  if (removed_by_call.empty()) return merged;
  std::set<std::string> missing = added_directories(merged);
  std::set<std::string> absent_now = added_directories(now_tree);
  std::set<std::string> bring_back;
  for (const std::string& path : removed_by_call) {
    if (missing.count(path) != 0 && absent_now.count(path) != 0) bring_back.insert(path);
  }
  return bring_back.empty() ? merged : repo.tree_with_paths_of(merged, theirs, bring_back);
}

// The undo of sides into the workspace whose capture is now_tree and now_skipped.
UndoPlan plan_undo(fsnap::ShadowRepo& repo, const UndoSides& sides, const std::string& now_tree,
                   const std::vector<fsnap::SkippedPath>& now_skipped) {
  UndoPlan plan;
  // Theirs: before the call where it is the call's alone, as it left it elsewhere.
  std::string theirs =
      sides.all_own ? sides.before : repo.tree_with_paths_of(sides.after, sides.before, sides.own);
  fsnap::TreeMerge merge = repo.merge_trees(sides.after, now_tree, theirs);
  for (const fsnap::MergeConflict& c : merge.conflicts) {
    plan.conflicts.push_back({c.path, conflict_why(c)});
  }
  // Files over the size limit are in no tree: each comes back from the store's copy of
  // it before the call, or goes, if it is as the call left it.
  plan.target.skipped = now_skipped;
  for (const std::string& path :
       fsnap::large_file_changes(sides.before_skipped, sides.after_skipped)) {
    if (sides.own.count(path) == 0) continue;
    std::vector<fsnap::SkippedPath> now = large_file_at(now_skipped, path);
    std::vector<fsnap::SkippedPath> before = large_file_at(sides.before_skipped, path);
    if (same_large_file(now, before)) continue;  // as before the call already
    if (!same_large_file(now, large_file_at(sides.after_skipped, path))) {
      plan.conflicts.push_back(
          {path, "over capture.max_file_size, the call changed it and it was changed again since"});
      continue;
    }
    std::erase_if(plan.target.skipped, [&](const fsnap::SkippedPath& s) {
      return s.path == path && s.reason == fsnap::kOverMaxFileSize;
    });
    plan.target.skipped.insert(plan.target.skipped.end(), before.begin(), before.end());
    plan.only.insert(path);
  }
  std::sort(plan.conflicts.begin(), plan.conflicts.end(),
            [](const UndoResult::UndoConflict& a, const UndoResult::UndoConflict& b) {
              return a.path < b.path;
            });
  if (!plan.conflicts.empty()) return plan;
  plan.target.tree = with_removed_directories(repo, sides, theirs, now_tree, merge.tree);
  // The merged tree is ours but at the call's paths (and holds no empty directory the
  // call did not remove: only the call's paths are compared).
  for (const fsnap::TreeChange& c : repo.diff_trees(now_tree, plan.target.tree)) {
    if (sides.own.count(c.path) != 0) plan.only.insert(c.path);
  }
  return plan;
}

// A boundary that changed something, as "by Edit toolu_3" and the like.
std::string changed_by(const BoundaryFact& fact) {
  std::string call = fact.tool_name + " " + fact.call_id;
  if (!fact.run.empty()) {
    return "in run " + fact.run + (fact.call_id.empty() ? "" : " by " + call) + " (checkpoint " +
           fact.checkpoint_id + ")";
  }
  if (fact.call_id.empty()) return "outside any tool call (checkpoint " + fact.checkpoint_id + ")";
  if (fact.phase == fsnap::Phase::kPreTool) return "before " + call + " began";
  return "by " + call;
}

// Adds to each conflict who changed its path last after the call ended: the newest
// change among the boundaries recorded since (this run's after later[end], the other
// runs' recorded after it), or the workspace since the newest of them.
void name_who_changed(std::vector<UndoResult::UndoConflict>& conflicts,
                      const std::vector<BoundaryLog::LaterBoundary>& later, std::size_t end,
                      const std::string& resource, fsnap::ShadowRepo& repo,
                      const std::string& now_tree,
                      const std::vector<fsnap::SkippedPath>& now_skipped) {
  std::vector<const BoundaryLog::LaterBoundary*> since;
  for (std::size_t i = 0; i < later.size(); ++i) {
    bool after =
        later[i].fact.run.empty() ? i > end : later[i].recorded_at > later[end].recorded_at;
    if (after) since.push_back(&later[i]);
  }
  std::stable_sort(since.begin(), since.end(),
                   [](const BoundaryLog::LaterBoundary* a, const BoundaryLog::LaterBoundary* b) {
                     return a->recorded_at > b->recorded_at;
                   });
  auto tree_of = [&](const std::map<std::string, std::string>& trees) {
    auto it = trees.find(resource);
    return it == trees.end() ? std::string() : it->second;
  };
  auto skipped_of = [&](const std::map<std::string, std::vector<fsnap::SkippedPath>>& skipped) {
    auto it = skipped.find(resource);
    return it == skipped.end() ? std::vector<fsnap::SkippedPath>{} : it->second;
  };
  auto changed = [&](const std::string& from, const std::string& to,
                     const std::vector<fsnap::SkippedPath>& from_skipped,
                     const std::vector<fsnap::SkippedPath>& to_skipped) {
    std::vector<std::string> paths = fsnap::large_file_changes(from_skipped, to_skipped);
    if (from != to) {
      for (const fsnap::TreeChange& c : repo.diff_trees(from, to)) paths.push_back(c.path);
    }
    return paths;
  };
  std::vector<bool> named(conflicts.size(), false);
  auto name = [&](const std::vector<std::string>& paths, const std::string& who) {
    for (std::size_t i = 0; i < conflicts.size(); ++i) {
      if (named[i]) continue;
      if (std::any_of(paths.begin(), paths.end(),
                      [&](const std::string& p) { return related(p, conflicts[i].path); })) {
        conflicts[i].why += "; last changed " + who;
        named[i] = true;
      }
    }
  };
  const BoundaryLog::LaterBoundary& newest = since.empty() ? later[end] : *since.front();
  name(changed(tree_of(newest.trees), now_tree, skipped_of(newest.skipped), now_skipped),
       "after the newest checkpoint");
  for (const BoundaryLog::LaterBoundary* b : since) {
    if (std::all_of(named.begin(), named.end(), [](bool n) { return n; })) break;
    if (!b->fact.changed_files) continue;
    name(changed(tree_of(b->previous_trees), tree_of(b->trees), skipped_of(b->previous_skipped),
                 skipped_of(b->skipped)),
         changed_by(b->fact));
  }
}

// The run's host workspace (the first host filesystem of state).
const ResourceRegistry::Entry& host_workspace(ExecutionState& state) {
  for (const ResourceRegistry::Entry* entry : state.resources().snapshotable()) {
    if (entry->host != nullptr) return *entry;
  }
  throw Error(ErrorCode::kInvalidArgument, "undo needs a workspace on the host");
}

}  // namespace

Boundary ToolTransactions::ended_call(const std::string& call_id) const {
  std::optional<Boundary> pre = log_.pre_tool(call_id);
  std::string call = "tool call " + fsnap::quote_input(call_id);
  if (!pre) {
    throw Error(ErrorCode::kNotFound,
                call + " has no pre-tool checkpoint in run " + fsnap::quote_input(run_) +
                    ": no such call, or it never ran (denied), or its pre-tool checkpoint was "
                    "never recorded, so what the files were before it is not known");
  }
  if (!pre->ended) {
    throw Error(ErrorCode::kConflict, call + " is still running (nothing has ended it in run " +
                                          fsnap::quote_input(run_) +
                                          "): undo it once it has ended");
  }
  if (pre->record.rollback == to_string(RollbackDecision::Kind::kRollBack)) {
    throw Error(ErrorCode::kConflict,
                call +
                    " failed and was rolled back: there is nothing to undo (the workspace it "
                    "left is failed:" +
                    call_id + ")");
  }
  return *pre;
}

UndoResult ToolTransactions::undo(const std::string& call_id) {
  std::unique_ptr<BoundaryLog::StepHold> step = log_.begin_step(state_);
  const ResourceRegistry::Entry& host = host_workspace(state_);
  fsnap::ShadowRepo& repo = host.host->repo();
  Boundary pre = ended_call(call_id);
  std::vector<BoundaryLog::LaterBoundary> later = log_.since(pre);
  auto ends = [&](const BoundaryLog::LaterBoundary& b) {
    return b.fact.run.empty() && b.fact.call_id == call_id &&
           (b.fact.phase == fsnap::Phase::kPostTool || b.fact.phase == fsnap::Phase::kCheckpoint);
  };
  auto found = std::find_if(later.begin(), later.end(), ends);
  if (found == later.end() || found->fact.phase != fsnap::Phase::kPostTool) {
    throw Error(ErrorCode::kConflict,
                "tool call " + fsnap::quote_input(call_id) +
                    " has no post-tool checkpoint (it ended without an outcome: " +
                    fsnap::quote_input(pre.record.result_summary) +
                    "), so there is no state after it to undo; restore pre:" + call_id +
                    " goes back to before it");
  }
  std::size_t end = static_cast<std::size_t>(found - later.begin());

  UndoResult out;
  out.call_id = call_id;
  out.tool_name = pre.snapshot.metadata.tool_name;
  // What is the call's alone, as a rollback decides, up to its end.
  Windows seen = windows_since(pre, later, end);
  PathSets differing = changed_paths(pre.snapshot.file_trees(), later[end].trees,
                                     pre.snapshot.file_skipped(), later[end].skipped);
  RollbackDecision own = RollbackPolicy{}.decide(FailedCall{out.tool_name, "", std::nullopt},
                                                 call_id, seen.windows, differing);
  out.kept = own.kept;
  if (own.kind == RollbackDecision::Kind::kUnchanged) {
    out.reason = "it changed no file";
    return out;
  }
  if (own.kind == RollbackDecision::Kind::kRefuse) {
    out.outcome = UndoResult::Outcome::kRefused;
    out.reason = "nothing it changed is its alone";
    for (const KeptPath& k : own.kept) out.conflicts.push_back({k.path, k.why});
    return out;
  }
  UndoSides sides;
  sides.before = pre.snapshot.file_trees().at(host.name);
  sides.after = later[end].trees.at(host.name);
  sides.before_skipped = pre.snapshot.file_skipped()[host.name];
  sides.after_skipped = later[end].skipped.count(host.name) ? later[end].skipped.at(host.name)
                                                            : std::vector<fsnap::SkippedPath>{};
  sides.own = own.restore[host.name];
  sides.all_own = own.complete();

  fsnap::CaptureReport now = host.host->capture_report();
  UndoPlan plan = plan_undo(repo, sides, now.tree, now.skipped);
  if (!plan.conflicts.empty()) {
    name_who_changed(plan.conflicts, later, end, host.name, repo, now.tree, now.skipped);
    out.outcome = UndoResult::Outcome::kRefused;
    out.reason = "changed again since in ways that do not merge";
    out.conflicts = std::move(plan.conflicts);
    return out;
  }
  if (plan.only.empty()) {
    out.reason = "the files have none of its changes any more";
    return out;
  }
  return apply_undo(std::move(out), plan.target, plan.only, now, host);
}

UndoResult ToolTransactions::apply_undo(UndoResult out, fsnap::Checkpoint target,
                                        const std::set<std::string>& only,
                                        const fsnap::CaptureReport& planned_on,
                                        const ResourceRegistry::Entry& host) {
  out.undo_call_id = "undo-" + out.call_id;
  for (int n = 2; log_.pre_tool(out.undo_call_id); ++n) {
    out.undo_call_id = "undo-" + out.call_id + "-" + std::to_string(n);
  }
  out.paths.assign(only.begin(), only.end());
  SnapshotMetadata meta;
  meta.phase = fsnap::Phase::kPreTool;
  meta.tool_call_id = out.undo_call_id;
  meta.tool_name = kUndoToolName;
  meta.outcome.input_summary = "undo " + out.tool_name + " " + out.call_id;
  meta.paths = out.paths;
  meta.undoes = out.call_id;
  meta.separate_outside_changes = !log_.has_open_call();
  // The workspace before the undo: its pre-tool boundary is its safety checkpoint.
  Boundary begin = record(std::move(meta));
  out.begin = begin;
  auto finish = [&](bool success, const std::string& summary) {
    std::int64_t elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                               state_.clock().now() - begin.snapshot.created_at)
                               .count();
    out.end = end_call(begin, fsnap::Phase::kPostTool, success, summary, elapsed, "");
  };
  try {
    fsnap::Checkpoint before = host.host->repo().read_checkpoint(begin.record.commit);
    if (before.tree != planned_on.tree ||
        !fsnap::large_file_changes(before.skipped, planned_on.skipped).empty()) {
      throw Error(ErrorCode::kConflict,
                  "the files changed while the undo was being planned; nothing was changed: try "
                  "again");
    }
    target.id = "the undo of " + out.call_id;
    fsnap::RestoreOptions options;
    options.run = run_;
    options.only = only;
    options.safety = before;
    out.restore = host.host->restore_checkpoint(target, options);
  } catch (const std::exception& e) {
    finish(false, std::string("not undone: ") + e.what());
    throw;
  }
  std::size_t n = out.paths.size();
  finish(true, "undid " + out.tool_name + " " + out.call_id + " (" + std::to_string(n) +
                   (n == 1 ? " path" : " paths") + ")");
  out.outcome = UndoResult::Outcome::kUndone;
  return out;
}

}  // namespace sandbox
