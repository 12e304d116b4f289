#include "policy/budget_window.hpp"

#include <sstream>
#include <stdexcept>

namespace policy {

BudgetWindowHook::BudgetWindowHook(BudgetWindowConfig config, Now now)
    : config_(config), now_(std::move(now)) {
  if (config_.window.count() <= 0) {
    throw std::invalid_argument("a budget window must last longer than 0 ms");
  }
}

void BudgetWindowHook::expire() {
  TimePoint from = saturating_add(now_of(now_), -config_.window);
  while (!entries_.empty() && entries_.front().at <= from) entries_.pop_front();
}

CheckVerdict BudgetWindowHook::before_call(const CallContext& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  CheckVerdict verdict = check_locked(call);
  if (verdict.decision != Decision::kHalt) record_locked();
  return verdict;
}

CheckVerdict BudgetWindowHook::check(const CallContext& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  return check_locked(call);
}

void BudgetWindowHook::record_call(const CallContext& call) {
  (void)call;
  std::lock_guard<std::mutex> lock(mutex_);
  record_locked();
}

void BudgetWindowHook::record_locked() {
  expire();
  TimePoint now = now_of(now_);
  if (!entries_.empty() && now - entries_.back().from < config_.window / kWindowBuckets) {
    entries_.back().at = now;
    ++entries_.back().calls;
  } else {
    entries_.push_back(WindowEntry{now, now, 0, 1});
  }
}

CheckVerdict BudgetWindowHook::check_locked(const CallContext& call) {
  expire();
  double calls = 0;
  double cost = 0;
  for (const WindowEntry& e : entries_) {
    calls += static_cast<double>(e.calls);
    cost += e.cost_usd;
  }
  auto event = [&](Decision decision, double limit, double value, const char* what) {
    std::ostringstream reason;
    reason << what << " in the last " << static_cast<double>(config_.window.count()) / 1000.0
           << " s: " << value << " of " << limit;
    return SafetyEvent{StopReason::kProviderRateLimit,
                       decision,
                       std::string(name()),
                       reason.str(),
                       limit,
                       value,
                       now_of(now_),
                       call.node_id,
                       call.key};
  };
  if (config_.max_calls != 0 && calls >= static_cast<double>(config_.max_calls)) {
    return {Decision::kHalt,
            event(Decision::kHalt, static_cast<double>(config_.max_calls), calls, "calls")};
  }
  if (config_.max_cost_usd > 0 && cost >= config_.max_cost_usd) {
    return {Decision::kHalt, event(Decision::kHalt, config_.max_cost_usd, cost, "USD spent")};
  }
  CheckVerdict verdict;
  if (config_.degrade_at > 0) {
    // With this call counted.
    if (config_.max_calls != 0 &&
        calls + 1 >= config_.degrade_at * static_cast<double>(config_.max_calls)) {
      verdict = {
          Decision::kDegrade,
          event(Decision::kDegrade, static_cast<double>(config_.max_calls), calls + 1, "calls")};
    } else if (config_.max_cost_usd > 0 && cost >= config_.degrade_at * config_.max_cost_usd) {
      verdict = {Decision::kDegrade,
                 event(Decision::kDegrade, config_.max_cost_usd, cost, "USD spent")};
    }
  }
  return verdict;
}

void BudgetWindowHook::on_charge(const CallContext& call, double cost_usd) {
  (void)call;
  std::lock_guard<std::mutex> lock(mutex_);
  expire();
  // The cost lands on the newest call inside the window (the one that spent it), or
  // counts on its own if that call has rolled out already.
  if (entries_.empty()) {
    TimePoint now = now_of(now_);
    entries_.push_back(WindowEntry{now, now, cost_usd, 0});
  } else {
    entries_.back().cost_usd += cost_usd;
  }
}

std::vector<WindowEntry> BudgetWindowHook::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

void BudgetWindowHook::restore(std::vector<WindowEntry> entries) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.assign(entries.begin(), entries.end());
}

}  // namespace policy
