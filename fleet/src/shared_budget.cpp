#include "fleet/shared_budget.hpp"

#include <cmath>
#include <cstdio>

#include "fsnap/error.hpp"

namespace fleet {

namespace {

// KEYS: the budget. ARGV: run, its steps, its cost in micro-dollars.
const RedisScript kReport(R"lua(
local function add(total, mine, value)
  local had = tonumber(redis.call('HGET', KEYS[1], mine) or '0')
  local now = tonumber(value)
  if now > had then
    redis.call('HINCRBY', KEYS[1], total, now - had)
    redis.call('HSET', KEYS[1], mine, value)
  end
end
add('steps', 'steps:' .. ARGV[1], ARGV[2])
add('cost_micros', 'cost_micros:' .. ARGV[1], ARGV[3])
return {redis.call('HGET', KEYS[1], 'steps') or '0', redis.call('HGET', KEYS[1], 'cost_micros') or '0'}
)lua");

std::int64_t micros(double usd) {
  return static_cast<std::int64_t>(std::llround(usd * 1e6));
}

BudgetTotals totals_of(const RedisReply& reply) {
  if (reply.elements.size() != 2) {
    throw fsnap::Error(fsnap::ErrorCode::kCorrupt, "the fleet's Redis answered a budget oddly");
  }
  return {static_cast<std::size_t>(reply.elements[0].as_integer()),
          static_cast<double>(reply.elements[1].as_integer()) / 1e6};
}

std::string usd(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "$%.4f", value);
  return text;
}

}  // namespace

SharedBudget::SharedBudget(std::shared_ptr<RedisClient> redis, std::string name, std::string run,
                           std::optional<double> max_cost_usd, std::optional<std::size_t> max_steps,
                           const std::string& prefix)
    : redis_(std::move(redis)),
      budget_(std::move(name)),
      key_(prefix + ":budget:" + budget_),
      run_(std::move(run)),
      max_cost_usd_(max_cost_usd),
      max_steps_(max_steps) {}

BudgetTotals SharedBudget::report(std::size_t run_steps, double run_cost_usd) {
  return totals_of(redis_->run(kReport, {key_},
                               {run_, std::to_string(run_steps),
                                std::to_string(std::max<std::int64_t>(micros(run_cost_usd), 0))}));
}

BudgetTotals SharedBudget::totals() {
  RedisReply reply = redis_->command({"HMGET", key_, "steps", "cost_micros"});
  BudgetTotals out;
  if (reply.elements.size() == 2) {
    if (!reply.elements[0].nil())
      out.steps = static_cast<std::size_t>(reply.elements[0].as_integer());
    if (!reply.elements[1].nil())
      out.cost_usd = static_cast<double>(reply.elements[1].as_integer()) / 1e6;
  }
  return out;
}

policy::CheckVerdict SharedBudget::before_call(const policy::CallContext& call) {
  BudgetTotals budget;
  try {
    // This call counts, as every attempted call does.
    budget = report(call.step + 1, call.run_cost_usd);
  } catch (const fsnap::Error&) {
    return {};  // Redis away: the run goes on; the totals are reported with a later call
  }
  auto halt = [&](policy::StopReason type, std::string reason, double limit, double value) {
    policy::SafetyEvent event;
    event.type = type;
    event.decision = policy::Decision::kHalt;
    event.hook = std::string(name());
    event.reason = std::move(reason);
    event.limit = limit;
    event.value = value;
    event.at = call.at;
    event.node_id = call.node_id;
    event.key = call.key;
    return policy::CheckVerdict{policy::Decision::kHalt, event};
  };
  if (max_cost_usd_ && budget.cost_usd >= *max_cost_usd_) {
    return halt(policy::StopReason::kBudgetExceeded,
                "the shared budget '" + budget_ + "' is spent: " + usd(budget.cost_usd) +
                    " across the fleet's runs, ceiling " + usd(*max_cost_usd_),
                *max_cost_usd_, budget.cost_usd);
  }
  if (max_steps_ && budget.steps > *max_steps_) {
    return halt(policy::StopReason::kStepLimitExceeded,
                "the shared budget '" + budget_ + "' allows " + std::to_string(*max_steps_) +
                    (*max_steps_ == 1 ? " tool call" : " tool calls") +
                    " across the fleet's runs; this would be call " + std::to_string(budget.steps),
                static_cast<double>(*max_steps_), static_cast<double>(budget.steps));
  }
  return {};
}

}  // namespace fleet
