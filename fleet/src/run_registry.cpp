#include "fleet/run_registry.hpp"

#include "fsnap/error.hpp"

namespace fleet {

namespace {

using fsnap::Error;
using fsnap::ErrorCode;

// The server's clock in milliseconds (the index's scores).
constexpr const char* kNow = R"lua(
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
)lua";

// KEYS: record, lease, index. ARGV: worker, ttl_ms, mode (claim | take | force), run.
// Returns {1, token} or {0, owner, pttl} (refused) or {-1} (unknown run, take/force).
const RedisScript kAcquire(std::string(kNow) + R"lua(
local owner = redis.call('HGET', KEYS[1], 'owner')
local mode = ARGV[3]
if not owner then
  if mode ~= 'claim' then return {-1} end
elseif owner ~= ARGV[1] then
  if mode == 'claim' or (mode == 'take' and redis.call('EXISTS', KEYS[2]) == 1) then
    return {0, owner, redis.call('PTTL', KEYS[2])}
  end
end
local token = redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('HSET', KEYS[1], 'owner', ARGV[1])
redis.call('SET', KEYS[2], ARGV[1] .. ' ' .. token, 'PX', ARGV[2])
redis.call('ZADD', KEYS[3], now_ms(), ARGV[4])
return {1, token}
)lua");

// Re-creates what a registry that lost its data forgets, from the holder of token
// (only when it knows of no newer token). Shared by renew and publish.
const std::string kRelearn = std::string(kNow) + R"lua(
local function relearn(worker, token, run)
  local fence = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
  if fence > token then return false end
  if fence < token then
    redis.call('HSET', KEYS[1], 'fence', token, 'owner', worker)
    redis.call('ZADD', KEYS[3], now_ms(), run)
  end
  return true
end
)lua";

// KEYS: record, lease, index. ARGV: worker, token, ttl_ms, run. Returns 1 or 0 (lost).
const RedisScript kRenew(kRelearn + R"lua(
local holder = ARGV[1] .. ' ' .. ARGV[2]
if not relearn(ARGV[1], tonumber(ARGV[2]), ARGV[4]) then return 0 end
local current = redis.call('GET', KEYS[2])
if current and current ~= holder then return 0 end
redis.call('SET', KEYS[2], holder, 'PX', ARGV[3])
return 1
)lua");

// KEYS: record, lease, index. ARGV: worker, token, run, field, value, ... Returns 1 or 0.
const RedisScript kPublish(kRelearn + R"lua(
if not relearn(ARGV[1], tonumber(ARGV[2]), ARGV[3]) then return 0 end
if #ARGV > 3 then redis.call('HSET', KEYS[1], unpack(ARGV, 4)) end
redis.call('ZADD', KEYS[3], now_ms(), ARGV[3])
return 1
)lua");

// KEYS: record, lease, index. ARGV: worker, run, field, value, ... Returns 1 or 0.
const RedisScript kPublishAsOwner(std::string(kNow) + R"lua(
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
local holder = redis.call('GET', KEYS[2])
if holder and string.sub(holder, 1, #ARGV[1] + 1) ~= ARGV[1] .. ' ' then return 0 end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
redis.call('ZADD', KEYS[3], now_ms(), ARGV[2])
return 1
)lua");

// KEYS: lease. ARGV: worker, token.
const RedisScript kRelease(R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] .. ' ' .. ARGV[2] then redis.call('DEL', KEYS[1]) end
return 1
)lua");

std::string ttl_ms(std::chrono::milliseconds ttl) {
  return std::to_string(std::max<std::int64_t>(ttl.count(), 1));
}

std::optional<std::chrono::milliseconds> lease_left(std::int64_t pttl) {
  if (pttl < 0) return std::nullopt;
  return std::chrono::milliseconds(pttl);
}

std::string describe_lease(const std::optional<std::chrono::milliseconds>& left) {
  if (!left) return "its lease has expired";
  return "its lease runs for another " + std::to_string((left->count() + 999) / 1000) + " s";
}

}  // namespace

std::string FleetRun::field(const std::string& name) const {
  auto it = fields.find(name);
  return it == fields.end() ? std::string() : it->second;
}

RunRegistry::RunRegistry(RedisClient& redis, std::string prefix)
    : redis_(redis), prefix_(std::move(prefix)) {}

std::vector<std::string> RunRegistry::keys(const std::string& run) const {
  return {prefix_ + ":run:" + run, prefix_ + ":lease:" + run, prefix_ + ":runs"};
}

Lease RunRegistry::acquire(const std::string& run, const std::string& worker,
                           std::chrono::milliseconds ttl, const char* mode) {
  RedisReply reply = redis_.run(kAcquire, keys(run), {worker, ttl_ms(ttl), mode, run});
  if (reply.kind != RedisReply::Kind::kArray || reply.elements.empty()) {
    throw Error(ErrorCode::kCorrupt, "the fleet's Redis answered a lease request oddly");
  }
  std::int64_t outcome = reply.elements[0].as_integer();
  if (outcome == 1 && reply.elements.size() == 2) {
    return Lease{run, worker, reply.elements[1].as_integer()};
  }
  if (outcome == -1) {
    throw Error(ErrorCode::kNotFound, "the fleet knows no run " + fsnap::quote_input(run) +
                                          " (shadowbox fleet runs lists them)");
  }
  if (outcome == 0 && reply.elements.size() == 3) {
    std::string owner = reply.elements[1].as_text();
    std::optional<std::chrono::milliseconds> left = lease_left(reply.elements[2].as_integer());
    std::string message = "run " + fsnap::quote_input(run) + " belongs to worker " +
                          fsnap::quote_input(owner) + " (" + describe_lease(left) + ")";
    if (std::string_view(mode) == "take") {
      message += "; recover it once the lease has expired, or with --force to fence " + owner;
    } else {
      message +=
          "; only its owner continues it (another worker takes it over with "
          "shadowbox recover)";
    }
    throw RunOwnedElsewhere(message, owner, left);
  }
  throw Error(ErrorCode::kCorrupt, "the fleet's Redis answered a lease request oddly");
}

