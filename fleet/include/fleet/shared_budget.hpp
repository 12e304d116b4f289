// fleet::SharedBudget — one cost ceiling and step limit for every run that names the
// same budget (policy.shared_budget), on any worker: a ShieldHook consulted before each
// tool call of a run. Each run reports its own totals (steps attempted, cost in micro-
// dollars) and one Lua script adds what is new since its last report to the budget's
// and answers the budget's totals, so a report is never counted twice — whichever
// process of the run makes it, and after a Redis outage.
//
//   PREFIX:budget:<name>   hash: steps, cost_micros (the budget's totals), and per run
//                          steps:<run>, cost_micros:<run> (what that run reported)
//
// Cost is known after the fact (a model request is charged when it has been answered),
// so the ceiling holds with at most what each run spent since its last tool call past
// it. With Redis unreachable the call is allowed (the run goes on, counting locally) and
// its totals are reported with the next call that reaches Redis.
//
// Thread-safety: as the RedisClient (shareable); before_call may be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "fleet/redis_client.hpp"
#include "policy/shield_pipeline.hpp"

namespace fleet {

// A budget's totals.
struct BudgetTotals {
  std::size_t steps = 0;
  double cost_usd = 0;
};

class SharedBudget : public policy::ShieldHook {
 public:
  SharedBudget(std::shared_ptr<RedisClient> redis, std::string name, std::string run,
               std::optional<double> max_cost_usd, std::optional<std::size_t> max_steps,
               const std::string& prefix = "shadowbox");

  std::string_view name() const override { return "SharedBudget"; }
  // Reports this run's totals (the call counted) and halts it when the budget's reach a
  // limit: kStepLimitExceeded past max_steps, kBudgetExceeded at max_cost_usd.
  policy::CheckVerdict before_call(const policy::CallContext& call) override;

  // Reports run's totals to the budget; returns the budget's. Throws fsnap::Error kIo
  // when Redis cannot be reached.
  BudgetTotals report(std::size_t run_steps, double run_cost_usd);
  // The budget's totals now.
  BudgetTotals totals();

 private:
  std::shared_ptr<RedisClient> redis_;
  std::string budget_;
  std::string key_;
  std::string run_;
  std::optional<double> max_cost_usd_;
  std::optional<std::size_t> max_steps_;
};

}  // namespace fleet
