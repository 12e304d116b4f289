// Names for the objects a pack is built of. A pack stores an object as a delta against
// another only if the two meet in its delta search, which compares each object with a
// few of its neighbours in an order by type, name and size; objects without names are
// ordered by size alone, so versions of one tree rarely meet. Objects are named here as
// git's pack-objects names them, by the path they are reached at (under the kind of ref
// that reaches them: "runs/d5", "notes/ab", "sessions/tool_invoked/03.json"). Private
// to fsnap.
#pragma once

#include <string>
#include <unordered_map>

#include "shadow_repo_impl.hpp"

namespace fsnap {

using PackNames = std::unordered_map<git_oid, std::string, OidHash, OidEq>;

// The objects the refs reach, each with its name (gc prunes loose objects not among
// them; maintenance packs those among them). With only, the walk goes down through
// the objects of only and names those alone (the loose objects: an object in a pack has
// what it refers to in a pack too).
PackNames name_reachable_objects(const ShadowRepo::Impl& impl, const OidSet* only = nullptr);

}  // namespace fsnap
