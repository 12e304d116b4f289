// SessionTrees — session snapshots kept in a store's repository as git trees, so that a
// checkpoint's ledger record costs what its call changed, not the whole session. The
// tree of one snapshot:
//
//   head.json                  parent, children, tags and, per slice, its type,
//                              policy, number of items and, for a slice a window cut,
//                              the position of its first item ("first")
//   <type>/                    one tree per non-empty slice, holding its items in order
//                              (the type's name, bytes other than [A-Za-z0-9._-] as %XX):
//       00.json … 31.json      up to 32 blobs of up to 32 items each (a JSON array, one
//                              item per line): blob k holds the positions [32k, 32k+32),
//       00/ … 31/              or, for positions past 1,024, subtrees of such blobs (and
//                              so on: a trie of fan-out 32)
//
// Positions are those of the slice's vector (statekit::PersistentVector::start): a
// window that drops the oldest items moves the first position on, and the blobs and
// subtrees wholly before it are left out (the first blob holds the items from it).
// Equal items at equal positions give equal objects, so an unchanged slice, and each
// full chunk of a growing (or sliding) LOG slice, is one object shared by every
// snapshot that holds it. What tells apart snapshots of equal contents (a
// SessionTrees::SessionStamp: the snapshot's id, session and time) is kept beside the tree, in the
// ledger record, so a checkpoint whose session did not change since the last one writes no session
// object at all. The note of each checkpoint names its session tree, and anchors it beside the
// notes as session-<run> (fsnap::Note::anchor_name): the notes' history keeps every session tree
// reachable for git and for maintenance, without a commit of its own (gc, which starts
// that history afresh, keeps those of the kept records on refs/shadowbox/sessions/<run>):
//
//   git show <session_tree>:head.json
//   git show refs/notes/shadowbox:session-<run>/head.json    the run's newest
//
// A SessionTrees remembers the chunks it wrote or read last, by the identity of their
// items, so writing a snapshot after the previous one encodes only the chunks that
// changed, and reading back the snapshot just written decodes nothing.
//
// Thread-safety: every method may be called from any thread (calls are serialised).
// Writers hold the store lock, as for any write to the repository.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fsnap/checkpoint.hpp"
#include "fsnap/shadow_repo.hpp"
#include "sandbox/session.hpp"

namespace sandbox {

// Writes and reads session snapshots as trees, remembering recent chunks.
class SessionTrees {
 public:
  // What a session tree leaves out of its snapshot.
  struct SessionStamp {
    std::string id;          // SessionSnapshot::id
    std::string session_id;  // SessionSnapshot::session_id
    std::chrono::system_clock::time_point created_at;
    friend bool operator==(const SessionStamp&, const SessionStamp&) = default;

    static SessionStamp of(const SessionSnapshot& snapshot) {
      return {snapshot.id, snapshot.session_id, snapshot.created_at};
    }
  };

  SessionTrees();
  ~SessionTrees();
  SessionTrees(const SessionTrees&) = delete;
  SessionTrees& operator=(const SessionTrees&) = delete;

  // Writes snapshot as a tree in repo (objects already there are not written again) and
  // returns the tree's id. A slice type without a codec is Error kInvalidArgument.
  std::string write(fsnap::ShadowRepo& repo, const SessionSnapshot& snapshot);
  // The names of the slice types a tree written by write holds items of, read from its
  // head.json alone (nothing decoded). Error kCorrupt as read.
  std::vector<std::string> slice_types(const fsnap::ShadowRepo& repo, std::string_view tree);
  // note, with tree (written by write) anchored beside the notes for the session of
  // run: so recorded, the tree stays reachable.
  static fsnap::Note anchored(fsnap::Note note, const std::string& run, const std::string& tree);
  // The snapshot a tree written by write holds, stamped. Error kCorrupt for a tree that
  // is not one (or is missing); SnapshotMismatchError for a slice type this process has
  // not registered.
  SessionSnapshot read(const fsnap::ShadowRepo& repo, std::string_view tree,
                       const SessionStamp& stamp);
  // The same snapshot as SessionSnapshot::to_json would give it, built from the stored
  // items as they are, so slice types this process has not registered are shown too.
  // Error kCorrupt as read.
  std::string read_json(const fsnap::ShadowRepo& repo, std::string_view tree,
                        const SessionStamp& stamp);

 private:
  struct Memory;
  std::mutex mutex_;
  std::unique_ptr<Memory> memory_;
};

}  // namespace sandbox
