// Maintenance of a store's repository, off the hot path: loose objects (each checkpoint
// writes some) are packed — with deltas, as `git gc` would — into a new pack of their
// own, and packs are merged geometrically (as `git repack --geometric=2`: the small ones
// into one, a large pack only once the packs smaller than it weigh half as much), so
// that neither their number nor the work of one maintenance grows with the store. No maintenance
// rewrites a large pack to fold in a few objects, and one with nothing loose and no pack too many
// writes nothing. `shadowbox run` and the short-lived commands start a detached `shadowbox
// maintenance` when it is due: nobody waits for packing.
//
// Nothing is lost to a crash: a new pack is written and fsynced before any object it
// replaces is deleted, and only objects found in it are. Readers never miss an object
// (libgit2 looks in new packs when an object is gone from where it was).
//
// Thread-safety: one maintenance packs a store's loose objects at a time, and one merges
// its packs, each under a lock of its own (MaintenanceLock; a second one returns at once,
// or with MaintenanceOptions::wait waits for the first to end). A merge, which can take
// seconds, lets go of the packing lock first, so that the objects written meanwhile are
// packed by the next maintenance rather than left loose until it ends. Maintenance runs
// beside the store's writers without their lock, and takes it only to remove the
// fan-out directories it emptied.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "fsnap/posix.hpp"
#include "fsnap/store.hpp"

namespace fsnap {

// Packs of this many bytes at most, together, are merged whole by a maintenance with
// MaintenanceOptions::consolidate (a few seconds of one core at most): `shadowbox gc`.
inline constexpr std::uintmax_t kConsolidateBytes = 64ull << 20;

// A merge while an agent works (not MaintenanceOptions::geometric, not consolidate)
// merges the fewest smallest packs that bring their number down to max_packs, and more
// of them only while together they stay within this many bytes: a merge holds the packs
// it merges twice on disk until it ends, so rewriting the large ones waits for the end of
// the session or run.
inline constexpr std::uintmax_t kBusyMergeBytes = 1ull << 20;

// When maintenance is due, and how far it merges.
struct MaintenanceOptions {
  std::size_t loose_objects = 256;  // pack once about this many loose objects exist
  std::size_t max_packs = 8;        // merge packs once there are more
  // Merge every pack into one if together they are at most kConsolidateBytes, and look
  // for loose objects behind packed ones (an older version's): for `shadowbox gc`, which
  // a person asks for and waits for. It rewrites the store's largest pack, too.
  bool consolidate = false;
  // Wait for a maintenance of the store that is running to end, then maintain, rather
  // than returning at once: for a maintenance nobody waits for, which would otherwise
  // leave what came after the running one's start loose.
  bool wait = false;
  // Merge the small packs into a geometric progression (each pack at least twice the
  // size of all the smaller ones together) even when there are no more than max_packs:
  // for a maintenance nobody waits for (an agent's session or run has ended).
  bool geometric = false;
};

// What one maintenance did.
struct MaintenanceReport {
  std::size_t objects_packed = 0;  // loose objects moved into a new pack
  std::size_t packs_merged = 0;    // packs merged into one
};

// An exclusive hold on a store's maintenance locks (file locks, so between processes as
// well as threads): packs are written and the objects they replace deleted only under
// them. Whoever needs the objects on disk to stay put — gc's size estimate — holds both.
// Not re-entrant: a thread that holds it passes it on rather than taking it again.
class MaintenanceLock {
 public:
  // Takes both locks of store (packing's, then merging's), waiting for their holders to
  // release them if wait; nullopt if another holds one and !wait. Error kIo if a lock
  // file cannot be opened.
  static std::optional<MaintenanceLock> acquire(const Store& store, bool wait);
  // The same for the packing lock alone: no other maintenance is packing loose objects
  // while it is held (one may be merging packs).
  static std::optional<MaintenanceLock> acquire_packing(const Store& store, bool wait);

  MaintenanceLock(MaintenanceLock&&) noexcept = default;
  MaintenanceLock& operator=(MaintenanceLock&&) = delete;

 private:
  MaintenanceLock(UniqueFd packing, UniqueFd merging)
      : packing_(std::move(packing)), merging_(std::move(merging)) {}
  UniqueFd packing_;  // closing it releases the lock
  UniqueFd merging_;  // not held by acquire_packing
};

// About how many loose objects the store's repository has: 16 fan-out directories of
// the 256 counted and scaled, as `git gc --auto` does with one (cheap enough for every
// command).
std::size_t estimate_loose_objects(const Store& store);

// Whether the store's repository has any loose object (reads each fan-out directory
// until it finds one).
bool has_loose_objects(const Store& store);

// Whether maintenance is due by options: about options.loose_objects are loose, or there
// are more than options.max_packs packs and no maintenance is merging them already.
bool maintenance_due(const Store& store, const MaintenanceOptions& options);

// Packs every loose object the refs reach into a new pack, then, if there are more
// than options.max_packs packs (or with options.geometric), merges the smallest ones
// geometrically (with options.consolidate: every pack, if they are small enough) unless
// another maintenance is merging them (with options.wait: once it has ended); then
// removes the fan-out directories left empty. Writes nothing when nothing is loose and
// the packs are as they should be. nullopt if another maintenance of the store is packing
// loose objects (unless options.wait). Throws kNotFound for a store removed meanwhile
// (whose directories it does not make again).
std::optional<MaintenanceReport> maintain(const Store& store, const MaintenanceOptions& options);

// Rewrites each pack older than grace that holds objects the refs no longer reach (the
// checkpoints gc dropped) without them: their reachable objects go into one new pack,
// written and fsynced before the old ones are deleted; a pack that holds nothing
// reachable is deleted first, writing nothing. A pack younger than grace is
// left for a later gc: an object in it may belong to a checkpoint being recorded.
// Returns the number of objects dropped. The caller holds the store lock (no checkpoint
// is being written meanwhile) and the maintenance lock, held.
std::size_t drop_unreachable_packed(const Store& store, std::chrono::seconds grace,
                                    const MaintenanceLock& held);

// Removes, from objects/pack and objects, the files a writer killed part-way leaves:
// temporary packs and indexes (libgit2's `pack_git2_*`, shadowbox's and git's
// `tmp_pack_*`, `tmp_idx_*`, `tmp_rev_*`), lock and temporary files (`*.lock`, `*.tmp`,
// `*.tmp-<pid>`), a `pack-*.idx` or `pack-*.pack` without the other half, and
// half-written loose objects (`objects/tmp_object_git2_*`, and `objects/tmp_object_stored_*`
// of content stored uncompressed) — each only once it is older than grace. Every writer
// of shadowbox holds the store lock (captures, fetches) or the maintenance lock
// (packing), and the caller holds both, so none of these belongs to a live writer of
// shadowbox; grace protects a writer that takes no lock (a `git` run on
// the store by hand). Nothing a reader uses is removed: a pack counts only with its
// index, and libgit2 never reads a temporary file. Returns the number of files removed.
std::size_t remove_abandoned_files(const Store& store, std::chrono::seconds grace,
                                   const MaintenanceLock& held);

}  // namespace fsnap
