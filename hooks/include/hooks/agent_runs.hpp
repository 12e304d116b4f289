// Runs of an agent under shadowbox: what `shadowbox run` recorded about each
// (<store>/runs/<run>/run.json), the runs list with their status, and the resumable
// state of a run (ADAPTER_STATE.md, find_resumable_state and its validation).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"
#include "hooks/claude_code_state.hpp"
#include "sandbox/ledger.hpp"

namespace hooks {

// What `shadowbox run` (or `resume`) started, and how it ended.
struct RunMeta {
  std::string run;
  std::string workspace;
  std::vector<std::string> command;  // the agent command as given to `run`
  std::string started_at;
  long pid = 0;        // the shadowbox process supervising the agent
  long agent_pid = 0;  // the agent
  std::optional<int> exit_code;
  std::string ended_at;
  std::string home;  // the HOME the agent runs (ran) with

  // Reads <dir>/run.json; nullopt if there is none. std::runtime_error if unreadable.
  static std::optional<RunMeta> load(const boost::filesystem::path& dir);
  // Writes <dir>/run.json atomically.
  void save(const boost::filesystem::path& dir) const;
};

// One line of `shadowbox runs`.
struct RunInfo {
  std::string run;
  std::string status;  // running, complete, crashed, or "-" (not an agent run)
  std::string session_id;
  bool resumable = false;
  std::size_t checkpoints = 0;
  std::string last_activity;  // ISO-8601 of the newest checkpoint
  std::optional<int> exit_code;
};

// Every run of the store (runs with checkpoints and runs `shadowbox run` started).
std::vector<RunInfo> list_runs(const fsnap::Store& store);

// The agent session a run can be resumed from, with the run's status.
struct ResumableState {
  ClaudeCodeSession session;
  std::string run_status;  // running, complete, or "" if never recorded
  bool home_preserved = false;
};

// The newest agent session recorded in the run's ledger, or nullopt.
std::optional<ResumableState> find_resumable_state(const fsnap::Store& store,
                                                   const std::string& run);

// How strictly resume checks the state.
enum class ResumeValidation { kStrict, kRelaxed, kNone };

// The reasons state may not be resumed under validation (empty: it may).
//   strict:  same workspace path, not older than max_age, run not complete, plus relaxed
//   relaxed: a session id, and preserved agent data
std::vector<std::string> resume_problems(const ResumableState& state, ResumeValidation validation,
                                         const std::string& workspace,
                                         std::chrono::seconds max_age);

// A new run id: run-YYYYMMDD-HHMMSS-xxxx.
std::string new_run_id();

// Appends a timestamped line to the run's log (<store>/runs/<run>/log). Never throws.
void append_run_log(const fsnap::Store& store, const std::string& run, const std::string& line);

}  // namespace hooks
