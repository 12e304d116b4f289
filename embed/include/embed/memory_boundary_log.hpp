// MemoryBoundaryLog — the tool boundaries of a run kept in memory, for the in-process
// ToolRunner: the pre-tool boundary of each recent call and the facts a rollback
// decision needs about what came after it. Keeps the newest `capacity` boundaries;
// calls still open are always kept.
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>

#include "sandbox/boundary_log.hpp"

namespace embed {

// A BoundaryLog in memory.
class MemoryBoundaryLog : public sandbox::BoundaryLog {
 public:
  explicit MemoryBoundaryLog(std::size_t capacity = 10000);

  std::unique_ptr<sandbox::BoundaryLog::StepHold> begin_step(
      sandbox::ExecutionState& state) override;
  void remember(const sandbox::Boundary& boundary) override;
  void forget(const std::string& call_id) override;
  std::optional<sandbox::Boundary> pre_tool(const std::string& call_id) const override;
  std::vector<std::string> open_calls() const override;
  std::vector<sandbox::BoundaryLog::LaterBoundary> since(
      const sandbox::Boundary& pre) const override;

 private:
  struct Call {
    sandbox::Boundary pre;
    std::uint64_t sequence = 0;  // of its pre-tool boundary
  };
  struct Fact {
    std::uint64_t sequence = 0;
    sandbox::BoundaryLog::LaterBoundary later;
  };

  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::uint64_t next_sequence_ = 0;
  std::map<std::string, std::string> last_trees_;  // files of the newest boundary
  std::map<std::string, std::vector<fsnap::SkippedPath>> last_skipped_;  // and what it skipped
  std::deque<Fact> facts_;                                               // oldest first
  std::map<std::string, Call> calls_;                                    // by call id
  std::deque<std::string> ended_;  // ended calls, oldest first
};

}  // namespace embed
