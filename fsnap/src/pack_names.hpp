// Names for the objects a pack is built of. A pack stores an object as a delta against
// another only if the two meet in its delta search, which compares each object with a
// few of its neighbours in an order by type, name and size; objects without names are
// ordered by size alone, so versions of one tree rarely meet. Objects are named here as
// git's pack-objects names them, by the path they are reached at (under the kind of ref
// that reaches them: "runs/d5", "notes/ab", "sessions/tool_invoked/03.json"), and kept
// in the order of the walk, newest first: objects of equal type, name and size meet in
// the order they were given, so versions of one tree of one size (a workspace's root,
// whose entries keep their lengths) meet their neighbours in time, not strangers from
// far back in the run with many more entries changed. Private to fsnap.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "shadow_repo_impl.hpp"

namespace fsnap {

// Reachable objects with their names, in the order a walk from the refs met them.
struct PackNames {
  std::unordered_map<git_oid, std::string, OidHash, OidEq> names;
  std::vector<git_oid> order;  // every key of names, newest first

  bool contains(const git_oid& oid) const { return names.count(oid) != 0; }
};

// A ref's full name and the object it names (a symbolic ref resolved).
using RefTip = std::pair<std::string, git_oid>;

// Every ref of the repository, resolved.
std::vector<RefTip> ref_tips(const ShadowRepo::Impl& impl);

// The objects tips reach, each with its name (the kind of its tip's ref and its path),
// in walk order. With only, the walk goes down through the objects of only and names
// those alone.
PackNames name_objects_from(const ShadowRepo::Impl& impl, const std::vector<RefTip>& tips,
                            const OidSet* only = nullptr);

// The objects the refs reach, each with its name (gc prunes loose objects not among
// them; maintenance packs those among them). With only, as name_objects_from (the
// loose objects: an object in a pack has what it refers to in a pack too).
PackNames name_reachable_objects(const ShadowRepo::Impl& impl, const OidSet* only = nullptr);
// The same from tips read earlier (ref_tips).
PackNames name_reachable_objects(const ShadowRepo::Impl& impl, std::vector<RefTip> tips,
                                 const OidSet* only);

}  // namespace fsnap
