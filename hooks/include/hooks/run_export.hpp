// export_run — a run's tool calls written into the user's own git repository as a
// branch (`shadowbox export RUN --branch NAME`), read from the run's ledger.
//
// On top of the user's HEAD commit: first the workspace as the run began, when it holds
// work HEAD does not (nothing else is known of where the run started); then, in the
// run's order, one commit per tool call that changed files — the workspace as the
// record that ended the call has it, so a call rolled back entirely gives none, one
// rolled back in part the paths its rollback kept — and one for files changed outside
// any call (a person's edits, a restore) where the ledger recorded them apart. Calls
// that overlap (parallel tool calls) each hold what changed until they ended. A call
// that changed nothing (or only what the repository ignores) gives no commit.
//
// Each call's commit says "<tool>: <input>" and carries the trailers Tool-Name,
// Tool-Call-Id, Tool-Outcome (ok, failed, failed, rolled back (kept N paths), failed,
// rollback refused, failed, kept, not executed), Tool-Cost-USD where the run metered its
// agent's spend (the model requests since the call before it, those that led to this
// call, as charged when the call was admitted), Shadowbox-Run and Shadowbox-Checkpoint.
//
// Thread-safety: one call at a time per repository.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/branch_export.hpp"
#include "fsnap/capture_options.hpp"
#include "fsnap/shadow_repo.hpp"

namespace hooks {

// One step of an export: a tool call, the run's start or files changed outside calls.
struct ExportedStep {
  std::string tool_call_id;  // "" but for a tool call
  std::string tool_name;
  std::string outcome;                // Tool-Outcome ("" but for a tool call)
  std::optional<double> cost_usd;     // Tool-Cost-USD, when known
  std::string checkpoint;             // the shadow checkpoint whose workspace it commits
  std::string subject;                // the commit's first line
  std::optional<std::string> commit;  // nullopt: it changed nothing exported
};

// What export_run did.
struct RunExport {
  fsnap::BranchExportResult branch;
  std::vector<ExportedStep> steps;  // the run's start first, then in the run's order
};

// Writes run's tool calls as branch (force: replacing one of that name) of the git
// repository workspace is in; capture is the workspace's capture configuration. Error
// kNotFound for a run the store does not have; the rest as fsnap::export_branch.
RunExport export_run(const std::shared_ptr<fsnap::ShadowRepo>& repo,
                     const boost::filesystem::path& workspace, const fsnap::CaptureOptions& capture,
                     const std::string& run, const std::string& branch, bool force);

}  // namespace hooks
