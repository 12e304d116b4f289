// What a run carried into its agent's HOME (the user's configuration, never session
// data) is removed when the run ends. A run whose supervisor was killed never gets there,
// and `resume` starts the agent in a HOME of its own: so each HOME's carried paths are
// listed beside it while it holds them (`<home>.carried`), and the next run or resume in
// the store removes them from the HOMEs of runs that no longer run.
//
//   record_carried(home, prepared->carried());   // once the HOME is prepared
//   ...
//   prepared->finish();
//   forget_carried(home);                        // removed as the run ended
//
// Thread-safety: functions of the filesystem; a store's runs are started one at a time
// per workspace (WorkspaceClaim), and removing what is gone already is harmless.
#pragma once

#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/store.hpp"

namespace hooks {

// Lists paths (relative to home) beside home, replacing an earlier list. Throws
// fsnap::Error when it cannot be written: a HOME whose leftovers nobody could find must
// not hold the user's configuration.
void record_carried(const boost::filesystem::path& home, const std::vector<std::string>& paths);

// Drops home's list (its paths were removed). Never throws.
void forget_carried(const boost::filesystem::path& home);

// Removes the listed paths from the HOMEs of the store's runs that are not running, and
// their lists; a listed name that would leave its HOME (absolute, `..`) is not followed.
// Returns the paths removed (absolute). Never throws.
std::vector<boost::filesystem::path> remove_stale_carried(const fsnap::Store& store);

}  // namespace hooks
