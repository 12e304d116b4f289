#include "fsnap/maintenance.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/filesystem.hpp>

#include "fsnap/atomic_file.hpp"
#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "fsnap/store_layout.hpp"
#include "git_handles.hpp"
#include "pack_names.hpp"
#include "retention_age.hpp"
#include "shadow_repo_impl.hpp"
#include "stored_blobs.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

using Packbuilder = git::Handle<git_packbuilder, git_packbuilder_free>;

// Calls visit(oid, file) for each loose object of the repository at objects until it
// returns false.
template <typename Visit>
void visit_loose_objects(const fs::path& objects, Visit visit) {
  boost::system::error_code ec;
  for (fs::directory_iterator dir(objects, ec), end; !ec && dir != end; dir.increment(ec)) {
    std::string fanout = dir->path().filename().string();
    if (fanout.size() != 2 || !is_hex(fanout) || !fs::is_directory(dir->path())) continue;
    boost::system::error_code inner;
    for (fs::directory_iterator it(dir->path(), inner); !inner && it != end; it.increment(inner)) {
      std::string rest = it->path().filename().string();
      if (rest.size() != 38 || !is_hex(rest)) continue;  // a temporary file being written
      git_oid oid;
      if (git_oid_fromstr(&oid, (fanout + rest).c_str()) == 0 && !visit(oid, it->path())) return;
    }
  }
}

// The loose objects of the repository at objects, with their files.
std::vector<std::pair<git_oid, fs::path>> loose_objects(const fs::path& objects) {
  std::vector<std::pair<git_oid, fs::path>> out;
  visit_loose_objects(objects, [&](const git_oid& oid, const fs::path& file) {
    out.emplace_back(oid, file);
    return true;
  });
  return out;
}

// Writes a pack of objects into pack_dir, durably; returns its .idx path ("" if empty).
// Objects are compared for deltas by their names, and given in the order the walk met
// them (an object the refs do not reach comes last, compared by size alone).
fs::path write_pack(git_repository* repo, const OidSet& objects, const PackNames& names,
                    const fs::path& pack_dir) {
  if (objects.empty()) return {};
  git_packbuilder* raw = nullptr;
  git::check(git_packbuilder_new(&raw, repo), "cannot start a pack");
  Packbuilder pb(raw);
  git_packbuilder_set_threads(pb.get(), 1);
  for (const git_oid& oid : names.order) {
    if (objects.count(oid) == 0) continue;
    git::check(git_packbuilder_insert(pb.get(), &oid, names.names.at(oid).c_str()),
               "cannot add an object to a pack");
  }
  for (const git_oid& oid : objects) {
    if (names.contains(oid)) continue;
    git::check(git_packbuilder_insert(pb.get(), &oid, nullptr), "cannot add an object to a pack");
  }
  git::check(git_packbuilder_write(pb.get(), pack_dir.c_str(), 0, nullptr, nullptr),
             "cannot write a pack in " + pack_dir.string());
  std::string name = std::string("pack-") + git_packbuilder_name(pb.get());
  fs::path pack = pack_dir / (name + ".pack");
  fs::path idx = pack_dir / (name + ".idx");
  fsync_path(pack);
  fsync_path(idx);
  fsync_path(pack_dir);
  return idx;
}

// An object database of the one pack whose index is idx.
git::Odb pack_odb(const fs::path& idx) {
  git_odb* raw = nullptr;
  git::check(git_odb_new(&raw), "cannot create object database");
  git::Odb odb(raw);
  git_odb_backend* backend = nullptr;
  git::check(git_odb_backend_one_pack(&backend, idx.c_str()), "cannot read " + idx.string());
  git::check(git_odb_add_backend(odb.get(), backend, 1), "cannot read " + idx.string());
  return odb;
}

int collect(const git_oid* oid, void* payload) {
  static_cast<OidSet*>(payload)->insert(*oid);
  return 0;
}

struct Pack {
  fs::path idx;
  std::uintmax_t size;
};

std::vector<Pack> packs_of(const fs::path& pack_dir) {
  std::vector<Pack> out;
  boost::system::error_code ec;
  for (fs::directory_iterator it(pack_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".idx") continue;
    fs::path pack = fs::path(it->path()).replace_extension(".pack");
    boost::system::error_code size_ec;
    std::uintmax_t size = fs::file_size(pack, size_ec);
    if (!size_ec && !fs::exists(fs::path(it->path()).replace_extension(".keep"))) {
      out.push_back({it->path(), size});
    }
  }
  std::sort(out.begin(), out.end(), [](const Pack& a, const Pack& b) { return a.size < b.size; });
  return out;
}

