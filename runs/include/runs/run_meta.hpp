// What shadowbox records about an agent run: run.json outside the repository
// (<store>/runs/<run>/run.json: the command, the processes, how it ended, the HOME it
// ran with), the run's log of hook warnings and errors, and run ids. The run's status
// in its session is runs/run_lifecycle.hpp's.
//
// Thread-safety: plain values and functions; run.json is replaced atomically.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"
#include "runs/run_settings.hpp"

namespace runs {

// One start of a run's agent: when, and its whole command line.
struct RunStart {
  std::string started_at;
  std::vector<std::string> command;
};

// Where a run forked by `shadowbox rewind` was taken from.
struct RunFork {
  std::string run;           // the run rewound (left as it was)
  std::string checkpoint;    // the checkpoint rewound to (a pre-tool one)
  std::string tool_call_id;  // the call it is before
  std::string at;            // when the fork was made (ISO-8601 UTC)
  friend bool operator==(const RunFork&, const RunFork&) = default;
};

// What `shadowbox run` (or `resume`) started, and how it ended.
struct RunMeta {
  std::string run;
  std::string workspace;
  std::vector<std::string> command;  // the agent command as given to `run`
  // How the agent is resumed (hooks::AgentKind: "claude-code", "claude-sdk"): as given
  // to `run --agent`, or as detected once it reported a Claude Code session; "" if
  // neither.
  std::string agent;
  std::string started_at;         // when `run` started it
  std::vector<RunStart> resumes;  // each `resume` after, with the command it ran
  long pid = 0;                   // the shadowbox process supervising the agent
  long agent_pid = 0;             // the agent
  std::optional<int> exit_code;   // 128 + N when a signal N ended it
  std::string ended_at;
  std::string home;                    // the HOME the agent runs (ran) with
  bool capture_state = true;           // its session data is kept (run.capture_state)
  PolicyLimits limits;                 // the run's own limits (its run flags); `resume` keeps them
  std::optional<RunFork> forked_from;  // a run `rewind` started

  // The run.json of run, or nullopt if there is none. Error kCorrupt if unreadable.
  static std::optional<RunMeta> load(const fsnap::Store& store, const std::string& run);
  // The run.json text as load reads it (origin names it in errors). Error kCorrupt.
  static RunMeta parse(const std::string& text, const std::string& origin);
  // Writes the run.json of this->run atomically.
  void save(const fsnap::Store& store) const;
  // Whether the run is running: it recorded no exit, and its supervisor is alive.
  bool running() const;
};

// Whether process pid is alive (a zombie is not).
bool process_alive(long pid);

// A new run id: run-YYYYMMDD-HHMMSS-xxxx (UTC).
std::string new_run_id();
// Checks a run id given by a person; Error kInvalidArgument naming the problem.
void check_run_id(const std::string& id);

// Appends a timestamped line to the run's log (<store>/runs/<run>/log). Never throws.
void append_run_log(const fsnap::Store& store, const std::string& run, const std::string& line);

// A hook event of the run that could not be recorded: a gap in its history, written to
// the run's log of the store at store_dir (if that store exists). Never throws.
void record_gap(const boost::filesystem::path& store_dir, const std::string& run,
                const std::string& what);
// The gaps the run's log holds.
std::size_t count_gaps(const fsnap::Store& store, const std::string& run);

}  // namespace runs
