#include "embed/checkpoint_store.hpp"

#include <algorithm>

#include "sandbox/errors.hpp"

namespace embed {

CheckpointStore::CheckpointStore(std::size_t capacity)
    : capacity_(std::max<std::size_t>(1, capacity)) {}

void CheckpointStore::record(sandbox::ToolCheckpoint checkpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string id = checkpoint.tool_call_id;
  auto existing = by_id_.find(id);
  if (existing != by_id_.end()) {
    order_.erase(std::find(order_.begin(), order_.end(), id));
  }
  by_id_[id] = std::move(checkpoint);
  order_.push_back(id);
  while (order_.size() > capacity_) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
}

std::optional<sandbox::ToolCheckpoint> CheckpointStore::get(const std::string& tool_call_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_id_.find(tool_call_id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::optional<sandbox::CompositeSnapshot> CheckpointStore::get_pre_snapshot(
    const std::string& tool_call_id) const {
  std::optional<sandbox::ToolCheckpoint> c = get(tool_call_id);
  if (!c) return std::nullopt;
  return c->pre_snapshot;
}

std::optional<sandbox::CompositeSnapshot> CheckpointStore::get_post_snapshot(
    const std::string& tool_call_id) const {
  std::optional<sandbox::ToolCheckpoint> c = get(tool_call_id);
  if (!c) return std::nullopt;
  return c->post_snapshot;
}

std::vector<sandbox::ToolCheckpoint> CheckpointStore::list_checkpoints() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<sandbox::ToolCheckpoint> out;
  out.reserve(order_.size());
  for (const std::string& id : order_) out.push_back(by_id_.at(id));
  return out;
}

void CheckpointStore::rollback_to_tool(sandbox::ExecutionState& state,
                                       const std::string& tool_call_id) const {
  std::optional<sandbox::CompositeSnapshot> pre = get_pre_snapshot(tool_call_id);
  if (!pre) {
    throw sandbox::Error(sandbox::ErrorCode::kNotFound,
                         "no checkpoint for tool call " + fsnap::quote_input(tool_call_id));
  }
  state.restore(*pre);
}

}  // namespace embed
