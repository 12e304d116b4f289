// fleet::RunRegistry — which worker owns which run, in Redis. Each run has an owner
// holding a lease with a fencing token: the lease expires unless renewed, and every
// write to the run's shared record is checked against the token, so a worker that lost
// the run (its lease expired and another worker took it over, or was taken with
// --force) can write nothing more for it, whatever it believes.
//
// Keys (PREFIX defaults to "shadowbox"):
//   PREFIX:run:<run>     hash: owner, fence (the newest token), and the run's record
//                        (status, agent, session_id, last_checkpoint, pushed_checkpoint,
//                        cost_usd, steps, workspace, updated_at, ...)
//   PREFIX:lease:<run>   "<worker> <token>", expiring after the lease's time to live
//   PREFIX:runs          sorted set of run ids, scored by their last update (ms, the
//                        server's clock)
// Every change is one Lua script: atomic on the server, no read-modify-write.
//
// Thread-safety: as the RedisClient it uses (shareable).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fleet/redis_client.hpp"
#include "fsnap/error.hpp"

namespace fleet {

// A worker's hold on a run: the proof it shows with every write.
struct Lease {
  std::string run;
  std::string worker;
  std::int64_t token = 0;
};

// A run as the registry knows it.
struct FleetRun {
  std::string run;
  std::string owner;
  std::int64_t token = 0;                               // the newest fencing token
  std::optional<std::chrono::milliseconds> lease_left;  // nullopt: no live lease
  std::map<std::string, std::string> fields;            // the record (without owner/fence)
  std::chrono::system_clock::time_point
      updated_at;  // last claim, renewal of a lost lease, or publish
  // A field, or "" when absent.
  std::string field(const std::string& name) const;
};

// Another worker owns the run (kConflict).
class RunOwnedElsewhere : public fsnap::Error {
 public:
  RunOwnedElsewhere(const std::string& message, std::string owner,
                    std::optional<std::chrono::milliseconds> lease_left)
      : fsnap::Error(fsnap::ErrorCode::kConflict, message),
        owner_(std::move(owner)),
        lease_left_(lease_left) {}
  const std::string& owner() const { return owner_; }
  // How long the owner's lease still runs (nullopt: expired).
  std::optional<std::chrono::milliseconds> lease_left() const { return lease_left_; }

 private:
  std::string owner_;
  std::optional<std::chrono::milliseconds> lease_left_;
};

class RunRegistry {
 public:
  explicit RunRegistry(RedisClient& redis, std::string prefix = "shadowbox");

  // For a run this worker starts or continues: a new run is registered with worker as
  // its owner; a run worker already owns gets a new token (fencing any earlier process
  // of its own). Throws RunOwnedElsewhere when another worker owns it, live lease or not.
  Lease claim(const std::string& run, const std::string& worker, std::chrono::milliseconds ttl);
  // For recovering another worker's run: once the owner's lease has expired, or at once
  // with force (the old owner is fenced: its next renewal or write fails). Throws
  // RunOwnedElsewhere while the lease lives (without force), kNotFound for a run the
  // registry does not know.
  Lease take_over(const std::string& run, const std::string& worker, std::chrono::milliseconds ttl,
                  bool force);
  // Extends the lease; false when it no longer holds (another token owns the run). A
  // registry that lost its data (a restarted Redis without persistence) learns the
  // lease back from its holder.
  bool renew(const Lease& lease, std::chrono::milliseconds ttl);
  // Ends the lease now (the owner stays the owner). Nothing when it no longer holds.
  void release(const Lease& lease);
  // Writes fields into the run's record if the lease still holds; false (nothing
  // written) when it does not.
  bool publish(const Lease& lease, const std::map<std::string, std::string>& fields);
  // Writes fields into the record of a run worker owns and nobody else holds a lease on
  // (a run that ended: its pushes caught up later); false (nothing written) otherwise.
  bool publish_as_owner(const std::string& run, const std::string& worker,
                        const std::map<std::string, std::string>& fields);
  // The run's record (nullopt: unknown run).
  std::optional<FleetRun> find(const std::string& run);
  // Every run, most recently updated first.
  std::vector<FleetRun> list();

 private:
  std::vector<std::string> keys(const std::string& run) const;
  Lease acquire(const std::string& run, const std::string& worker, std::chrono::milliseconds ttl,
                const char* mode);

  RedisClient& redis_;
  std::string prefix_;
};

}  // namespace fleet
