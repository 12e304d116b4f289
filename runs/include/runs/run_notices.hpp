// Notices for a live run's agent: what was done to its workspace from outside the run (a
// `restore` or an `undo` from another terminal), so that the agent does not go on
// believing in files that changed under it. Whoever changes the workspace posts one
// (<store>/runs/<run>/notices/<stamp>, a file each); the run's hooks take them at its
// next boundary and tell the model and the person (HookVerdict context and notice).
//
// Thread-safety: plain functions; each notice is created atomically and taken by one
// process only (renamed away before it is read).
#pragma once

#include <string>
#include <vector>

#include "fsnap/store.hpp"

namespace runs {

// The longest notice taken (longer ones are cut): the store is anyone's to write.
inline constexpr std::size_t kMaxNoticeBytes = 4096;
// The most notices taken at one boundary (the oldest first; the rest are counted).
inline constexpr std::size_t kMaxNoticesTaken = 8;

// Posts text for run's agent. Error kIo if it cannot be written.
void post_run_notice(const fsnap::Store& store, const std::string& run, const std::string& text);
// The notices posted for run, oldest first, each taken once (removed). Never throws: a
// notice that cannot be read is skipped.
std::vector<std::string> take_run_notices(const fsnap::Store& store, const std::string& run);
// The runs of store whose agent is running on workspace now (their run.json names it
// and their supervisor is alive).
std::vector<std::string> live_runs_on(const fsnap::Store& store, const std::string& workspace);

}  // namespace runs
