#include "sandbox/retention.hpp"

#include <set>

#include <boost/filesystem/operations.hpp>

#include "fsnap/maintenance.hpp"
#include "fsnap/store_layout.hpp"
#include "sandbox/run_meta.hpp"

namespace sandbox {

bool has_retention_limits(const fsnap::RetentionPolicy& policy) {
  return policy.keep_last > 0 || policy.max_age.count() > 0 || policy.max_size > 0;
}

RetentionReport apply_retention(const fsnap::Store& store, fsnap::ShadowRepo& repo,
                                const fsnap::RetentionPolicy& policy,
                                std::chrono::system_clock::time_point now) {
  RetentionReport report;
  std::set<std::string> running;
  for (const std::string& run : repo.runs()) {
    std::optional<RunMeta> meta = RunMeta::load(store, run);
    if (meta && meta->running()) running.insert(run);
  }
  report.running.assign(running.begin(), running.end());
  // Packing moves objects while it runs (a new pack is written before the loose objects
  // it holds go): what the objects take on disk, which max_size is held to, is known
  // only while no maintenance runs.
  std::optional<fsnap::MaintenanceLock> maintenance =
      fsnap::MaintenanceLock::acquire(store, /*wait=*/true);
  // What writers killed part-way left (under both locks, none of them is still writing).
  report.abandoned_files_removed =
      fsnap::remove_abandoned_files(store, policy.prune_grace, *maintenance);
  report.gc = repo.collect_garbage(policy, now, running);
  for (const std::string& run : report.gc.dropped_runs) {
    boost::system::error_code ec;
    boost::filesystem::remove_all(fsnap::layout::run_dir(store.dir(), run), ec);
    if (ec) {
      report.warnings.push_back("could not remove the folder of dropped run " + run + ": " +
                                ec.message());
    }
  }
  report.packed_objects_dropped =
      fsnap::drop_unreachable_packed(store, policy.prune_grace, *maintenance);
  return report;
}

IdleMaintenanceReport maintain_when_idle(const fsnap::Store& store, fsnap::ShadowRepo& repo,
                                         const fsnap::RetentionPolicy& policy,
                                         fsnap::MaintenanceOptions options,
                                         std::chrono::system_clock::time_point now) {
  IdleMaintenanceReport report;
  if (has_retention_limits(policy)) {
    fsnap::StoreLock lock = store.lock();
    report.retention = apply_retention(store, repo, policy, now);
  }
  options.loose_objects = 0;
  options.consolidate = true;
  options.wait = true;
  report.packed = fsnap::maintain(store, options);
  return report;
}

}  // namespace sandbox
