// Hashing and comparing git object ids, for unordered containers keyed by them. Private
// to fsnap.
#pragma once

#include <git2/oid.h>

#include <cstddef>
#include <cstring>
#include <unordered_set>

namespace fsnap {

// An id's first bytes: ids are SHA-1s, uniform already.
struct OidHash {
  std::size_t operator()(const git_oid& o) const {
    std::size_t h;
    std::memcpy(&h, o.id, sizeof h);
    return h;
  }
};
struct OidEq {
  bool operator()(const git_oid& a, const git_oid& b) const { return git_oid_equal(&a, &b); }
};
using OidSet = std::unordered_set<git_oid, OidHash, OidEq>;

}  // namespace fsnap
