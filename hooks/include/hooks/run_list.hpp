// The runs of a store, as `shadowbox runs` lists them: every run with checkpoints and
// every run `shadowbox run` started, with its status, agent session and whether it can
// be resumed.
//
// Thread-safety: a function of the store; it borrows the process's ShadowRepo.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"

namespace hooks {

// One line of `shadowbox runs`.
struct RunInfo {
  std::string run;
  // running; complete (the agent exited with 0, or its session ended); failed (it
  // exited with another status); killed (by a signal); crashed (its supervisor died
  // with it); "-" (not an agent run: checkpoints only).
  std::string status;
  std::string session_id;
  bool resumable = false;
  std::size_t checkpoints = 0;
  std::string last_activity;  // ISO-8601 of the newest checkpoint
  std::optional<int> exit_code;
};

// Every run of the store, sorted by name.
std::vector<RunInfo> list_runs(const fsnap::Store& store,
                               const std::shared_ptr<fsnap::ShadowRepo>& repo);

}  // namespace hooks
