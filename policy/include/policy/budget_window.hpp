// BudgetWindowHook — a ShieldHook that limits calls and spend in a rolling window of
// time (say, at most 30 calls or $2 in any 5 minutes). Past degrade_at of either limit
// it answers kDegrade; at the limit, kHalt with a provider_rate_limit event, until
// enough of the window has rolled past. Only calls it allowed count.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include "policy/shield_pipeline.hpp"

namespace policy {

// The window and its limits (0: no limit of that kind).
struct BudgetWindowConfig {
  std::chrono::milliseconds window{60'000};
  std::size_t max_calls = 0;
  double max_cost_usd = 0;
  double degrade_at = 0.8;  // fraction of a limit that answers kDegrade; 0: never
};

// One call (or a charge without a call) the window counts (and persists).
struct WindowEntry {
  TimePoint at;
  double cost_usd = 0;
  bool call = true;  // false: spend charged when no call was inside the window
  friend bool operator==(const WindowEntry&, const WindowEntry&) = default;
};

// Calls and spend in a rolling window.
class BudgetWindowHook : public ShieldHook {
 public:
  explicit BudgetWindowHook(BudgetWindowConfig config, Now now = {});

  std::string_view name() const override { return "BudgetWindowHook"; }
  HookVerdict before_call(const CallContext& call) override;
  void on_charge(const CallContext& call, double cost_usd) override;

  // The calls inside the window now, oldest first (to persist), and back.
  std::vector<WindowEntry> entries() const;
  void restore(std::vector<WindowEntry> entries);

 private:
  void expire();  // with mutex_ held

  BudgetWindowConfig config_;
  Now now_;
  mutable std::mutex mutex_;
  std::deque<WindowEntry> entries_;
};

}  // namespace policy