Lease RunRegistry::claim(const std::string& run, const std::string& worker,
                         std::chrono::milliseconds ttl) {
  return acquire(run, worker, ttl, "claim");
}

Lease RunRegistry::take_over(const std::string& run, const std::string& worker,
                             std::chrono::milliseconds ttl, bool force) {
  return acquire(run, worker, ttl, force ? "force" : "take");
}

bool RunRegistry::renew(const Lease& lease, std::chrono::milliseconds ttl) {
  return redis_
             .run(kRenew, keys(lease.run),
                  {lease.worker, std::to_string(lease.token), ttl_ms(ttl), lease.run})
             .as_integer() == 1;
}

void RunRegistry::release(const Lease& lease) {
  redis_.run(kRelease, {keys(lease.run)[1]}, {lease.worker, std::to_string(lease.token)});
}

bool RunRegistry::publish(const Lease& lease, const std::map<std::string, std::string>& fields) {
  std::vector<std::string> args = {lease.worker, std::to_string(lease.token), lease.run};
  for (const auto& [name, value] : fields) {
    if (name == "owner" || name == "fence") {
      throw Error(ErrorCode::kInvalidArgument, "'" + name + "' is the registry's own field");
    }
    args.push_back(name);
    args.push_back(value);
  }
  return redis_.run(kPublish, keys(lease.run), args).as_integer() == 1;
}

bool RunRegistry::publish_as_owner(const std::string& run, const std::string& worker,
                                   const std::map<std::string, std::string>& fields) {
  std::vector<std::string> args = {worker, run};
  for (const auto& [name, value] : fields) {
    if (name == "owner" || name == "fence") {
      throw Error(ErrorCode::kInvalidArgument, "'" + name + "' is the registry's own field");
    }
    args.push_back(name);
    args.push_back(value);
  }
  return redis_.run(kPublishAsOwner, keys(run), args).as_integer() == 1;
}

namespace {

// The run named run from the replies to HGETALL record, PTTL lease and ZSCORE index;
// nullopt when it has no record.
std::optional<FleetRun> run_of(const std::string& run, const RedisReply& all,
                               const RedisReply& pttl, const RedisReply& updated) {
  if (all.elements.empty()) return std::nullopt;
  FleetRun out;
  out.run = run;
  for (std::size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    const std::string& name = all.elements[i].as_text();
    const std::string& value = all.elements[i + 1].as_text();
    if (name == "owner") {
      out.owner = value;
    } else if (name == "fence") {
      out.token = all.elements[i + 1].as_integer();
    } else {
      out.fields[name] = value;
    }
  }
  out.lease_left = lease_left(pttl.as_integer());
  if (!updated.nil()) {
    out.updated_at = std::chrono::system_clock::time_point(
        std::chrono::milliseconds(static_cast<std::int64_t>(std::stod(updated.as_text()))));
  }
  return out;
}

}  // namespace

std::optional<FleetRun> RunRegistry::find(const std::string& run) {
  std::vector<std::string> k = keys(run);
  std::vector<RedisReply> replies =
      redis_.pipeline({{"HGETALL", k[0]}, {"PTTL", k[1]}, {"ZSCORE", k[2], run}});
  return run_of(run, replies[0], replies[1], replies[2]);
}

std::vector<FleetRun> RunRegistry::list() {
  std::vector<FleetRun> out;
  RedisReply ids = redis_.command({"ZREVRANGE", prefix_ + ":runs", "0", "-1"});
  // Three commands a run, a few hundred runs a round trip.
  constexpr std::size_t kRunsPerTrip = 300;
  for (std::size_t start = 0; start < ids.elements.size(); start += kRunsPerTrip) {
    std::size_t end = std::min(ids.elements.size(), start + kRunsPerTrip);
    std::vector<std::vector<std::string>> commands;
    for (std::size_t i = start; i < end; ++i) {
      std::vector<std::string> k = keys(ids.elements[i].as_text());
      commands.push_back({"HGETALL", k[0]});
      commands.push_back({"PTTL", k[1]});
      commands.push_back({"ZSCORE", k[2], ids.elements[i].as_text()});
    }
    std::vector<RedisReply> replies = redis_.pipeline(commands);
    for (std::size_t i = start; i < end; ++i) {
      std::size_t at = 3 * (i - start);
      if (std::optional<FleetRun> run =
              run_of(ids.elements[i].as_text(), replies[at], replies[at + 1], replies[at + 2])) {
        out.push_back(std::move(*run));
      }
    }
  }
  return out;
}

}  // namespace fleet