// The objects of the pack whose index is idx.
OidSet objects_of(const fs::path& idx) {
  OidSet out;
  git::Odb odb = pack_odb(idx);
  git::check(git_odb_foreach(odb.get(), collect, &out), "cannot list " + idx.string());
  return out;
}

// Deletes a pack (its .pack first: without it, the index alone is never used).
void remove_pack(const fs::path& idx) {
  boost::system::error_code ec;
  fs::remove(fs::path(idx).replace_extension(".pack"), ec);
  fs::remove(idx, ec);
  fs::remove(fs::path(idx).replace_extension(".rev"), ec);
}

// Throws unless the pack whose index is idx holds every one of objects.
void check_pack_holds(const fs::path& idx, const OidSet& objects) {
  if (objects.empty()) return;
  git::Odb check = pack_odb(idx);
  for (const git_oid& oid : objects) {
    if (!git_odb_exists(check.get(), &oid)) {
      throw Error(ErrorCode::kCorrupt,
                  "a new pack lacks " + git::to_hex(oid) + "; nothing removed");
    }
  }
}

// Each pack of a geometric progression is at least this many times the size of all the
// packs smaller than it together (git's `repack --geometric=2` keeps its packs so).
constexpr std::uintmax_t kGeometricFactor = 2;

// How many of packs (smallest first) to merge into one so that every pack left is at
// least kGeometricFactor times the size of all the packs smaller than it together: the
// packs up to the largest one that is not. 0 when they are a geometric progression
// already. A pack is rewritten only once the packs smaller than it add up to half of
// it, so a byte is rewritten a logarithmic number of times over the life of the store,
// and the packs number about log2 of the store's size over the smallest one's.
std::size_t geometric_split(const std::vector<Pack>& packs) {
  std::vector<std::uintmax_t> below(packs.size(), 0);  // the sizes of the smaller packs
  for (std::size_t i = 1; i < packs.size(); ++i) below[i] = below[i - 1] + packs[i - 1].size;
  for (std::size_t i = packs.size(); i-- > 0;) {
    if (packs[i].size < kGeometricFactor * below[i]) return i + 1;
  }
  return 0;
}

// How many of packs (smallest first) weigh at most bytes together.
std::size_t packs_within(const std::vector<Pack>& packs, std::uintmax_t bytes) {
  std::size_t n = 0;
  for (std::uintmax_t total = 0; n < packs.size() && total + packs[n].size <= bytes; ++n) {
    total += packs[n].size;
  }
  return n;
}

// Merges the smallest packs into a geometric progression (geometric_split) when there
// are more than max_packs, or always with options.geometric; more of the smallest if
// that still leaves more than max_packs. A large pack is not rewritten to fold in a few
// small ones; without options.geometric (while an agent works), no more than
// kBusyMergeBytes are merged beyond the fewest packs that bring their number down. With
// consolidate, a store whose packs are small enough is repacked whole: one pack compares every
// version of a tree with its neighbours in time, where packs merged piecemeal store some whole.
std::size_t merge_packs(const ShadowRepo::Impl& impl, const fs::path& pack_dir,
                        const MaintenanceOptions& options) {
  std::vector<Pack> packs = packs_of(pack_dir);
  std::uintmax_t total = 0;
  for (const Pack& p : packs) total += p.size;
  bool whole = options.consolidate && packs.size() > 1 && total <= kConsolidateBytes;
  if (!whole) {
    bool too_many = packs.size() > options.max_packs;
    std::size_t split = too_many || options.geometric ? geometric_split(packs) : 0;
    if (!options.geometric) split = std::min(split, packs_within(packs, kBusyMergeBytes));
    if (too_many) split = std::max(split, packs.size() + 1 - options.max_packs);
    packs.resize(std::min(split, packs.size()));
    if (packs.size() < 2) return 0;
  }
  OidSet objects;
  for (const Pack& p : packs) objects.merge(objects_of(p.idx));
  // Named by a walk of everything the refs reach: an object named only by a walk
  // through the merged packs would miss the names of those reached through the others,
  // and be compared for deltas by its size alone (a store half again as large).
  fs::path merged = write_pack(impl.repo.get(), objects, name_reachable_objects(impl), pack_dir);
  // The old packs go only once the new one holds everything they held.
  check_pack_holds(merged, objects);
  for (const Pack& p : packs) {
    if (p.idx != merged) remove_pack(p.idx);
  }
  return packs.size();
}

