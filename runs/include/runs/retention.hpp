// Retention: the limits of the config's retention.* applied to a store — by `shadowbox
// gc`, and by itself when an agent's session or run ends — to every run whose agent is
// not running (a running run is kept whole: its process holds its newest checkpoints).
// A run left with no checkpoint goes everywhere: its refs (checkpoints, tags, session
// trees, preserved HOME), its notes and its folder. The objects only dropped
// checkpoints used go too, loose or packed, once older than retention.prune_grace, as
// do the temporary files of writers killed part-way.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "fsnap/maintenance.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"

namespace runs {

// What apply_retention did.
struct RetentionReport {
  fsnap::GcReport gc;                // checkpoints and runs dropped, loose objects pruned
  std::vector<std::string> running;  // runs kept whole: their agent is running
  std::size_t packed_objects_dropped = 0;
  // Temporary files of killed writers (fsnap::remove_abandoned_files), older than
  // prune_grace.
  std::size_t abandoned_files_removed = 0;
  std::vector<std::string> warnings;  // what could not be removed (nothing else is lost)
};

// Whether policy limits anything (keep_last, max_age or max_size).
bool has_retention_limits(const fsnap::RetentionPolicy& policy);

// Applies policy to the store's runs at now, holding the store's maintenance lock (it
// waits for a running maintenance to end). The caller holds the store lock; repo is the
// store's repository. On a full filesystem, what needs no space is done first (runs
// dropped with their folders, unreachable objects and packs deleted); if what must be
// written still finds no room, Error kIo says the filesystem is full and what was
// freed, and the next call goes on from there.
RetentionReport apply_retention(const fsnap::Store& store, fsnap::ShadowRepo& repo,
                                const fsnap::RetentionPolicy& policy,
                                std::chrono::system_clock::time_point now);

// What maintain_when_idle did.
struct IdleMaintenanceReport {
  std::optional<RetentionReport> retention;        // if limits are set
  std::optional<fsnap::MaintenanceReport> packed;  // nullopt: another maintenance ran
};

// The maintenance nobody waits for — an agent's session or run has ended (a detached
// `shadowbox maintenance`), or a person asked for it: policy applied if it sets limits
// (under the store lock), then every loose object packed into a new pack and the small
// packs merged into a geometric progression (fsnap::MaintenanceOptions::geometric:
// never a large pack to fold in a few objects), once a maintenance already running has
// ended.
// repo is the store's repository.
IdleMaintenanceReport maintain_when_idle(const fsnap::Store& store, fsnap::ShadowRepo& repo,
                                         const fsnap::RetentionPolicy& policy,
                                         fsnap::MaintenanceOptions options,
                                         std::chrono::system_clock::time_point now);

}  // namespace runs
