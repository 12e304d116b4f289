// export_branch — states of a workspace, as the shadow repository holds them, written
// into the user's own git repository (the one the workspace is in) as commits of a
// branch, on top of its HEAD commit (`shadowbox export`).
//
// Only objects and the branch's ref are written: HEAD, the index, the work tree and
// every other ref stay as they are. What the user's repository ignores (its .gitignore
// files, .git/info/exclude, core.excludesFile or git's global ignore file) and is not
// tracked in HEAD is left out, and so is anything under a `.git`. Paths the capture did
// not take (excluded, over the size limit, nested repositories) keep what HEAD has.
//
// Thread-safety: one call at a time per ShadowRepo.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/clock.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/snapshot.hpp"

namespace fsnap {

// One commit to make: the workspace at a checkpoint, and what to say of it.
struct ExportStep {
  std::string tree;     // the shadow tree (hex id) of the workspace after the step
  std::string message;  // the commit message, trailers included
  TimePoint time;       // the commit's author and committer time
};

// What export_branch writes.
struct BranchExportRequest {
  std::string branch;  // the branch's name (refs/heads/<branch>)
  bool force = false;  // replace an existing branch of that name
  // The workspace as the run began; committed first when it differs from HEAD (work
  // not committed yet). skipped: what its capture left out for size or type.
  ExportStep start;
  std::vector<SkippedPath> start_skipped;
  // Each commits the changes from the step before (the start for the first).
  std::vector<ExportStep> steps;
};

// What export_branch wrote.
struct BranchExportResult {
  std::string repository;  // the user's repository's work tree
  std::string ref;         // refs/heads/<branch>
  std::string base;        // HEAD's commit, the first commit's parent ("" for none yet)
  std::optional<std::string> start_commit;  // the start's commit, if it differed from HEAD
  // For each step, its commit, or nullopt when it changed nothing that is exported.
  std::vector<std::optional<std::string>> commits;
  std::string tip;                   // the branch's commit ("" if nothing was committed)
  std::vector<std::string> ignored;  // paths left out: the user's repository ignores them
  bool replaced = false;             // an existing branch was moved (force)
};

// Writes request's steps as commits on a new branch of the git repository that
// workspace is in (found as git does, from the workspace upwards), reading the trees
// from shadow; capture is the workspace's capture configuration. The branch is made only
// once every commit is written, and points at the last one (at HEAD's commit if no step
// changed anything). Errors: kNotFound when workspace is in no git repository (or a
// bare one); kInvalidArgument for a name git does not allow for a branch; kConflict for
// an existing branch without force, and for the branch checked out in a work tree
// (moving it would change what that work tree's HEAD is).
BranchExportResult export_branch(ShadowRepo& shadow, const boost::filesystem::path& workspace,
                                 const CaptureOptions& capture, const BranchExportRequest& request);

}  // namespace fsnap
