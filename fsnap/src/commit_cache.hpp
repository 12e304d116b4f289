// CommitCache — the checkpoints a repository's commits hold, parsed once per process. A
// run's newest boundaries are read at every hook event (is this call begun already,
// which calls are open), each a walk of up to a few hundred commits from the run's tip;
// a commit never changes, so its parsed form is kept by its id and the walk costs a
// lookup per commit instead of an object read and a message parse. Private to fsnap.
//
// What it keeps is what the commit says: a tag is checked against the tag's ref by the
// reader every time (a tag moves). Bounded: once full, it starts again empty.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <git2/oid.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "fsnap/checkpoint.hpp"
#include "oid_hash.hpp"

namespace fsnap {

class CommitCache {
 public:
  // A commit's checkpoint and its first parent, if it has one.
  struct Entry {
    Checkpoint checkpoint;
    std::optional<git_oid> parent;
  };

  explicit CommitCache(std::size_t capacity = 4096) : capacity_(capacity) {}

  // The entry of commit, if it is kept.
  std::optional<Entry> find(const git_oid& commit) const;
  // Keeps entry as commit's.
  void put(const git_oid& commit, Entry entry);

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<git_oid, Entry, OidHash, OidEq> entries_;
};

}  // namespace fsnap
