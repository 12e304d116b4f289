// What a store's runs take: the estimate that retention.max_size is held to. Private to
// fsnap.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "shadow_repo_impl.hpp"

namespace fsnap {

// The runs to drop whole, oldest first (by their newest checkpoint), so that what the
// rest keep alive takes at most max_bytes on disk; never a run in keep, nor the run of
// the newest checkpoint. The estimate: the bytes on disk of the repository's objects,
// shared out by the objects' sizes among those the refs reach (what nothing reaches is
// left out: it goes after the grace period), a run freeing what it alone reaches (its
// checkpoints, preserved HOME and session chain; what the ledger or a tag also reaches
// stays); and the copies of large files its checkpoints name, by the blocks the store
// alone holds (a hard link the workspace still has costs nothing). A run in shortened
// counts as it will be once shortened: what the trees given for it (its kept
// checkpoints', the newest ones) reach, instead of its whole chain.
std::vector<std::string> runs_over_size(
    const ShadowRepo::Impl& impl, std::uint64_t max_bytes, const std::set<std::string>& keep,
    const std::map<std::string, std::vector<git_oid>>& shortened = {});

// The names of the copies of large files the checkpoints of runs name.
std::set<std::string> large_files_named(const ShadowRepo::Impl& impl,
                                        const std::vector<std::string>& runs);

}  // namespace fsnap