// Loose objects spread evenly over the 256 fan-out directories: these 16 ("07", "17",
// ... "f7") are counted and the count scaled, as `git gc --auto` does with one. One
// directory holds one object in 256: a threshold of 256 met on the first object found
// there came anywhere from 10 to 1,000 objects late (a 4 KiB block each); 16 hold 16 of
// the 256, which makes the count good to about a quarter.
constexpr std::size_t kSampledFanouts = 16;
constexpr std::size_t kSampleScale = 256 / kSampledFanouts;

bool is_sampled_fanout(const std::string& name) {
  return name.size() == 2 && name[1] == '7' && is_hex(name);
}

// The file names in the sampled fan-out directories.
std::vector<std::string> sampled_loose_objects(const Store& store) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kSampledFanouts; ++i) {
    std::string fanout = {"0123456789abcdef"[i], '7'};
    boost::system::error_code ec;
    for (fs::directory_iterator it(store.repo_dir() / "objects" / fanout, ec), end;
         !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string());
    }
  }
  return names;
}

// The sampled loose objects the last maintenance left loose, one file name per line:
// garbage waiting for gc's grace period, large blobs. They do not make maintenance due
// again, or every command would start one that packs nothing.
std::unordered_set<std::string> leftovers(const Store& store) {
  std::unordered_set<std::string> names;
  try {
    std::istringstream in(
        read_small_file(layout::maintenance_leftovers_file(store.dir())).value_or(""));
    for (std::string line; std::getline(in, line);) names.insert(line);
  } catch (const Error&) {
    // Unreadable: every loose object counts, as before any maintenance.
  }
  return names;
}

}  // namespace

std::size_t estimate_loose_objects(const Store& store) {
  return sampled_loose_objects(store).size() * kSampleScale;
}

bool has_loose_objects(const Store& store) {
  bool any = false;
  visit_loose_objects(store.repo_dir() / "objects", [&](const git_oid&, const fs::path&) {
    any = true;
    return false;
  });
  return any;
}

namespace {

// Takes an exclusive lock on fd, waiting for its holder if wait; false (errno set) if it
// is not taken.
bool lock_exclusive(int fd, bool wait) {
  int rc = 0;
  do {
    rc = ::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  return rc == 0;
}

// An exclusive lock on file, waiting for its holder if wait; nullopt if another holds it
// and !wait.
std::optional<UniqueFd> lock_file(const fs::path& file, bool wait) {
  UniqueFd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) throw system_error("cannot open " + file.string(), errno);
  if (!lock_exclusive(fd.get(), wait)) return std::nullopt;
  return fd;
}

// Whether a maintenance is merging the store's packs now (one that merges has made the
// lock file; nothing is created here, and a file that cannot be read means none).
bool merge_running(const Store& store) {
  UniqueFd fd(
      ::open(layout::maintenance_merge_lock_file(store.dir()).c_str(), O_RDONLY | O_CLOEXEC));
  return fd.valid() && !lock_exclusive(fd.get(), /*wait=*/false) && errno == EWOULDBLOCK;
}

// Removes the fan-out directories of objects that are empty (each takes a block on
// disk: 256 of them, 1 MiB on ext4, once loose objects have come and gone), as `git
// prune` does. Under the store's lock: a writer of shadowbox puts an object into its
// directory only under it (libgit2 creates the directory, then renames the object into
// it). The caller holds no maintenance lock (a holder of the store lock may wait for one).
void remove_empty_fanouts(const Store& store) {
  StoreLock lock = store.lock();
  fs::path objects = store.repo_dir() / "objects";
  boost::system::error_code ec;
  for (fs::directory_iterator dir(objects, ec), end; !ec && dir != end; dir.increment(ec)) {
    std::string name = dir->path().filename().string();
    if (name.size() == 2 && is_hex(name)) ::rmdir(dir->path().c_str());  // only if empty
  }
}

}  // namespace

std::optional<MaintenanceLock> MaintenanceLock::acquire(const Store& store, bool wait) {
  std::optional<UniqueFd> packing = lock_file(layout::maintenance_lock_file(store.dir()), wait);
  if (!packing) return std::nullopt;
  std::optional<UniqueFd> merging =
      lock_file(layout::maintenance_merge_lock_file(store.dir()), wait);
  if (!merging) return std::nullopt;
  return MaintenanceLock(std::move(*packing), std::move(*merging));
}

std::optional<MaintenanceLock> MaintenanceLock::acquire_packing(const Store& store, bool wait) {
  std::optional<UniqueFd> packing = lock_file(layout::maintenance_lock_file(store.dir()), wait);
  if (!packing) return std::nullopt;
  return MaintenanceLock(std::move(*packing), UniqueFd());
}

