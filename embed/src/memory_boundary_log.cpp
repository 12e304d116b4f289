#include "embed/memory_boundary_log.hpp"

#include <algorithm>

namespace embed {

namespace {

// The call a boundary ends: a post-tool boundary, or the one recorded after a rollback.
bool ends_call(const sandbox::Boundary& b) {
  const sandbox::SnapshotMetadata& m = b.snapshot.metadata;
  return !m.tool_call_id.empty() && m.outcome.success.has_value() &&
         (m.phase == fsnap::Phase::kPostTool || m.phase == fsnap::Phase::kCheckpoint);
}

}  // namespace

MemoryBoundaryLog::MemoryBoundaryLog(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

std::unique_ptr<sandbox::BoundaryLog::StepHold> MemoryBoundaryLog::begin_step(
    sandbox::ExecutionState&) {
  return nullptr;  // the state is this process's own: nothing to hold or reload
}

void MemoryBoundaryLog::remember(const sandbox::Boundary& boundary) {
  std::lock_guard<std::mutex> lock(mutex_);
  const sandbox::SnapshotMetadata& m = boundary.snapshot.metadata;
  Fact fact;
  fact.sequence = next_sequence_++;
  fact.later.fact.phase = m.phase;
  fact.later.fact.call_id = m.tool_call_id;
  fact.later.fact.tool_name = m.tool_name;
  fact.later.fact.checkpoint_id = boundary.record.checkpoint_id;
  fact.later.recorded_at = boundary.snapshot.created_at;
  fact.later.trees = boundary.snapshot.file_trees();
  fact.later.previous_trees = last_trees_;
  fact.later.skipped = boundary.snapshot.file_skipped();
  fact.later.previous_skipped = last_skipped_;
  fact.later.fact.changed_files =
      fact.later.trees != last_trees_ || fact.later.skipped != last_skipped_;
  last_trees_ = fact.later.trees;
  last_skipped_ = fact.later.skipped;
  facts_.push_back(std::move(fact));

  if (m.phase == fsnap::Phase::kPreTool) {
    calls_[m.tool_call_id] = Call{boundary, facts_.back().sequence};
  } else if (ends_call(boundary)) {
    auto call = calls_.find(m.tool_call_id);
    if (call != calls_.end() && !call->second.pre.ended) {
      call->second.pre.ended = true;
      call->second.pre.record.set_outcome(m.outcome);
      ended_.push_back(m.tool_call_id);
    }
  }

  // Bounded: the oldest ended calls go, and facts older than every open call.
  while (ended_.size() > capacity_) {
    auto old = calls_.find(ended_.front());
    if (old != calls_.end() && old->second.pre.ended) calls_.erase(old);
    ended_.pop_front();
  }
  std::uint64_t oldest_open = next_sequence_;
  for (const auto& [id, call] : calls_) {
    if (!call.pre.ended) oldest_open = std::min(oldest_open, call.sequence);
  }
  while (facts_.size() > capacity_ && facts_.front().sequence < oldest_open) facts_.pop_front();
}

void MemoryBoundaryLog::forget(const std::string& call_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  calls_.erase(call_id);
}

std::optional<sandbox::Boundary> MemoryBoundaryLog::pre_tool(const std::string& call_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = calls_.find(call_id);
  if (it == calls_.end()) return std::nullopt;
  return it->second.pre;
}

std::vector<std::string> MemoryBoundaryLog::open_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::uint64_t, std::string>> open;
  for (const auto& [id, call] : calls_) {
    if (!call.pre.ended) open.emplace_back(call.sequence, id);
  }
  std::sort(open.begin(), open.end());
  std::vector<std::string> out;
  for (auto& [sequence, id] : open) out.push_back(std::move(id));
  return out;
}

std::vector<sandbox::BoundaryLog::LaterBoundary> MemoryBoundaryLog::since(
    const sandbox::Boundary& pre) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto call = calls_.find(pre.snapshot.metadata.tool_call_id);
  std::uint64_t after = call != calls_.end() ? call->second.sequence : next_sequence_;
  std::vector<sandbox::BoundaryLog::LaterBoundary> out;
  for (const Fact& f : facts_) {
    if (f.sequence > after && f.later.fact.phase != fsnap::Phase::kSafety) {
      out.push_back(f.later);
    }
  }
  return out;
}

}  // namespace embed
