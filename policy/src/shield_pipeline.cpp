#include "policy/shield_pipeline.hpp"

namespace policy {

std::string_view to_string(NodeKind kind) {
  return kind == NodeKind::kLlm ? "llm" : "tool";
}

void ShieldPipeline::add(std::shared_ptr<ShieldHook> hook) {
  if (hook) hooks_.push_back(std::move(hook));
}

CheckVerdict ShieldPipeline::before_call(const CallContext& call) {
  CheckVerdict out;
  for (const std::shared_ptr<ShieldHook>& hook : hooks_) {
    CheckVerdict v = hook->before_call(call);
    if (v.event) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(*v.event);
    }
    if (v.decision == Decision::kHalt) return v;
    if (v.decision == Decision::kDegrade && out.decision == Decision::kAllow) out = v;
  }
  return out;
}

void ShieldPipeline::on_charge(const CallContext& call, double cost_usd) {
  for (const std::shared_ptr<ShieldHook>& hook : hooks_) hook->on_charge(call, cost_usd);
}

void ShieldPipeline::on_error(const CallContext& call, const std::string& error) {
  for (const std::shared_ptr<ShieldHook>& hook : hooks_) hook->on_error(call, error);
}

std::vector<SafetyEvent> ShieldPipeline::take_events() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SafetyEvent> out = std::move(events_);
  events_.clear();
  return out;
}

}  // namespace policy
