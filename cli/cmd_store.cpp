// `shadowbox init`, `shadowbox path` and `shadowbox gc`: the store itself.
#include <chrono>
#include <iostream>

#include "background_priority.hpp"
#include "commands.hpp"
#include "fsnap/free_space.hpp"
#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store_layout.hpp"
#include "output.hpp"
#include "runs/retention.hpp"

namespace cli {

int cmd_init(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(true);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    set_path(*out, "store", store.dir().string());
    set_path(*out, "repo", store.repo_dir().string());
    set_path(*out, "workspace", store.workspace().string());
    print_json(std::cout, out);
  } else {
    std::cout << store.dir().string() << '\n';
  }
  return 0;
}

int cmd_path(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(false);
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    set_path(*out, "path", store.repo_dir().string());
    print_json(std::cout, out);
  } else {
    std::cout << store.repo_dir().string() << '\n';
  }
  return 0;
}

int cmd_gc(const Context& context, const Args& /*parsed*/) {
  fsnap::Store store = context.open_store(false);
  fsnap::StoreLock lock = store.lock();
  const fsnap::RetentionPolicy& policy = context.config.retention;
  std::shared_ptr<fsnap::ShadowRepo> repo = context.open_repo(store);
  runs::RetentionReport retention =
      runs::apply_retention(store, *repo, policy, std::chrono::system_clock::now());
  for (const std::string& warning : retention.warnings) {
    std::cerr << "shadowbox: warning: " << warning << '\n';
  }
  const fsnap::GcReport& report = retention.gc;
  // What is left is packed (with deltas), as maintenance does: unless there is no room
  // for the new pack, which is no failure of gc (what it had to do is done).
  std::optional<fsnap::MaintenanceReport> packed;
  try {
    packed = fsnap::maintain(store, {0, context.config.maintenance.max_packs,
                                     /*consolidate=*/true, /*wait=*/true});
  } catch (const std::exception& e) {
    if (!fsnap::out_of_space(e, store.repo_dir())) throw;
    std::cerr << "shadowbox: warning: the store was not packed, its filesystem is full: "
              << e.what() << '\n';
  }
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("objects_packed", packed ? packed->objects_packed : 0);
    out->set("keep_last", policy.keep_last);
    out->set("max_age_seconds", static_cast<std::int64_t>(policy.max_age.count()));
    out->set("max_size", static_cast<std::uint64_t>(policy.max_size));
    out->set("checkpoints_dropped", report.checkpoints_dropped);
    out->set("runs_dropped", report.runs_dropped);
    Poco::JSON::Array::Ptr dropped = new Poco::JSON::Array;
    for (const std::string& run : report.dropped_runs) dropped->add(run);
    out->set("dropped_runs", dropped);
    Poco::JSON::Array::Ptr kept = new Poco::JSON::Array;
    for (const std::string& run : retention.running) kept->add(run);
    out->set("running_runs_kept", kept);
    out->set("objects_pruned", report.objects_pruned);
    out->set("packed_objects_dropped", retention.packed_objects_dropped);
    out->set("abandoned_files_removed", retention.abandoned_files_removed);
    print_json(std::cout, out);
    return 0;
  }
  if (!runs::has_retention_limits(policy)) {
    std::cout << "no retention limits configured (retention.keep_last, .max_age, .max_size): "
                 "every checkpoint kept\n";
  } else {
    std::cout << "dropped " << counted(report.checkpoints_dropped, "checkpoint", "checkpoints")
              << " and " << counted(report.runs_dropped, "run", "runs")
              << " beyond the retention limits\n";
    for (const std::string& run : report.dropped_runs) std::cout << "dropped run " << run << '\n';
    for (const std::string& run : retention.running) {
      std::cout << "kept run " << run << " whole: its agent is running\n";
    }
  }
  std::cout << "pruned "
            << counted(report.objects_pruned, "unreferenced loose object",
                       "unreferenced loose objects")
            << " and " << counted(retention.packed_objects_dropped, "packed one", "packed ones")
            << '\n';
  if (retention.abandoned_files_removed > 0) {
    std::cout << "removed "
              << counted(retention.abandoned_files_removed, "temporary file", "temporary files")
              << " of interrupted writers\n";
  }
  if (packed)
    std::cout << "packed " << counted(packed->objects_packed, "object", "objects") << '\n';
  return 0;
}

int cmd_maintenance(const Context& context, const Args& parsed) {
  if (parsed.has("--background")) use_background_priority();
  fsnap::Store store = context.open_store(false);
  bool due = fsnap::maintenance_due(store, context.config.maintenance);
  std::optional<fsnap::MaintenanceReport> report;
  std::optional<runs::RetentionReport> retention;
  if (!parsed.has("--auto")) {
    // Asked for (or started when an agent's session ended): the retention limits too,
    // and everything packed as well as can be.
    runs::IdleMaintenanceReport idle =
        runs::maintain_when_idle(store, *context.open_repo(store), context.config.retention,
                                 context.config.maintenance, std::chrono::system_clock::now());
    report = idle.packed;
    retention = std::move(idle.retention);
    if (retention) {
      for (const std::string& warning : retention->warnings) {
        std::cerr << "shadowbox: warning: " << warning << '\n';
      }
    }
  } else if (due) {
    report = fsnap::maintain(store, context.config.maintenance);
  }
  if (context.options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("ran", report.has_value());
    out->set("objects_packed", report ? report->objects_packed : 0);
    out->set("packs_merged", report ? report->packs_merged : 0);
    out->set("loose_objects_estimate", fsnap::estimate_loose_objects(store));
    out->set("checkpoints_dropped", retention ? retention->gc.checkpoints_dropped : 0);
    out->set("runs_dropped", retention ? retention->gc.runs_dropped : 0);
    print_json(std::cout, out);
    return 0;
  }
  if (retention) {
    std::cout << "dropped "
              << counted(retention->gc.checkpoints_dropped, "checkpoint", "checkpoints") << " and "
              << counted(retention->gc.runs_dropped, "run", "runs")
              << " beyond the retention limits\n";
  }
  if (!report) {
    std::cout << (due ? "another maintenance of this store is running\n" : "nothing to do\n");
  } else {
    std::cout << "packed " << counted(report->objects_packed, "loose object", "loose objects")
              << ", merged " << counted(report->packs_merged, "pack", "packs") << '\n';
  }
  return 0;
}

}  // namespace cli
