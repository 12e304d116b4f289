#include "policy/shield_pipeline.hpp"

namespace policy {

std::string_view to_string(NodeKind kind) {
  return kind == NodeKind::kLlm ? "llm" : "tool";
}

void ShieldPipeline::add(std::shared_ptr<ShieldHook> hook, CallsChecked calls) {
  if (hook) hooks_.emplace_back(std::move(hook), calls);
}

std::vector<ShieldHook*> ShieldPipeline::hooks_of(const CallContext& call) const {
  CallsChecked kind = call.kind == NodeKind::kLlm ? CallsChecked::kModel : CallsChecked::kTool;
  std::vector<ShieldHook*> out;
  for (const auto& [hook, calls] : hooks_) {
    if (calls == CallsChecked::kEvery || calls == kind) out.push_back(hook.get());
  }
  return out;
}

CheckVerdict ShieldPipeline::before_call(const CallContext& call) {
  CheckVerdict out;
  for (ShieldHook* hook : hooks_of(call)) {
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
  for (ShieldHook* hook : hooks_of(call)) hook->on_charge(call, cost_usd);
}

CheckVerdict ShieldPipeline::on_error(const CallContext& call, const std::string& error) {
  CheckVerdict out{Decision::kRetry, std::nullopt};
  for (ShieldHook* hook : hooks_of(call)) {
    CheckVerdict v = hook->on_error(call, error);
    if (v.decision == Decision::kHalt && out.decision != Decision::kHalt) out = std::move(v);
  }
  return out;
}

std::vector<SafetyEvent> ShieldPipeline::take_events() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SafetyEvent> out = std::move(events_);
  events_.clear();
  return out;
}

}  // namespace policy
