// Telling the agents running on a workspace what a command changed under them (a
// `restore` from another terminal): a notice each live run's hooks hand to the model and
// the person at its next boundary (runs/run_notices.hpp).
#pragma once

#include <string>

#include "context.hpp"
#include "fsnap/host_filesystem.hpp"
#include "fsnap/store.hpp"

namespace cli {

// Posts to every run live on the workspace: what was done, and the paths report says
// it changed (nothing when it changed none). A notice that cannot be posted is warned
// about on stderr: the change is made and recorded either way.
void tell_live_runs(const Context& context, const fsnap::Store& store, const std::string& what,
                    const fsnap::RestoreReport& report);

}  // namespace cli
