#include "fleet/fleet_member.hpp"

#include <unistd.h>

#include <algorithm>

#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"

namespace fleet {

namespace {

using Clock = std::chrono::steady_clock;

std::string sanitized(std::string name) {
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '-';
  }
  while (!name.empty() && (name.front() == '.' || name.front() == '-')) name.erase(0, 1);
  if (name.size() > 64) name.resize(64);
  return name.empty() ? "worker" : name;
}

}  // namespace

std::string worker_id(const fleet::FleetSettings& settings) {
  if (!settings.worker_id.empty()) return settings.worker_id;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "worker";
  return sanitized(host);
}

FleetMember::FleetMember(Options options, Join join)
    : options_(std::move(options)),
      ttl_(std::chrono::duration_cast<std::chrono::milliseconds>(options_.settings.lease_ttl)),
      redis_(RedisEndpoint::parse(options_.settings.redis)),
      registry_(redis_),
      repo_(std::make_shared<fsnap::ShadowRepo>(
          fsnap::ShadowRepo::open(fsnap::layout::repo_dir(options_.store.dir()), false))),
      mirror_(options_.store, repo_, options_.settings.remote, worker_id(options_.settings)) {
  std::string worker = worker_id(options_.settings);
  switch (join) {
    case Join::kClaim:
      lease_ = registry_.claim(options_.run, worker, ttl_);
      break;
    case Join::kTakeOver:
    case Join::kForce:
      lease_ = registry_.take_over(options_.run, worker, ttl_, join == Join::kForce);
      break;
  }
  publish({{"status", "running"}, {"workspace", options_.workspace}});
  thread_ = std::thread([this] { loop(); });
}

FleetMember::~FleetMember() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string FleetMember::lost_to() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_to_;
}

void FleetMember::warn_once(const std::string& key, const std::string& text) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (warned_[key]) return;
    warned_[key] = true;
  }
  if (options_.warn) options_.warn(text);
}

void FleetMember::mark_lost(const std::string& owner) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    lost_to_ = owner;
  }
  if (!lost_.exchange(true) && options_.warn) {
    options_.warn("this worker lost run " + options_.run + " to " +
                  (owner.empty() ? std::string("another worker") : "worker " + owner) +
                  "; it writes nothing more for it and stops the agent");
  }
}

void FleetMember::boundary_recorded() {
  if (lost()) return;
  if (options_.settings.sync_push) {
    push_now();
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    boundary_pending_ = true;
  }
  wake_.notify_all();
}

void FleetMember::push_now() {
  std::lock_guard<std::mutex> pushing(push_mutex_);
  if (lost()) return;
  // The lease first (a renewal): a worker another took the run from pushes nothing more
  // — git cannot check a fencing token, so this worker does before each push. (With
  // Redis unreachable it pushes: nobody can have taken the run through it meanwhile.)
  if (!with_registry([&] { return registry_.renew(lease_, ttl_); })) return;
  std::map<std::string, std::string> lag_fields;
  try {
    RunPush pushed = mirror_.push(options_.run);
    for (const auto& [ref, why] : pushed.report.rejected) {
      std::string text = "the fleet's remote refused ";
      text.append(ref).append(": ").append(why).append(
          " (it stays queued; is another worker writing this run?)");
      warn_once("rejected " + ref, text);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      warned_["remote"] = false;
    }
    lag_fields = lag_record(pushed.left, "");
  } catch (const std::exception& e) {
    warn_once("remote", std::string("cannot push to the fleet's remote (the checkpoints stay "
                                    "queued in the store): ") +
                            e.what());
    try {
      lag_fields = lag_record(mirror_.lag(options_.run), e.what());
    } catch (const std::exception&) {
      lag_fields = {{"push_error", e.what()}};
    }
  }
  publish(lag_fields);
}

void FleetMember::publish(const std::map<std::string, std::string>& extra) {
  if (lost()) return;
  std::map<std::string, std::string> fields = extra;
  if (options_.describe) {
    try {
      for (auto& [name, value] : options_.describe(repo_)) fields.emplace(name, value);
    } catch (const std::exception& e) {
      warn_once("describe", std::string("cannot describe the run for the fleet: ") + e.what());
    }
  }
  fields["worker_host"] = lease_.worker;
  with_registry([&] { return registry_.publish(lease_, fields); });
}

bool FleetMember::with_registry(const std::function<bool()>& fenced_write) {
  try {
    if (!fenced_write()) {
      std::optional<FleetRun> now = registry_.find(options_.run);
      mark_lost(now ? now->owner : "");
      return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    warned_["redis"] = false;
    return true;
  } catch (const std::exception& e) {
    warn_once("redis", std::string("the fleet's Redis cannot be reached; the run goes on "
                                   "checkpointing here and catches up when it answers: ") +
                           e.what());
    return true;
  }
}

void FleetMember::loop() {
  Clock::duration period = std::max<Clock::duration>(ttl_ / 3, std::chrono::milliseconds(100));
  Clock::time_point next_renew = Clock::now() + period;
  push_now();  // whatever an earlier process left queued
  while (!lost()) {
    bool boundary = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait_until(lock, next_renew, [&] { return stopping_ || boundary_pending_; });
      if (stopping_) return;
      boundary = boundary_pending_;
      boundary_pending_ = false;
    }
    bool renew_due = Clock::now() >= next_renew;
    if (!boundary && !renew_due) continue;
    next_renew = Clock::now() + period;
    // A push round renews the lease first: async pushes follow boundaries, and what
    // could not be pushed is tried again at each renewal.
    push_now();
  }
}

void FleetMember::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (lost()) return;
  push_now();
  try {
    registry_.release(lease_);
  } catch (const std::exception& e) {
    warn_once("release", std::string("could not release the run's lease (it expires by itself "
                                     "within fleet.lease_ttl): ") +
                             e.what());
  }
}

}  // namespace fleet
