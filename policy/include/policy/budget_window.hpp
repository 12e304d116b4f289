// BudgetWindowHook — a ShieldHook that limits calls and spend in a rolling window of
// time (say, at most 30 calls or $2 in any 5 minutes). Past degrade_at of either limit
// it answers kDegrade; at the limit, kHalt with a provider_rate_limit event, until
// enough of the window has rolled past. Only calls it allowed count.
//
// Calls close together share one entry (a bucket at most 1/64 of the window wide), so
// what it keeps and persists stays small however busy the window is; a bucket leaves
// the window when its newest call does — up to 1/64 of the window late, never early.
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

// Calls (or spend charged when no call was inside the window) close together in time,
// which the window counts (and persists).
struct WindowEntry {
  TimePoint from;  // the first of them
  TimePoint at;    // the newest: the entry leaves the window with it
  double cost_usd = 0;
  std::size_t calls = 1;
  friend bool operator==(const WindowEntry&, const WindowEntry&) = default;
};

// How many buckets a window is divided into, at the finest.
inline constexpr int kWindowBuckets = 64;

// Calls and spend in a rolling window.
class BudgetWindowHook : public ShieldHook {
 public:
  explicit BudgetWindowHook(BudgetWindowConfig config, Now now = {});

  std::string_view name() const override { return "BudgetWindowHook"; }
  // check(), and record_call() when the call may go.
  CheckVerdict before_call(const CallContext& call) override;
  // Whether the call may go (kAllow, kDegrade, kHalt), without counting it.
  CheckVerdict check(const CallContext& call);
  // Counts an admitted call.
  void record_call(const CallContext& call);
  void on_charge(const CallContext& call, double cost_usd) override;

  // The entries inside the window now, oldest first (to persist), and back.
  std::vector<WindowEntry> entries() const;
  void restore(std::vector<WindowEntry> entries);

 private:
  void expire();                                       // with mutex_ held
  CheckVerdict check_locked(const CallContext& call);  // with mutex_ held
  void record_locked();                                // with mutex_ held

  BudgetWindowConfig config_;
  Now now_;
  mutable std::mutex mutex_;
  std::deque<WindowEntry> entries_;
};

}  // namespace policy
