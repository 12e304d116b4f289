// ShadowRepo — the bare git repository that holds a workspace's checkpoints.
//
// Written with libgit2 only. The repository is isolated from the user's git: no
// `git` executable, no GIT_* environment variables, no global/system/XDG config, no
// hooks. Refs (all browsable with plain git; store_layout.hpp names them):
//   refs/shadowbox/runs/<run>   chain of checkpoint commits of one run, newest at tip
//   refs/shadowbox/tags/<tag>   the newest checkpoint taken with that tag
//   refs/notes/shadowbox        notes on checkpoint commits (the ledger's records), and
//                               beside them the trees notes name (Note::anchor_name)
//   refs/shadowbox/sessions/<run>  after gc, chain of the session trees the run's kept
//                               notes name (gc starts the notes' history afresh)
// Objects are written before any ref moves, and refs move by compare-and-swap, so a
// crash at any instant leaves a consistent repository. A checkpoint and the notes
// recorded with it land together: its notes are written before its run ref moves.
//
// One ShadowRepo per store per process: the types that need the repository borrow it
// (std::shared_ptr) instead of opening their own.
//
// Thread-safety: a ShadowRepo must not be used from two threads at once. Writers in
// different processes must hold the Store's lock (HostFilesystem does).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/tree_change.hpp"
#include "fsnap/tree_merge.hpp"

namespace fsnap {

// Retention limits applied by ShadowRepo::collect_garbage.
struct RetentionPolicy {
  std::size_t keep_last = 0;        // checkpoints kept per run; 0 = no limit
  std::chrono::seconds max_age{0};  // checkpoints older than this are dropped; 0 = no limit
  // Bytes the store's live objects may take on disk (estimated); above it, whole runs
  // are dropped, the oldest first (by their newest checkpoint), never the newest run
  // nor one kept whole. 0 = no limit.
  std::uint64_t max_size = 0;
  // Unreferenced loose objects younger than this stay: one may be part of a checkpoint
  // being recorded right now (git's gc.pruneExpire plays the same part).
  std::chrono::seconds prune_grace{3600};
};

// A note to attach to a commit under refs/notes/shadowbox.
struct Note {
  std::string commit;  // full hex id of the annotated commit
  std::string text;
  // A tree the note names, kept reachable from the notes tree: an entry of this name
  // beside the notes at its root (git's notes code keeps such entries and shows none of
  // them). A later note's anchor of the same name takes the entry; the trees it held
  // before stay reachable through the notes' history. Empty: none. A name must not
  // look like a note or a fan-out directory (all hex digits): kInvalidArgument.
  std::string anchor_name;
  std::string anchor_tree;  // full hex id
};

// An entry of a tree written by ShadowRepo::write_tree or read by read_tree.
struct ObjectEntry {
  std::string name;
  std::string oid;       // full hex id
  bool is_tree = false;  // a subtree (040000); otherwise a blob (100644)
  friend bool operator==(const ObjectEntry&, const ObjectEntry&) = default;
};

// The notes to record together with a checkpoint, given the checkpoint (its commit
// id known, its refs not moved yet).
using NotesFor = std::function<std::vector<Note>(const Checkpoint&)>;

// Longest tag, run name, tool name or tool call id accepted (bytes): tags and runs are
// ref names, and so file names in the store; all of them are one line of a commit.
inline constexpr std::size_t kMaxTagBytes = 200;

// What collect_garbage did.
struct GcReport {
  std::size_t checkpoints_dropped = 0;
  std::size_t runs_dropped = 0;
  std::vector<std::string> dropped_runs;  // runs left with no checkpoint, removed
  std::size_t objects_pruned = 0;
  // Copies of files over capture.max_file_size that no checkpoint names any more.
  std::size_t large_files_pruned = 0;
  // Why a write gc needed could not be made for want of space on the store's filesystem
  // ("" if none): what needed no space was done, the rest is left for a later gc.
  std::string out_of_space;
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

  // Records a checkpoint whose tree (hex id) is already written: validates draft
  // (run, tag, tool name and call id; kInvalidArgument, nothing written), creates the
  // commit on top of draft.meta.run's chain, writes the notes that notes returns for it,
  // then moves the run ref and the tag ref. If a ref cannot move, the run is left as it
  // was. Fills in commit, tree and parent; id and created_at must be set (kInvalidArgument).
  // The caller holds the store lock.
  Checkpoint commit_checkpoint(std::string_view tree, Checkpoint draft, const NotesFor& notes = {});

  // Checkpoints newest first: of one run (none for a run that does not exist), or of
  // every run (merged by time) when run is empty; at most limit of them (0 = all).
  std::vector<Checkpoint> log(std::string_view run, std::size_t limit) const;
  // Names of all runs, sorted (a run ref whose name no run could have is left out).
  std::vector<std::string> runs() const;
  // Whether run has a checkpoint.
  bool has_run(std::string_view run) const;
  // The checkpoint a REF names: a checkpoint id or unique prefix of one, a commit id
  // or unique prefix (4+ hex digits), a tag, `pre:<tool_call_id>` or
  // `post:<tool_call_id>` (the workspace as the call left it: its post-tool checkpoint
  // or, for a call that was rolled back, the safety checkpoint taken before its
  // rollback), or `<run>` / `run:<run>` for the run's newest checkpoint.
  // Throws kNotFound, kAmbiguous (listing the candidates) or kInvalidArgument.
  Checkpoint resolve(std::string_view ref) const;
  // The checkpoint recorded by commit (full hex id).
  Checkpoint read_checkpoint(std::string_view commit) const;

