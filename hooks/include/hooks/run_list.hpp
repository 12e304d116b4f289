// The runs of a store, as `shadowbox runs` lists them: every run with checkpoints, every
// run `shadowbox run` started and every run with hook events it could not record, with its status,
// agent session and whether it can be resumed.
//
// Thread-safety: a function of the store; it borrows the process's ShadowRepo.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"
#include "hooks/agent_session_state.hpp"
#include "runs/run_meta.hpp"
#include "runs/run_stats.hpp"

namespace hooks {

// One line of `shadowbox runs`.
struct RunInfo {
  std::string run;
  // running; complete (the agent exited with 0, or its session ended); failed (it
  // exited with another status); killed (by a signal); halted (stopped by containment
  // or `shadowbox abort`); crashed (its supervisor died with it); "-" (not an agent
  // run: checkpoints only).
  std::string status;
  // Why containment stopped it (policy::halt_reason_name: max_steps, max_cost, timeout,
  // retry_budget, aborted...), or "".
  std::string halt_reason;
  // Its figures (runs/run_stats.hpp defines each: calls, steps, failed, rolled back,
  // refused, denied by the agent, cost), the cost in whole micro-dollars.
  runs::RunStats figures;
  // The models its cost counted at the price table's highest rates (no price in
  // policy.prices): when there are some, the cost is an estimate, not exact.
  std::vector<std::string> unpriced_models;
  std::string agent;       // RunMeta::agent: claude-code, claude-sdk, or "" (not known)
  std::string session_id;  // the session `resume` would pick (ResumableState::session)
  // Whether `resume` would resume it now, with strict validation in the run's workspace.
  bool resumable = false;
  std::vector<AgentSession> sessions;  // every agent session of the run, oldest first
  std::size_t checkpoints = 0;
  // ISO-8601 of when `run` started it (RunMeta::started_at), else of its oldest
  // checkpoint ("" for a run with neither).
  std::string started_at;
  std::string last_activity;  // ISO-8601 of the newest checkpoint
  std::optional<int> exit_code;
  std::size_t gaps = 0;  // hook events that could not be recorded (runs::record_gap)
  std::optional<runs::RunFork> forked_from;  // a run `rewind` started: where from
};

// The status of run now — the one every command shows (`runs`, `states RUN`, the fleet's
// record): what the run recorded, unless what lives of it says otherwise (a run whose
// supervisor died while its agent ran is crashed, though its lifecycle's last recorded
// move is still running: the crash is recorded when the run is resumed).
std::string run_status(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                       const std::string& run);

// One run of the store, as list_runs describes it.
RunInfo describe_run(const fsnap::Store& store, const std::shared_ptr<fsnap::ShadowRepo>& repo,
                     const std::string& run, std::chrono::seconds resume_max_age,
                     std::chrono::system_clock::time_point now);

// Every run of the store, oldest first (by started_at; runs started at the same time by
// name), so that the newest is the last line a terminal shows.
std::vector<RunInfo> list_runs(const fsnap::Store& store,
                               const std::shared_ptr<fsnap::ShadowRepo>& repo,
                               std::chrono::seconds resume_max_age,
                               std::chrono::system_clock::time_point now);

}  // namespace hooks
