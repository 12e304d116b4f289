// fleet::FleetMember — a run's place in the fleet while a process supervises it
// (`shadowbox run`, `resume`, `recover`). It holds the run's lease, renewed every third
// of its time to live on a thread of its own; keeps the run's record in the registry up
// to date; and pushes the run's checkpoints to the remote — on that thread
// (fleet.push: async), or before a boundary is answered (sync).
//
// Faults: with Redis unreachable the run goes on checkpointing locally; renewals and
// the record catch up when it answers again (a restarted, empty Redis learns the lease
// back). With the remote unreachable the pushes wait — the queue is the store itself —
// and the record shows the lag. With the lease lost (another worker took the run over)
// lost() turns true and nothing more is published or pushed for the run (every push is
// preceded by a check of the lease, as git cannot check a fencing token; a push already
// under way when another worker takes the run still lands); stopping the agent is the
// supervisor's part.
//
// Thread-safety: the public functions may be called from any thread. The thread uses a
// ShadowRepo of its own, never the caller's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "fleet/fleet_settings.hpp"
#include "fleet/redis_client.hpp"
#include "fleet/run_mirror.hpp"
#include "fleet/run_registry.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store.hpp"

namespace fleet {

// This worker's name in the fleet: fleet.worker_id, else the host name (made fit for a
// ref name).
std::string worker_id(const fleet::FleetSettings& settings);

// The run's record as the registry shows it (status, agent, session_id, cost_usd,
// steps, ...), read with the repository given (the member thread's own).
using DescribeRun =
    std::function<std::map<std::string, std::string>(const std::shared_ptr<fsnap::ShadowRepo>&)>;

class FleetMember {
 public:
  // How the run's lease is taken (RunRegistry::claim / take_over).
  enum class Join { kClaim, kTakeOver, kForce };

  struct Options {
    fleet::FleetSettings settings;
    fsnap::Store store;
    std::string run;
    std::string workspace;  // recorded in the run's record
    DescribeRun describe;   // may be null
    std::function<void(const std::string&)> warn;
  };

  // Takes the run's lease and publishes its record. Throws RunOwnedElsewhere (another
  // worker owns it), fsnap::Error kIo (Redis cannot be reached).
  FleetMember(Options options, Join join);
  // Stops the thread (without releasing the lease: finish does).
  ~FleetMember();
  FleetMember(const FleetMember&) = delete;
  FleetMember& operator=(const FleetMember&) = delete;

  const Lease& lease() const { return lease_; }
  const std::string& worker() const { return lease_.worker; }

  // A boundary was recorded: with fleet.push sync, pushes it now and returns when the
  // remote has it (or could not be reached: a warning, and the thread tries again);
  // async, wakes the thread.
  void boundary_recorded();
  // Whether the lease was lost; and to whom (the run's owner now, "" if unknown).
  bool lost() const { return lost_.load(); }
  std::string lost_to() const;
  // The run is over: a last push (if the remote answers), the final record, the lease
  // released. Never throws (what fails is warned about).
  void finish();

 private:
  void loop();
  // One round: the lease renewed, what is pending pushed, the record published.
  void push_now();
  void publish(const std::map<std::string, std::string>& extra);
  // Runs a write the lease fences (renew, publish): false (and the lease marked lost)
  // when it no longer holds; true when it did, or when Redis could not be reached
  // (warned about once, until it answers again).
  bool with_registry(const std::function<bool()>& fenced_write);
  void mark_lost(const std::string& owner);
  void warn_once(const std::string& key, const std::string& text);

  Options options_;
  std::chrono::milliseconds ttl_;
  RedisClient redis_;
  RunRegistry registry_;
  Lease lease_;
  std::shared_ptr<fsnap::ShadowRepo> repo_;  // the thread's and the pushes' own
  RunMirror mirror_;

  std::mutex push_mutex_;  // one push at a time (the thread's, a sync boundary's)
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool boundary_pending_ = false;
  bool stopping_ = false;
  std::atomic<bool> lost_{false};
  std::string lost_to_;
  std::map<std::string, bool> warned_;  // warnings given, until what they warn of mends
  std::thread thread_;
};

}  // namespace fleet
