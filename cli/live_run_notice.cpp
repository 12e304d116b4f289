#include "live_run_notice.hpp"

#include <iostream>

#include "fsnap/path_quoting.hpp"
#include "fsnap/tree_change.hpp"
#include "runs/run_notices.hpp"

namespace cli {

namespace {

// The paths named in a notice (the rest counted).
constexpr std::size_t kNamedPaths = 20;

}  // namespace

void tell_live_runs(const Context& context, const fsnap::Store& store, const std::string& what,
                    const fsnap::RestoreReport& report) {
  std::vector<fsnap::TreeChange> changes = report.changes;
  changes.insert(changes.end(), report.large_files.begin(), report.large_files.end());
  if (changes.empty()) return;
  std::vector<std::string> runs;
  try {
    runs = runs::live_runs_on(store, context.workspace.string());
  } catch (const std::exception& e) {
    std::cerr << "shadowbox: warning: cannot tell the runs live on the workspace: " << e.what()
              << '\n';
    return;
  }
  if (runs.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < changes.size() && i < kNamedPaths; ++i) {
    list += std::string(list.empty() ? "" : ", ") + fsnap::status_letter(changes[i].kind) + " " +
            fsnap::quote_path(changes[i].path);
  }
  if (changes.size() > kNamedPaths) {
    list += " and " + std::to_string(changes.size() - kNamedPaths) + " more";
  }
  std::string text =
      "shadowbox: the workspace was changed from outside this run while it went on: " + what +
      ". Changed (A added, M modified, D deleted): " + list +
      ". What you remember of these files may no longer hold: read them again "
      "before you rely on it.";
  for (const std::string& run : runs) {
    try {
      runs::post_run_notice(store, run, text);
      std::cerr << "shadowbox: run " << run
                << " is live on this workspace: its agent is told at its next tool call\n";
    } catch (const std::exception& e) {
      std::cerr << "shadowbox: warning: cannot tell run " << run << " what changed: " << e.what()
                << '\n';
    }
  }
}

}  // namespace cli
