// ShadowRepo::Impl — the libgit2 state behind a ShadowRepo, shared by fsnap's own
// sources (capture, restore, diff, gc). Private to fsnap.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "commit_cache.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/store_layout.hpp"
#include "git_handles.hpp"
#include "oid_hash.hpp"

namespace fsnap {

// The signature of everything shadowbox writes, dated at t.
git::Signature shadowbox_signature(std::chrono::system_clock::time_point t);

// Writes notes in one commit on top of the notes commit base (none: a new history),
// keeping the notes tree fanned out as git does; returns the commit (not moving any
// ref). Error kInvalidArgument for no notes at all, or a note without a full commit id.
// anchors are set beside the notes as the notes' own anchors are.
git_oid commit_notes(ShadowRepo::Impl& impl, std::optional<git_oid> base,
                     const std::vector<Note>& notes, const git_signature* sig,
                     const std::vector<ObjectEntry>& anchors = {});

// The notes (commit and text; the anchors apart) and the anchors (name and tree, as
// ObjectEntry) of the notes tree at tree.
struct NotesContent {
  std::vector<Note> notes;
  std::vector<ObjectEntry> anchors;
};
NotesContent read_notes(const ShadowRepo::Impl& impl, const git_oid& tree);

// Whether s is a non-empty run of lowercase hex digits, as git writes object names.
inline bool is_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Writes an object to odb (no-op if it exists) and returns its id.
git_oid write_object(git_odb* odb, std::string_view data, git_object_t type);

// Blobs larger than this are streamed when restored, in bounded memory; maintenance
// leaves them loose, since libgit2 streams loose objects only (git's bigFileThreshold
// plays the same part).
inline constexpr std::size_t kStreamedBlobSize = std::size_t{16} << 20;

// A commit written on top of a ref's tip, before the ref moves to it.
struct CommitOnRef {
  git_oid commit;
  std::optional<git_oid> parent;  // the tip it was made on; none where the ref did not exist
};

struct ShadowRepo::Impl {
  boost::filesystem::path git_dir;
  git::Repository repo;
  git::Odb odb;                 // the repository's object database (fast-compression loose backend)
  mutable CommitCache commits;  // the checkpoints of commits read so far (run_log)

  // Writes an object (no-op if it exists) and returns its id.
  git_oid write(std::string_view data, git_object_t type) {
    return write_object(odb.get(), data, type);
  }
  // A separate handle on the same object database, for a writer thread of its own.
  git::Odb open_odb() const;
  // The raw content of an object of the given type; kNotFound / kCorrupt.
  std::string read(const git_oid& oid, git_object_t expected_type) const;
  // The content of a blob, passed to sink in pieces: a large loose blob is streamed
  // (bounded memory), others are read whole. Error kCorrupt if oid is no blob.
  void read_blob_in_pieces(const git_oid& oid,
                           const std::function<void(const char*, std::size_t)>& sink) const;
  // The tree with the given id.
  git::Tree lookup_tree(const git_oid& oid) const;
  // Tip of a ref, or nullopt if the ref does not exist.
  std::optional<git_oid> ref_target(const std::string& name) const;
  // Every checkpoint of one run, newest first (at most limit; 0 = all).
  std::vector<Checkpoint> run_log(std::string_view run, std::size_t limit) const;
  // The checkpoint recorded by a commit.
  Checkpoint checkpoint_of(const git_commit* commit) const;
  // The checkpoint commit holds as its message says, tag included whether or not it moved
  // since (what CommitCache keeps); drop_moved_tag then clears a tag that points
  // elsewhere now.
  Checkpoint parse_checkpoint_commit(const git_commit* commit) const;
  void drop_moved_tag(Checkpoint& c) const;
  // Writes a commit of tree on top of ref's tip (one without a parent where ref does not
  // exist), signed by sig, with message; failure is what the error says could not be
  // done. The ref is not moved: move_ref does that, from the parent returned.
  CommitOnRef commit_on_tip(const std::string& ref, const git_oid& tree, const git::Signature& sig,
                            const std::string& message, const std::string& failure) const;
  // Moves ref to target: from expected by compare-and-swap, or creates it when expected
  // is absent (and it must not exist yet). Clears a stale lock of ref first (see
  // clear_stale_lock: only for a caller holding the store lock).
  void move_ref(const std::string& ref, const git_oid& target,
                const std::optional<git_oid>& expected, const std::string& log) const;
  // Removes the lock file of ref left by a writer that died while moving it. Only for
  // a caller holding the store lock: then no other shadowbox writer can be moving it, and
  // a lock file there can only be stale (git itself would refuse the ref forever).
  void clear_stale_lock(const std::string& ref) const;
  // Id of the empty tree (written on first use).
  git_oid empty_tree();
  // A counter bumped whenever objects are pruned (repo config
  // shadowbox.pruneGeneration); stat caches from another generation are discarded,
  // since they may name pruned objects.
  std::int64_t generation() const;
  void bump_generation();
  // The config file as generation() last read it: inode, size, mtime and ctime (ns).
  using ConfigStamp = std::tuple<std::uint64_t, std::int64_t, std::int64_t, std::int64_t>;
  mutable std::mutex generation_mutex;
  mutable std::optional<std::pair<ConfigStamp, std::int64_t>> generation_read;
};

// Flushes a file or directory to the disk; kIo naming it if it cannot.
void fsync_path(const boost::filesystem::path& path);

// The content of the file open at fd, of known size; kConflict if it has another size.
std::string read_whole_file(int fd, std::uint64_t size, const std::string& path_for_errors);

// Writes a blob read from the file descriptor fd of known size to odb (that of the
// repository at git_dir), streaming large files, and storing those that do not
// compress uncompressed (stored_blobs.hpp); kConflict if the file changes size
// meanwhile.
git_oid write_blob_from_fd(git_odb* odb, const boost::filesystem::path& git_dir, int fd,
                           std::uint64_t size, const std::string& path_for_errors);

// Validates a run or tag name as one ref component; throws kInvalidArgument.
void validate_ref_component(std::string_view kind, std::string_view name);

}  // namespace fsnap
