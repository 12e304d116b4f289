#include "commit_cache.hpp"

namespace fsnap {

std::optional<CommitCache::Entry> CommitCache::find(const git_oid& commit) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(commit);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void CommitCache::put(const git_oid& commit, Entry entry) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.size() >= capacity_) entries_.clear();
  entries_.insert_or_assign(commit, std::move(entry));
}

}  // namespace fsnap
