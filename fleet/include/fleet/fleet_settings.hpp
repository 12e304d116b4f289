// FleetSettings — whether this machine's runs join a fleet, and how (config fleet.*).
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <string>

namespace fleet {

// fleet.*: workers on several machines sharing runs through Redis (leases, the run
// registry, shared budgets) and a git remote (the runs' objects). Without a fleet
// section a run is this machine's alone.
struct FleetSettings {
  std::string redis;   // fleet.redis: redis://[:PASSWORD@]HOST[:PORT][/DB]
  std::string remote;  // fleet.remote: any URL libgit2 can push to (path, file://, ssh://, git://)
  std::string worker_id;               // fleet.worker_id (default: this machine's host name)
  std::chrono::seconds lease_ttl{30};  // fleet.lease_ttl: a run's lease lasts this long unrenewed
  bool sync_push = false;              // fleet.push: async (false: a queue in the store) or sync
  // fleet.required: false lets a run start in local mode (with a warning) when Redis
  // cannot be reached at its start.
  bool required = true;
  bool enabled() const { return !redis.empty(); }
};

}  // namespace fleet
