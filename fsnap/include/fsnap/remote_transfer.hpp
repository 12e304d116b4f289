// Moving refs of a store's repository to and from a git remote, through libgit2's
// transports: a local path or file://, git://, ssh:// (keys from ssh-agent). Only the
// objects the other side lacks travel. A push never rewrites the remote's history
// unless a transfer says force.
//
// shadowbox's executable does not load TLS certificates (cli/libgit2_no_ca_bundle.cpp),
// so http(s):// remotes are refused with a message saying so.
//
// Thread-safety: one call at a time per ShadowRepo. A fetch writes objects and refs:
// hold the store's lock.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "fsnap/shadow_repo.hpp"

namespace fsnap {

// One ref to move: from (a ref on the sending side) to (a ref on the receiving side).
struct RefTransfer {
  std::string from;  // "" in a push: delete the receiving ref
  std::string to;
  bool force = false;  // let the receiving ref move to a commit that does not descend from it
};

// What a push did.
struct PushReport {
  std::vector<std::string> updated;             // receiving refs now at the sent commit
  std::map<std::string, std::string> rejected;  // receiving ref -> why it was not updated
  std::size_t objects = 0;                      // objects sent
  std::size_t bytes = 0;                        // pack bytes sent
};

// The remote's refs whose names start with prefix: name -> object id. Error kIo when
// the remote cannot be reached (the message names it).
std::map<std::string, std::string> remote_refs(ShadowRepo& repo, const std::string& url,
                                               const std::string& prefix);

// Pushes each local ref `from` to the remote's `to` (or deletes `to`, for an empty
// `from`), in one connection. A local ref that does not exist is skipped. A ref the remote refuses
// (it is not a fast-forward, or the remote's hooks declined it) is in the report's rejected, the
// others are pushed. Error kIo when the remote cannot be reached.
PushReport push_refs(ShadowRepo& repo, const std::string& url,
                     const std::vector<RefTransfer>& transfers);

// Fetches each remote ref `from` into the local ref `to` (created, or moved — even when
// not a fast-forward, if force). The remote is not trusted: what it sends lands in
// refs of its own (refs/shadowbox/incoming/) until every commit new to `to` has been
// checked — each a commit whose trees hold only names a restore may write (no '..',
// no '/', no git directory, no name twice) — and no local ref moves otherwise
// (kPathEscape or kCorrupt naming the commit and the path). Error kNotFound naming the
// refs the remote lacks (nothing is fetched then), kIo when it cannot be reached.
void fetch_refs(ShadowRepo& repo, const std::string& url,
                const std::vector<RefTransfer>& transfers);

}  // namespace fsnap
