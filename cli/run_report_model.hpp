// What `shadowbox report RUN` shows of a run, read once from the store by the functions
// `runs`, `states`, `log`, `show` and `diff` use (hooks::describe_run, the lifecycle
// slice, newest_log_rows, ShadowRepo::diff_trees and unified_diff, the ledger's records):
// the page (run_report_html.hpp) and `report --json` both print this one model.
//
// A run of 1,000 calls stays a few MB: each diff is cut at kDiffBytes and, once the diffs
// shown reach kDiffBudget, later ones list their changed paths only; a ledger record is
// cut at kRecordBytes. Every cut states the full size (docs/report.md).
//
// Thread-safety: plain values and functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <Poco/JSON/Object.h>

#include "context.hpp"
#include "hooks/run_list.hpp"
#include "runs/run_lifecycle.hpp"
#include "runs/run_settings.hpp"

namespace cli {

// The cuts (see above).
inline constexpr std::size_t kDiffBytes = 8 * 1024;
inline constexpr std::size_t kDiffBudget = 1024 * 1024;
inline constexpr std::size_t kRecordBytes = 2 * 1024;

// A changed path of an entry: "A", "D", "M" or "T" and the path.
struct ReportChange {
  std::string status;
  std::string path;
};

// A diff as the page shows it: the text kept and how big the whole was.
struct ReportDiff {
  std::string text;            // the unified diff, cut at kDiffBytes ("" when not shown)
  std::size_t full_bytes = 0;  // of the whole diff
  std::size_t full_lines = 0;
  bool cut = false;          // text is less than the whole diff
  bool over_budget = false;  // not shown at all: the run's diff budget was spent
};

// One entry of the timeline.
struct ReportEntry {
  // "call"; "between" (files changed between two calls, by no call shadowbox saw);
  // "checkpoint" (a checkpoint of no call: a run's start or end, a restore, a snapshot);
  // "lifecycle" (a move of the run's lifecycle: started, resumed, halted, ended).
  std::string kind;
  std::string at;   // ISO-8601 UTC
  std::string ref;  // a call's id, a checkpoint's id ("" for the others)
  std::string tool;
  std::string input;  // what the input works on (log's WHAT)
  // A call's outcome: "ok", "failed" (its changes kept), "rolled back", "rollback
  // refused", "denied by a limit", "denied by the agent", "not executed", "not ended";
  // a checkpoint's phase; a lifecycle move's event.
  std::string outcome;
  std::vector<std::string> details;
  std::optional<std::int64_t> elapsed_ms;
  std::string from_checkpoint;  // the diff's two ends ("" without one)
  std::string to_checkpoint;
  std::vector<ReportChange> changes;
  ReportDiff diff;
  std::string record;  // the ledger record that ended it, as JSON (cut at kRecordBytes)
  std::size_t record_bytes = 0;
};

// One point of the chart: the run's figures as a checkpoint's record holds them.
struct ReportPoint {
  std::string at;
  std::string checkpoint;
  std::size_t steps = 0;
  double cost_usd = 0;
};

// A move of the run's lifecycle.
struct ReportMove {
  std::string at;
  std::string from;
  std::string to;
  std::string event;
  std::string reason;
};

// The whole report of one run.
struct RunReport {
  hooks::RunInfo info;                // status, halt reason, figures, sessions, agent
  std::vector<std::string> command;   // the agent's command as `run` got it
  std::vector<std::string> resumes;   // when each `resume` started it
  runs::PolicyLimits limits;          // the run's limits (its flags over the config's)
  std::vector<std::string> commands;  // what resumes, rewinds or inspects it
  std::vector<ReportEntry> entries;   // oldest first
  std::vector<ReportPoint> points;    // oldest first
  std::vector<ReportMove> moves;      // oldest first
  std::vector<std::string> states;    // the lifecycle machine's states
  std::string current;                // the state it is in now ("" if none)
  std::size_t diffs_over_budget = 0;  // diffs the budget left out
};

// The report of run. Error kNotFound for a run the store does not know.
RunReport build_run_report(const Context& context, const std::string& run);

// The report as `report --json` prints it (docs/report.md lists the fields).
Poco::JSON::Object::Ptr run_report_json(const RunReport& report);

}  // namespace cli