bool maintenance_due(const Store& store, const MaintenanceOptions& options) {
  std::unordered_set<std::string> left = leftovers(store);
  std::size_t pending = 0;
  for (const std::string& name : sampled_loose_objects(store)) pending += left.count(name) == 0;
  if (pending * kSampleScale >= options.loose_objects) return true;
  boost::system::error_code ec;
  std::size_t packs = 0;
  for (fs::directory_iterator it(store.repo_dir() / "objects" / "pack", ec), end; !ec && it != end;
       it.increment(ec)) {
    packs += it->path().extension() == ".idx";
  }
  return packs > options.max_packs && !merge_running(store);
}

std::optional<MaintenanceReport> maintain(const Store& store, const MaintenanceOptions& options) {
  std::optional<MaintenanceLock> lock = MaintenanceLock::acquire_packing(store, options.wait);
  if (!lock) return std::nullopt;
  fs::path git_dir = store.repo_dir();
  ShadowRepo shadow = ShadowRepo::open(git_dir, false);
  const ShadowRepo::Impl& impl = shadow.impl();
  git_repository* repo = impl.repo.get();
  fs::path pack_dir = git_dir / "objects" / "pack";
  // A maintenance runs detached and may outlive its store (removed with its workspace,
  // or by hand): what is gone is not made again. Only the pack directory is made, in
  // the objects directory that must be there.
  boost::system::error_code gone;
  fs::create_directory(pack_dir, gone);
  if (!fs::is_directory(pack_dir, gone)) {
    throw Error(ErrorCode::kNotFound,
                "the store " + store.dir().string() + " is gone: there is nothing to maintain");
  }

  MaintenanceReport report;
  // The refs are read before the loose objects are listed, so that the listing holds
  // every loose object they reach: all were written before it began. (Refs read after
  // it could name a commit written during the listing whose parent, in a fan-out
  // directory listed before the parent was written, would be missed: the commit would
  // be packed and its parent left loose behind it, where the walk below, which stops
  // at packed objects, never finds it again.)
  std::vector<RefTip> tips = ref_tips(impl);
  std::vector<std::pair<git_oid, fs::path>> loose = loose_objects(git_dir / "objects");
  std::vector<fs::path> sampled;
  for (const auto& [oid, file] : loose) {
    if (is_sampled_fanout(file.parent_path().filename().string())) sampled.push_back(file);
  }
  // Only what the refs reach is packed (as `git repack` does): an object a checkpoint is
  // writing right now, or garbage waiting for gc's grace period, stays loose. Nor do
  // large blobs: only loose objects can be streamed back (kStreamedBlobSize). A
  // consolidating maintenance walks everything the refs reach, which also finds loose
  // objects that an older version left behind packed ones.
  OidSet loose_ids;
  for (const auto& [oid, file] : loose) loose_ids.insert(oid);
  PackNames reachable =
      name_reachable_objects(impl, std::move(tips), options.consolidate ? nullptr : &loose_ids);
  std::erase_if(loose, [&](const std::pair<git_oid, fs::path>& object) {
    std::size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    return !reachable.contains(object.first) ||
           git_odb_read_header(&size, &type, impl.odb.get(), &object.first) != 0 ||
           (type == GIT_OBJECT_BLOB && size > kStreamedBlobSize);
  });
  OidSet ids;
  for (const auto& [oid, file] : loose) ids.insert(oid);
  if (!ids.empty()) {
    fs::path idx = write_pack(repo, ids, reachable, pack_dir);
    git::Odb packed = pack_odb(idx);
    for (const auto& [oid, file] : loose) {
      // Only what the new pack holds goes.
      if (git_odb_exists(packed.get(), &oid) && ::unlink(file.c_str()) == 0)
        ++report.objects_packed;
    }
    // Empty fan-out directories go at the end, under the store's lock (a writer may be
    // about to put an object there).
  }
  std::string left;
  boost::system::error_code ec;
  for (const fs::path& file : sampled) {
    if (fs::exists(file, ec)) left += file.filename().string() + "\n";
  }
  write_file_atomically(layout::maintenance_leftovers_file(store.dir()), left, 0600);
  // A merge compares every object of the packs it merges for deltas again: seconds for a
  // large one, during which the calls of a run go on writing objects. It holds the merge
  // lock alone, so that a maintenance started meanwhile packs them (else they would pile
  // up loose, a block each, until the merge ends). The locks are taken in this order
  // only, and a merge never waits for the packing lock: no deadlock.
  std::optional<UniqueFd> merging =
      lock_file(layout::maintenance_merge_lock_file(store.dir()), options.wait);
  lock.reset();
  if (merging) report.packs_merged = merge_packs(impl, pack_dir, options);
  merging.reset();
  remove_empty_fanouts(store);
  return report;
}

