#include "background_maintenance.hpp"

#include <string>
#include <vector>

#include <boost/filesystem/operations.hpp>

#include "detached.hpp"
#include "fsnap/maintenance.hpp"
#include "runs/retention.hpp"
#include "shell.hpp"

namespace cli {

pid_t maintain_in_background(const Context& context, bool session_ended) {
  try {
    if (!context.config.auto_maintenance) return -1;
    boost::system::error_code ec;
    if (!boost::filesystem::is_directory(context.store_dir, ec)) return -1;
    fsnap::Store store = fsnap::Store::open(context.store_dir, context.workspace, false);
    // When a session has ended, whatever is left is packed (and retention applied) for
    // good; otherwise only once enough has piled up.
    bool due = fsnap::maintenance_due(store, context.config.maintenance) ||
               (session_ended && (fsnap::has_loose_objects(store) ||
                                  runs::has_retention_limits(context.config.retention)));
    if (!due) return -1;
    // One is packing already (it packs what there is): no process to start for nothing.
    // One that is merging packs does not count: what is written meanwhile is packed by
    // another. The one at the end of a session is started all the same: it waits for the
    // running one, then packs what came after it and applies the retention limits.
    if (!session_ended && !fsnap::MaintenanceLock::acquire_packing(store, false)) return -1;
    std::vector<std::string> argv = context.self_command();
    argv.push_back("maintenance");
    if (!session_ended) argv.push_back("--auto");
    argv.push_back("--background");  // beside the boundaries of a run, never ahead of them
    return spawn_detached(std::move(argv));
  } catch (...) {
    // The next command tries again.
    return -1;
  }
}

}  // namespace cli
