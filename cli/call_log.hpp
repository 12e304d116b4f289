// What `shadowbox log` shows by default: one row per tool call — its start and end
// checkpoints (and the safety checkpoint of a rollback) paired into one — with what
// became of it, and one row per checkpoint of no call (a run's start and end, a
// restore, a manual snapshot). The reference on each row is what the next command
// takes: a call's id (`undo ID`, `restore pre:ID`, `rewind RUN --to pre:ID`, `show
// post:ID`), or the checkpoint's id. Also the texts `log --checkpoints` and `show`
// share: what became of a failed call, what its rollback could not put back.
//
//   outcome      of a call
//   ok           it succeeded
//   failed       it failed and its changes were kept (why on the line below)
//   rolled back  it failed and shadowbox put back what it had changed
//   refused      a shadowbox limit or policy refused it: it never ran
//   denied       the agent's own permissions refused it: it never ran
//   no outcome   the agent ended before the call reported one (it may have run)
//   not ended    it has begun and not ended (its run is live, or crashed)
//
// Thread-safety: plain functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "sandbox/ledger.hpp"
#include "text_table.hpp"

namespace cli {

// One row of the log.
struct LogRow {
  std::string run;
  std::chrono::system_clock::time_point at;  // its first checkpoint's time
  std::string ref;                           // the call id; for no call, the checkpoint id
  std::string tool;                          // "" for no call
  std::string outcome;                       // see above; for no call, the checkpoint's phase
  std::string what;                          // the call's input, or the checkpoint's record
  std::vector<std::string> details;          // lines under the row: why, what was not restored
  // The checkpoints it pairs (for `report`): its first and last, and for a call the one
  // that ended it and the safety checkpoint of its rollback (the workspace as it failed).
  fsnap::Checkpoint first;
  fsnap::Checkpoint last;
  std::optional<fsnap::Checkpoint> end;
  std::optional<fsnap::Checkpoint> safety;
};

// The rows of run ("": of every run), newest first by their first checkpoint; the
// newest limit of them (0: all), read from no more of the history than they need. A
// call's file path under workspace is shown relative to it.
std::vector<LogRow> newest_log_rows(const fsnap::ShadowRepo& repo, const std::string& run,
                                    const sandbox::Ledger& ledger, const std::string& workspace,
                                    std::size_t limit);
// Writes the rows in tables no wider than width: the rows of a run in a row under a
// "run NAME" line, a blank line between two runs.
void print_log_rows(std::ostream& out, const std::vector<LogRow>& rows, std::size_t width);

// A tool call's recorded input as a person reads it: the command of a shell call, the
// file of a file tool (relative to workspace when inside it), a search's pattern, a
// fetch's URL...; an input that is not a JSON object as it is; "" for an object with
// none of those. A JSON input cut short is read as far as it goes.
std::string input_text(const std::string& input, const std::string& workspace);

// text on one line, cut after limit characters ("..." says it was).
std::string one_line(const std::string& text, std::size_t limit);
// What became of a failed call's changes: "rolled back", "rolled back, kept 2 paths
// (why)", "rollback refused (why)", "kept (why)", "nothing to roll back"; "" for a
// record of no failed call. why is cut after limit characters.
std::string rollback_text(const sandbox::LedgerRecord& r, std::size_t limit);
// "NOT restored: a.bin (why), b.bin (why)" for the record that ended a call whose
// rollback could not put back every path it meant to; "" for any other record.
std::string unrestored_text(const sandbox::LedgerRecord& r);

}  // namespace cli
