// BudgetTracker — tokens and cost consumed by a run, as a snapshotable resource:
// a failed tool call that consumed budget gives it back on rollback only if the
// caller restores the tracker (ExecutionState does, with every other resource).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <mutex>
#include <string_view>

#include "fsnap/snapshot.hpp"

namespace embed {

// The counters of a BudgetTracker at one moment.
struct BudgetSnapshot {
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  double cost_usd = 0;
  std::uint64_t tool_calls = 0;
  friend bool operator==(const BudgetSnapshot&, const BudgetSnapshot&) = default;
};

// Counts what a run consumed.
class BudgetTracker : public fsnap::Snapshotable<BudgetSnapshot> {
 public:
  // Registers BudgetSnapshot's JSON codec ("budget"), so composite snapshots that hold
  // one persist.
  BudgetTracker();

  void consume(std::uint64_t input_tokens, std::uint64_t output_tokens, double cost_usd) {
    std::lock_guard<std::mutex> lock(mutex_);
    state_.input_tokens += input_tokens;
    state_.output_tokens += output_tokens;
    state_.cost_usd += cost_usd;
  }
  void count_tool_call() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++state_.tool_calls;
  }
  BudgetSnapshot current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return state_;
  }
  BudgetSnapshot snapshot(std::string_view) override { return current(); }
  void restore(const BudgetSnapshot& snapshot) override {
    std::lock_guard<std::mutex> lock(mutex_);
    state_ = snapshot;
  }

 private:
  mutable std::mutex mutex_;
  BudgetSnapshot state_;
};

// Registers BudgetSnapshot's JSON codec in ResourceSnapshotCodecs. Idempotent; every
// BudgetTracker calls it, and a process that only reads such snapshots calls it first.
void register_budget_codec();

}  // namespace embed
