// ShadowRepo — the bare git repository that holds a workspace's checkpoints.
//
// Written with libgit2 only. The repository is isolated from the user's git: no
// `git` executable, no GIT_* environment variables, no global/system/XDG config, no
// hooks. Refs (all browsable with plain git):
//   refs/shadowbox/runs/<run>   chain of checkpoint commits of one run, newest at tip
//   refs/shadowbox/tags/<tag>   the newest checkpoint taken with that tag
// Objects are written before any ref moves, and refs move by compare-and-swap, so a
// crash at any instant leaves a consistent repository.
//
// Thread-safety: a ShadowRepo must not be used from two threads at once. Writers in
// different processes must hold the Store's lock (HostFilesystem does).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/tree_change.hpp"

namespace fsnap {

// Retention limits applied by ShadowRepo::collect_garbage.
struct RetentionPolicy {
  std::size_t keep_last = 0;        // checkpoints kept per run; 0 = no limit
  std::chrono::seconds max_age{0};  // checkpoints older than this are dropped; 0 = no limit
};

// What collect_garbage did.
struct GcReport {
  std::size_t checkpoints_dropped = 0;
  std::size_t runs_dropped = 0;
  std::size_t objects_pruned = 0;
};

// The shadow repository of one store.
class ShadowRepo {
 public:
  // Opens the bare repository at git_dir, creating it (with a safe config) if create
  // is set. A missing repository without create is kNotFound.
  static ShadowRepo open(const boost::filesystem::path& git_dir, bool create);

  ShadowRepo(ShadowRepo&&) noexcept;
  ShadowRepo& operator=(ShadowRepo&&) noexcept;
  ~ShadowRepo();

  // The repository's git directory.
  const boost::filesystem::path& git_dir() const;

  // Records a checkpoint whose tree (hex id) is already written: creates the commit
  // on top of draft.meta.run's chain, then moves the run ref (and the tag ref).
  // Fills in id (if empty), commit, tree, parent and created_at (if unset).
  Checkpoint commit_checkpoint(std::string_view tree, Checkpoint draft);

  // Checkpoints newest first: of one run, or of every run (merged by time) when run is
  // empty; at most limit of them (0 = all).
  std::vector<Checkpoint> log(std::string_view run, std::size_t limit) const;
  // Names of all runs, sorted.
  std::vector<std::string> runs() const;
  // The checkpoint a REF names: a checkpoint id or unique prefix of one, a commit id
  // or unique prefix (4+ hex digits), a tag, `pre:<tool_call_id>` or
  // `post:<tool_call_id>`, or `<run>` / `run:<run>` for the run's newest checkpoint.
  // Throws kNotFound, kAmbiguous (listing the candidates) or kInvalidArgument.
  Checkpoint resolve(std::string_view ref) const;
  // The checkpoint recorded by commit (full hex id).
  Checkpoint read_checkpoint(std::string_view commit) const;

  // Differences from tree `from` to tree `to` (hex ids; empty means the empty tree).
  std::vector<TreeChange> diff_trees(std::string_view from, std::string_view to) const;
  // A unified diff (git format, with `diff --git` headers) from tree `from` to `to`.
  std::string unified_diff(std::string_view from, std::string_view to) const;
  // Contents of the blob with the given hex id.
  std::string read_blob(std::string_view oid) const;

  // Captures the directory dir (not a workspace: no stat cache, no checkpoint) as a
  // tree in this repository and returns its hex id. Same rules as a workspace
  // capture (options' excludes, size limit; `.git` left out). The caller holds the
  // store lock.
  std::string capture_directory(const boost::filesystem::path& dir, const CaptureOptions& options);
  // Records tree as a new commit on ref (a full ref name outside refs/shadowbox/runs/,
  // e.g. refs/shadowbox/home/<run>), parented on the ref's current commit, and moves
  // the ref. Returns the commit's hex id. The caller holds the store lock.
  std::string commit_to_ref(const std::string& ref, std::string_view tree,
                            const std::string& message);
  // The tree of the commit a ref points to, or nullopt if the ref does not exist.
  std::optional<std::string> ref_tree(const std::string& ref) const;
  // Writes the contents of tree into dir, which must not exist yet (files, modes,
  // symlinks, empty directories).
  void materialize(std::string_view tree, const boost::filesystem::path& dir) const;

  // Attaches text to a checkpoint commit as a git note under refs/notes/shadowbox
  // (readable with `git log --notes=shadowbox`), replacing an earlier note. The caller
  // holds the store lock.
  void set_note(std::string_view commit, std::string_view text);
  // The note of a commit, or nullopt.
  std::optional<std::string> note(std::string_view commit) const;

  // Drops checkpoints beyond the retention limits (rewriting each run's chain so it
  // starts at its oldest kept checkpoint; checkpoint ids stay), removes runs left
  // empty and tags that pointed at dropped checkpoints, moves notes to the rewritten
  // commits (and drops those of dropped ones), then deletes loose objects
  // nothing references any more. The caller holds the store lock.
  GcReport collect_garbage(const RetentionPolicy& policy,
                           std::chrono::system_clock::time_point now);

  struct Impl;
  // The implementation, for fsnap's own sources.
  Impl& impl() const { return *impl_; }

 private:
  explicit ShadowRepo(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fsnap