std::size_t drop_unreachable_packed(const Store& store, std::chrono::seconds grace,
                                    const MaintenanceLock& /*held*/) {
  fs::path git_dir = store.repo_dir();
  ShadowRepo shadow = ShadowRepo::open(git_dir, false);
  ShadowRepo::Impl& impl = shadow.impl();
  fs::path pack_dir = git_dir / "objects" / "pack";
  PackNames reachable = name_reachable_objects(impl);
  auto now = std::chrono::system_clock::now();
  std::vector<fs::path> stale;  // old packs with unreachable objects and reachable ones
  OidSet kept;                  // their reachable objects
  std::size_t dropped = 0;
  bool removed = false;
  for (const Pack& p : packs_of(pack_dir)) {
    boost::system::error_code ec;
    std::time_t written = fs::last_write_time(fs::path(p.idx).replace_extension(".pack"), ec);
    if (ec || younger_than(now, written, grace)) continue;
    OidSet objects = objects_of(p.idx);
    std::size_t before = objects.size();
    std::erase_if(objects, [&](const git_oid& oid) { return !reachable.contains(oid); });
    if (objects.size() == before) continue;
    dropped += before - objects.size();
    if (objects.empty()) {
      // Nothing in it is needed: it goes at once, writing nothing (on a full
      // filesystem, this is the space the rest needs).
      remove_pack(p.idx);
      removed = true;
      continue;
    }
    stale.push_back(p.idx);
    kept.merge(objects);
  }
  // A stat cache may name a tree that is gone now: it is not to be trusted any more.
  if (removed) impl.bump_generation();
  if (stale.empty()) return dropped;
  if (!kept.empty()) {
    fs::path fresh = write_pack(impl.repo.get(), kept, reachable, pack_dir);
    check_pack_holds(fresh, kept);
  }
  for (const fs::path& idx : stale) remove_pack(idx);
  // A stat cache may name a tree that is gone now: it is not to be trusted any more.
  impl.bump_generation();
  return dropped;
}

namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether name, in objects/pack, is a pack writer's temporary file, or half of a pack
// whose other half (dir holds it or not) is missing.
bool abandoned_in_pack_dir(const fs::path& dir, const std::string& name) {
  for (std::string_view prefix : {"pack_git2_", "tmp_pack_", "tmp_idx_", "tmp_rev_"}) {
    if (starts_with(name, prefix)) return true;
  }
  // libgit2's lock files, PackWriter's index (`.tmp`) and the half copy of a checkout's
  // pack that earlier builds, which copied them into the store, could leave (`.tmp-<pid>`).
  if (ends_with(name, ".lock") || ends_with(name, ".tmp") ||
      name.find(".tmp-") != std::string::npos) {
    return true;
  }
  boost::system::error_code ec;
  if (starts_with(name, "pack-") && ends_with(name, ".idx")) {
    return !fs::exists(dir / (name.substr(0, name.size() - 4) + ".pack"), ec);
  }
  if (starts_with(name, "pack-") && ends_with(name, ".pack")) {
    return !fs::exists(dir / (name.substr(0, name.size() - 5) + ".idx"), ec);
  }
  return false;
}

// Removes the regular files of dir that abandoned(name) picks and that were last
// written before cutoff; returns how many.
template <typename Abandoned>
std::size_t remove_old(const fs::path& dir, std::time_t cutoff, Abandoned abandoned) {
  std::vector<std::string> names;
  boost::system::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::size_t removed = 0;
  for (const std::string& name : names) {
    fs::path file = dir / name;
    struct stat st {};
    if (!abandoned(name) || ::lstat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_mtime > cutoff) {
      continue;
    }
    if (::unlink(file.c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace

std::size_t remove_abandoned_files(const Store& store, std::chrono::seconds grace,
                                   const MaintenanceLock& /*held*/) {
  fs::path objects = store.repo_dir() / "objects";
  fs::path pack_dir = objects / "pack";
  std::time_t cutoff =
      std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() - grace);
  std::size_t removed = remove_old(pack_dir, cutoff, [&](const std::string& name) {
    return abandoned_in_pack_dir(pack_dir, name);
  });
  removed += remove_old(objects, cutoff, [](const std::string& name) {
    return starts_with(name, "tmp_object_git2_") || starts_with(name, kStoredObjectTempPrefix);
  });
  return removed;
}

}  // namespace fsnap
