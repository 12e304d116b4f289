#include "hooks/run_policy.hpp"

#include "fleet/shared_budget.hpp"
#include "fsnap/error.hpp"
#include "runs/run_halt.hpp"
#include "runs/run_meta.hpp"

namespace hooks {

runs::PolicyLimits run_limits(const fsnap::Store& store, const std::string& run,
                              const Config& config) {
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run);
  return meta ? config.policy.limits.overridden_by(meta->limits) : config.policy.limits;
}

void contain_run(runs::LedgerRun& run, const Config& config, const runs::PolicyLimits& limits) {
  policy::ExecutionConfig execution = config.policy.execution_config(limits);
  std::shared_ptr<policy::ShieldPipeline> pipeline;
  if (!config.policy.shared_budget.empty() && config.fleet.enabled()) {
    // The cost ceiling and the step limit are the fleet's, counted in Redis: the run's
    // own counts are part of them.
    pipeline = std::make_shared<policy::ShieldPipeline>();
    pipeline->add(std::make_shared<fleet::SharedBudget>(
        std::make_shared<fleet::RedisClient>(fleet::RedisEndpoint::parse(config.fleet.redis)),
        config.policy.shared_budget, run.run(), execution.max_cost_usd, execution.max_steps));
    execution.max_cost_usd.reset();
    execution.max_steps.reset();
  }
  run.state().set_containment(execution, {.run_id = run.run()}, std::move(pipeline));
}

void record_abort(runs::LedgerRun& run, const Config& config, const std::string& reason) {
  if (run.state().containment() == nullptr) {
    contain_run(run, config, run_limits(run.store(), run.run(), config));
  }
  run.transactions().checkpoint(
      {"", fsnap::Phase::kCheckpoint, "", "", run.run()},
      [&](sandbox::Session&) {
        run.state().containment()->abort(reason);
        run.state().record_containment();
      },
      "aborted: " + reason);
}

void abort_run(runs::LedgerRun& run, const Config& config, const std::string& reason) {
  const fsnap::Store& store = run.store();
  std::optional<runs::RunMeta> meta = runs::RunMeta::load(store, run.run());
  if (!meta) {
    throw fsnap::Error(fsnap::ErrorCode::kNotFound,
                       "no agent run " + fsnap::quote_input(run.run()) +
                           " in this store (shadowbox runs lists them)");
  }
  if (!meta->running()) {
    throw fsnap::Error(fsnap::ErrorCode::kConflict, "run " + fsnap::quote_input(run.run()) +
                                                        " is not running; nothing to abort");
  }
  // The ledger first: whatever happens to the agent next, the abort and its reason are
  // the run's, and no further tool call of it is admitted.
  record_abort(run, config, reason);
  runs::request_halt(store, run.run(), {"aborted", "aborted: " + reason, false});
}

}  // namespace hooks
