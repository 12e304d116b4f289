// The name of every file, directory and ref of a store, in one place (as LevelDB's
// db/filename.h names every file of a database). Nothing else spells these out, but
// <store>/workspace.lock (hooks/src/workspace_claim.cpp) and refs/fleet/notes/<worker>
// (fleet/src/run_mirror.cpp), which are still to move here.
//
//   <store>/repo.git                    bare shadow repository (`shadowbox path`)
//   <store>/workspace                   real path of the workspace the store belongs to
//   <store>/stat-cache                  stat data of the last capture (a cache)
//   <store>/lock                        flock(2) target serialising writers
//   <store>/maintenance.lock            held by the one maintenance packing loose objects
//   <store>/maintenance.merge.lock      held by the one maintenance merging packs
//   <store>/maintenance.leftovers       sampled loose objects the last maintenance left
//   <store>/watch.sock                  the watch daemon's socket (0600)
//   <store>/watch.lock                  held by the one watch daemon alive
//   <store>/watch.log                   what the watch daemon reports (its stderr)
//   <store>/watch.spawns                when the last watch daemons were started
//   <store>/fleet-pushed.json           what of each run was pushed to the fleet's remote
//   <store>/large-files/<name>          the copy of a workspace file over
//                                       capture.max_file_size (a reflink, hard link or
//                                       copy) that checkpoints name; tmp-* on the way in
//   <store>/agent-answers/<agent>       a person's answers to an agent's own questions
//   <store>/runs/<run>/                 one run of an agent:
//       home/                           the agent's ephemeral HOME
//       home-resumed-<stamp>/           HOMEs rebuilt by `resume`
//       run.json                        what was started, and how it ended
//       config.yaml                     the configuration its agent started with
//       log                             hook warnings and errors
//       halt                            a stop the run's supervisor carries out
//       notices/<stamp>                 what was done to its workspace from outside it,
//                                       for its agent's next boundary
//       processes.lock                  locked while a process of the run lives
//       agent-cost.json                 the agent's own cost reports (OpenTelemetry)
//
//   refs/shadowbox/runs/<run>           chain of checkpoint commits of one run
//   refs/shadowbox/tags/<tag>           the newest checkpoint taken with a tag
//   refs/shadowbox/home/<run>           the preserved agent HOME data of a run
//   refs/shadowbox/sessions/<run>       the session trees the run's ledger records name
//   refs/notes/shadowbox                the ledger: one record per checkpoint
//   refs/shadowbox/incoming/<n>         what a fetch brought, until its trees are checked
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include <boost/filesystem/path.hpp>

namespace fsnap::layout {

using Path = boost::filesystem::path;

inline constexpr std::string_view kRunRefPrefix = "refs/shadowbox/runs/";
inline constexpr std::string_view kTagRefPrefix = "refs/shadowbox/tags/";
inline constexpr std::string_view kHomeRefPrefix = "refs/shadowbox/home/";
inline constexpr std::string_view kSessionRefPrefix = "refs/shadowbox/sessions/";
inline constexpr const char* kNotesRef = "refs/notes/shadowbox";
// Where a fetch puts what it fetched until every tree of it has been checked.
inline constexpr std::string_view kIncomingRefPrefix = "refs/shadowbox/incoming/";
// HEAD names this branch, which nothing ever creates: git requires HEAD to name a
// branch, and checkpoints live under refs/shadowbox/.
inline constexpr const char* kUnbornHead = "refs/heads/main";

// Files and directories of the store at store.
inline Path repo_dir(const Path& store) {
  return store / "repo.git";
}
inline Path workspace_marker(const Path& store) {
  return store / "workspace";
}
inline Path stat_cache_file(const Path& store) {
  return store / "stat-cache";
}
inline Path lock_file(const Path& store) {
  return store / "lock";
}
inline Path maintenance_lock_file(const Path& store) {
  return store / "maintenance.lock";
}
inline Path maintenance_merge_lock_file(const Path& store) {
  return store / "maintenance.merge.lock";
}
inline Path maintenance_leftovers_file(const Path& store) {
  return store / "maintenance.leftovers";
}
inline Path watch_socket(const Path& store) {
  return store / "watch.sock";
}
inline Path watch_lock_file(const Path& store) {
  return store / "watch.lock";
}
inline Path watch_spawns_file(const Path& store) {
  return store / "watch.spawns";
}
inline Path watch_log_file(const Path& store) {
  return store / "watch.log";
}
inline Path fleet_pushed_file(const Path& store) {
  return store / "fleet-pushed.json";
}
// Copies of workspace files over capture.max_file_size (src/large_file_copies.hpp).
inline Path large_files_dir(const Path& store) {
  return store / "large-files";
}
// The store whose shadow repository is at repo_dir (repo_dir(store) is store/repo.git).
inline Path store_of_repo(const Path& repo_dir) {
  return repo_dir.parent_path();
}
inline Path runs_dir(const Path& store) {
  return store / "runs";
}
// The answers the person gave an agent's own questions in a run (a folder's trust, a
// notice seen), which its ephemeral HOME would lose: kept for the store's next runs.
// agent is an AgentKind's name.
inline Path agent_answers_file(const Path& store, const std::string& agent) {
  return store / "agent-answers" / agent;
}
// Whether run can name a run: one ref component (letters, digits, '-', '_', '.'; no
// '/', no "..", no spaces or control characters) of at most kMaxTagBytes bytes.
bool is_valid_run_name(std::string_view run);
// Error kInvalidArgument naming run and the rule, unless it is valid. A run's name is
// a directory of the store and a ref: every path below is made only for a valid one.
void check_run_name(std::string_view run);

inline Path run_dir(const Path& store, const std::string& run) {
  check_run_name(run);
  return runs_dir(store) / run;
}
inline Path run_home_dir(const Path& store, const std::string& run) {
  return run_dir(store, run) / "home";
}
inline Path resumed_home_dir(const Path& store, const std::string& run, const std::string& stamp) {
  return run_dir(store, run) / ("home-resumed-" + stamp);
}
inline Path run_meta_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "run.json";
}
// The configuration the run's agent started with, complete: its hooks read this one,
// so that a change to the workspace's own file takes effect after the run.
inline Path run_config_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "config.yaml";
}
inline Path run_log_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "log";
}
inline Path run_halt_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "halt";
}
// Notices for the run's agent, one file each (runs/run_notices.hpp).
inline Path run_notices_dir(const Path& store, const std::string& run) {
  return run_dir(store, run) / "notices";
}
// Locked by the run's supervisor and its agent's guard (hooks/run_processes.hpp).
inline Path run_processes_lock_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "processes.lock";
}
inline Path agent_cost_file(const Path& store, const std::string& run) {
  return run_dir(store, run) / "agent-cost.json";
}

// Refs of the shadow repository.
inline std::string run_ref(std::string_view run) {
  return std::string(kRunRefPrefix) + std::string(run);
}
inline std::string tag_ref(std::string_view tag) {
  return std::string(kTagRefPrefix) + std::string(tag);
}
inline std::string home_ref(std::string_view run) {
  return std::string(kHomeRefPrefix) + std::string(run);
}
inline std::string session_ref(std::string_view run) {
  return std::string(kSessionRefPrefix) + std::string(run);
}

}  // namespace fsnap::layout
