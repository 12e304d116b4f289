#include "runs/run_settings.hpp"

#include <algorithm>

#include "fsnap/enum_names.hpp"

namespace runs {

PolicyLimits PolicyLimits::overridden_by(const PolicyLimits& other) const {
  PolicyLimits out = *this;
  if (other.max_cost_usd) out.max_cost_usd = other.max_cost_usd;
  if (other.max_steps) out.max_steps = other.max_steps;
  if (other.max_retries_total) out.max_retries_total = other.max_retries_total;
  if (other.timeout) out.timeout = other.timeout;
  return out;
}

bool PolicySettings::active(const PolicyLimits& l) const {
  return l.max_cost_usd || l.max_steps || l.max_retries_total || l.timeout || circuit_breaker ||
         budget_window;
}

policy::ExecutionConfig PolicySettings::execution_config(const PolicyLimits& l) const {
  policy::ExecutionConfig c;
  c.max_cost_usd = l.max_cost_usd;
  c.max_steps = l.max_steps;
  c.max_retries_total = l.max_retries_total;
  // A run's own limits come from its run.json (or a fleet's record of it), which a
  // config's parser never saw: capped here too, so that milliseconds do not wrap.
  if (l.timeout) {
    c.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::clamp(*l.timeout, std::chrono::seconds(0), kMaxDuration));
  }
  c.circuit_breaker = circuit_breaker;
  if (budget_window) c.budget_window = budget_window;
  c.repeat = repeat;
  return c;
}

namespace {

constexpr fsnap::EnumName<PreserveStrategy> kPreserveNames[] = {
    {PreserveStrategy::kOnToolUse, "on_tool_use"},
    {PreserveStrategy::kOnComplete, "on_complete"},
    {PreserveStrategy::kPeriodic, "periodic"},
    {PreserveStrategy::kOnDemand, "on_demand"}};

}  // namespace

std::string_view preserve_strategy_name(PreserveStrategy strategy) {
  return fsnap::name_of(kPreserveNames, strategy, "on_tool_use");
}

std::optional<PreserveStrategy> parse_preserve_strategy(std::string_view text) {
  return fsnap::value_of(kPreserveNames, text);
}

namespace {
constexpr fsnap::EnumName<ResumeValidation> kValidationNames[] = {
    {ResumeValidation::kStrict, "strict"},
    {ResumeValidation::kRelaxed, "relaxed"},
    {ResumeValidation::kNone, "none"}};
}  // namespace

std::string_view resume_validation_name(ResumeValidation validation) {
  return fsnap::name_of(kValidationNames, validation, "strict");
}

std::optional<ResumeValidation> parse_resume_validation(std::string_view text) {
  return fsnap::value_of(kValidationNames, text);
}

}  // namespace runs
