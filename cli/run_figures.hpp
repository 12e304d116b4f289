// A run's figures (runs/run_stats.hpp defines each; docs/figures.md for users) as the
// commands show them: one line of text for `run`'s end and `states RUN`, the cost as a
// column of `runs`, and the same keys in every JSON output. A cost that counted a model
// with no price in policy.prices is an estimate: "~" before it, "cost_exact": false and
// the models in "unpriced_models".
#pragma once

#include <string>
#include <vector>

#include <Poco/JSON/Object.h>

#include "runs/run_stats.hpp"

namespace cli {

// "0.0123", or "~0.0123" when unpriced models make it an estimate.
std::string cost_text(double usd, const std::vector<std::string>& unpriced_models);
// "4 calls: 3 steps (1 failed, 1 rolled back), 1 refused, 0 denied by the agent; cost
// $0.0123" (cost "~$0.0123 (an estimate: ...)" with unpriced models).
std::string figures_line(const runs::RunStats& figures,
                         const std::vector<std::string>& unpriced_models);
// Sets "cost_usd", "cost_exact", "unpriced_models", "calls", "steps", "failed_calls",
// "rolled_back_calls", "refused_calls" and "agent_denied_calls" on out.
void set_figures_json(Poco::JSON::Object& out, const runs::RunStats& figures,
                      const std::vector<std::string>& unpriced_models);

}  // namespace cli