  // Differences from tree `from` to tree `to` (hex ids; empty means the empty tree).
  std::vector<TreeChange> diff_trees(std::string_view from, std::string_view to) const;
  // Merges the changes from tree ancestor to tree theirs into tree ours (hex ids; empty
  // means the empty tree), as git does: a path only one side changed takes that side,
  // a text file both changed is merged line by line, anything else both changed is a
  // conflict (no tree then). Writes the merged files and trees. The caller holds the
  // store lock.
  TreeMerge merge_trees(std::string_view ancestor, std::string_view ours, std::string_view theirs);
  // Tree base (hex id; empty: the empty tree) with each of paths as tree source has it:
  // a file or symlink, a directory with everything below it, or nothing there. The
  // caller holds the store lock.
  std::string tree_with_paths_of(std::string_view base, std::string_view source,
                                 const std::set<std::string>& paths);
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
  // the ref; the message ends with a Committed-At trailer (when, to the microsecond).
  // Returns the commit's hex id. The caller holds the store lock.
  std::string commit_to_ref(const std::string& ref, std::string_view tree,
                            const std::string& message);
  // The tree of the commit a ref points to, or nullopt if the ref does not exist.
  std::optional<std::string> ref_tree(const std::string& ref) const;
  // The tree of a commit (hex id), or nullopt if the repository has no such commit.
  std::optional<std::string> commit_tree(std::string_view commit) const;
  // Whether commit newer is older or has it in its history. False when older is not in
  // this repository (a commit gc removed).
  bool descends_from(std::string_view newer, std::string_view older) const;
  // How many commits are reachable from newer but not from older ("" : none hidden),
  // counted up to limit.
  std::size_t commits_between(std::string_view newer, std::string_view older,
                              std::size_t limit) const;
  // The object a ref points to (full hex id), or nullopt if the ref does not exist.
  std::optional<std::string> ref_target(const std::string& ref) const;
  // The tree of the newest commit of ref's first-parent history made at or before at
  // (by the Committed-At trailer commit_to_ref writes, to the microsecond; by the commit
  // time, to the second, for a commit without one), or nullopt if there is none.
  std::optional<std::string> ref_tree_at(const std::string& ref,
                                         std::chrono::system_clock::time_point at) const;
  // The commit time of the commit a ref points to, or nullopt if the ref does not exist.
  std::optional<std::chrono::system_clock::time_point> ref_time(const std::string& ref) const;
  // Plain objects, for data kept beside the checkpoints (the ledger's session trees).
  // Writes a blob (nothing if it exists) and returns its hex id.
  std::string write_blob(std::string_view content);
  // Writes a tree of entries (in any order; names unique, each naming an object that
  // exists) and returns its hex id; kInvalidArgument for a bad name.
  std::string write_tree(const std::vector<ObjectEntry>& entries);
  // The entries of a tree, in git's order; kNotFound, or kCorrupt for another object.
  std::vector<ObjectEntry> read_tree(std::string_view oid) const;
  // Whether the object with the given hex id is in the repository.
  bool has_object(std::string_view oid) const;

  // Writes the contents of tree into dir, which must not exist yet (files, modes,
  // symlinks, empty directories).
  void materialize(std::string_view tree, const boost::filesystem::path& dir) const;

  // Attaches notes to commits under refs/notes/shadowbox (readable with `git log
  // --notes=shadowbox`), replacing earlier notes, in one move of the notes ref, dated
  // when. The caller holds the store lock.
  void write_notes(const std::vector<Note>& notes, std::chrono::system_clock::time_point when);
  // The note of a commit, or nullopt.
  std::optional<std::string> note(std::string_view commit) const;
  // The note of a commit in the notes history at notes_ref (a fetched one), or nullopt.
  std::optional<std::string> note_in(const std::string& notes_ref, std::string_view commit) const;

  // Drops checkpoints beyond the retention limits (rewriting each run's chain so it
  // starts at its oldest kept checkpoint; checkpoint ids stay) except in the runs of
  // keep_whole, removes runs left empty (with their home refs) and tags that pointed
  // at dropped checkpoints, moves notes to the rewritten commits with the commit ids
  // they name rewritten too (and drops every note of a commit no run shows), then
  // deletes loose objects nothing references any more, and the copies of files over
  // capture.max_file_size (beside the repository, in its store) no checkpoint names. The caller
  // holds the store lock, and with a max_size the maintenance lock too (a pack being written counts
  // its objects twice). Every checkpoint a run shows has its record at every moment: the records
  // are copied to the rewritten commits before any run moves to them. after_step, if given, is told
  // each step as it is done ("commits rewritten", "records copied", "runs moved", "notes
  // migrated"): what a caller reports, and where a test stops gc as a crash would. on_run_dropped,
  // if given, is told each run whose refs are gone, at once (before gc writes anything more: its
  // folder can go then).
  //
  // A full filesystem: what needs no new space — runs dropped whole, tags deleted,
  // unreachable objects pruned — is done whatever happens; a write that fails for want
  // of space is tried again after a prune, and if it still fails, the writes after it
  // are left for a later gc and GcReport::out_of_space says why (the store stays as a
  // crash at that step leaves it: consistent).
  GcReport collect_garbage(const RetentionPolicy& policy, std::chrono::system_clock::time_point now,
                           const std::set<std::string>& keep_whole = {},
                           const std::function<void(std::string_view)>& after_step = nullptr,
                           const std::function<void(const std::string&)>& on_run_dropped = nullptr);

  struct Impl;
  // The implementation, for fsnap's own sources.
  Impl& impl() const { return *impl_; }

 private:
  explicit ShadowRepo(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fsnap
