#include "runs/retention.hpp"

#include <set>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/free_space.hpp"
#include "fsnap/maintenance.hpp"
#include "fsnap/store_layout.hpp"
#include "runs/run_meta.hpp"

namespace runs {

namespace {

// "1 run", "2 runs".
std::string counted(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

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
  // A dropped run's folder (its HOME, its logs) goes as soon as its refs have: on a full
  // filesystem, before gc needs room to write.
  auto remove_folder = [&](const std::string& run) {
    boost::system::error_code ec;
    boost::filesystem::remove_all(fsnap::layout::run_dir(store.dir(), run), ec);
    if (ec) {
      report.warnings.push_back("could not remove the folder of dropped run " + run + ": " +
                                ec.message());
    }
  };
  report.gc = repo.collect_garbage(policy, now, running, nullptr, remove_folder);
  std::string out_of_space = report.gc.out_of_space;
  try {
    report.packed_objects_dropped =
        fsnap::drop_unreachable_packed(store, policy.prune_grace, *maintenance);
  } catch (const std::exception& e) {
    if (!fsnap::out_of_space(e, store.repo_dir())) throw;
    if (out_of_space.empty()) out_of_space = e.what();
  }
  if (!out_of_space.empty()) {
    throw fsnap::Error(
        fsnap::ErrorCode::kIo,
        "the filesystem of the store " + store.dir().string() + " is full: gc dropped " +
            counted(report.gc.runs_dropped, "run", "runs") + " and " +
            counted(report.gc.checkpoints_dropped, "checkpoint", "checkpoints") + " and pruned " +
            counted(report.gc.objects_pruned + report.packed_objects_dropped, "object", "objects") +
            ", but could not write what the rest needs (" + out_of_space +
            "); free some space there (or lower retention.max_size) and run gc again");
  }
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
  options.wait = true;
  options.geometric = true;
  report.packed = fsnap::maintain(store, options);
  return report;
}

}  // namespace runs
