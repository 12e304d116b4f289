// HostFilesystem — a real workspace directory, confined to its root, with
// checkpoints in a shadow repository.
//
// Every path it is given must stay inside the root: absolute paths, `..` that climbs
// out, and symlinks that lead out are refused with kPathEscape. Captures use a stat
// cache (mtime/ctime in ns, size, inode, mode, racy-timestamp guard) so unchanged
// files are never re-read; restores write only the paths that differ and take a
// safety checkpoint first. Writers serialise on the store lock, so several processes
// may share one store.
//
// This is where a snapshot of the workspace is taken: checkpoint() captures the tree
// (workspace_capture.cpp) and commits it, with the notes the caller records with it,
// through ShadowRepo::commit_checkpoint.
//
// Thread-safety: one thread at a time per object, and per ShadowRepo it shares.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "fsnap/capture_options.hpp"
#include "fsnap/capture_service.hpp"
#include "fsnap/checkpoint.hpp"
#include "fsnap/clock.hpp"
#include "fsnap/copy_operations.hpp"
#include "fsnap/filesystem.hpp"
#include "fsnap/id_source.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/snapshot.hpp"
#include "fsnap/store.hpp"
#include "fsnap/tree_change.hpp"
#include "fsnap/watch_limit.hpp"

namespace fsnap {

// What a HostFilesystem shares with the rest of its process. A member left empty gets
// its default: the store's repository opened for this object alone, the system clock,
// random ids, no capture service.
struct HostEnv {
  std::shared_ptr<ShadowRepo> repo;    // the store's open repository (one per process)
  std::shared_ptr<const Clock> clock;  // checkpoint times, and "now" of the racy-timestamp rule
  std::shared_ptr<IdSource> ids;       // checkpoint ids
  // Asked for every capture of an object that does not watch() (the watch daemon);
  // when it has no answer, the object scans.
  std::shared_ptr<CaptureService> captures;
  // How the copies of files over capture.max_file_size are made and put back (the
  // system's: a reflink, else a hard link, else a copy).
  std::shared_ptr<const CopyOperations> copies;
  // How many inotify watches watch() may add (the kernel's limit; tests set a lower one).
  WatchLimit watch_limit;
};

// How restore_checkpoint behaves.
struct RestoreOptions {
  bool dry_run = false;  // report the changes, touch nothing, take no safety checkpoint
  std::string run = std::string(kDefaultRun);  // run that receives the safety checkpoint
  NotesFor safety_notes;  // notes recorded with the safety checkpoint (its ledger record)
  // Only these paths (and nothing else) are made the target's; nullopt for all. A
  // directory is removed or replaced only when every change below it is among them.
  std::optional<std::set<std::string>> only;
  // Only these paths (relative to the root, normal: "src", "a/b.txt"; "" for all), each
  // with everything below it, are made the target's, as `git restore --source=target --
  // paths` does: what the target has there is written back, what it lacks there is
  // removed, the directories it adds above them are made, nothing else is touched.
  // Refused before anything is written: a path that is not relative and normal
  // (kPathEscape), one in neither the target nor the workspace (kNotFound), one below
  // something that is not a directory in the workspace where the target has one
  // (kConflict). Not together with only.
  std::optional<std::vector<std::string>> paths;
  // A rollback: the failed tool call whose changes the restore undoes. The safety
  // checkpoint then carries its id and tool — it is the workspace as that call left
  // it, which `post:<id>` names.
  std::string tool_call_id;
  std::string tool_name;
  // The workspace as it is now, recorded already (a checkpoint the caller took just
  // before, holding the store lock): it stands for the safety checkpoint, and none is
  // taken. When the workspace no longer captures as it did, the restore refuses
  // (kConflict, nothing changed): what the target was made from is not what is there.
  std::optional<Checkpoint> safety;
};

// What restore_checkpoint did (or, in a dry run, would do).
struct RestoreReport {
  std::vector<TreeChange> changes;  // from the current workspace to the target
  // Files over capture.max_file_size, which no tree holds: put back from the copies the
  // store keeps of them (added; modified: another version was there), or removed (the
  // target has none there; the safety checkpoint keeps a copy). No object ids.
  std::vector<TreeChange> large_files;
  std::optional<Checkpoint> safety;  // the checkpoint taken before restoring
  // Paths the target does not have that were kept because they are not captured
  // (excluded, oversize without a copy, nested .git) or, for directories, hold such
  // paths.
  std::vector<std::string> kept;
  // Paths the target has that the restore could not put back, and why: a file over the
  // size limit whose copy is gone or was written in place since (a hard link), one the
  // store could not copy, a socket or FIFO. After a restore, the workspace is the target
  // but for these (and kept).
  std::vector<UnrestoredPath> unrestored;
};

// A workspace on the host, with snapshots in its store's shadow repository.
class HostFilesystem : public Filesystem, public Snapshotable<FilesystemSnapshot> {
 public:
  // Opens the workspace described by store (its shadow repository must exist).
  HostFilesystem(Store store, CaptureOptions options, HostEnv env = {});
  ~HostFilesystem() override;
  HostFilesystem(HostFilesystem&&) noexcept;
  HostFilesystem& operator=(HostFilesystem&&) = delete;

  // The workspace root (real path).
  const boost::filesystem::path& root() const;
  const Store& store() const;
  ShadowRepo& repo();
  // The repository, for the other objects of this process that need it.
  const std::shared_ptr<ShadowRepo>& shared_repo() const;
  const Clock& clock() const;
  const CaptureOptions& options() const;
  // Draws the ids of its checkpoints from ids from now on (a seeded ExecutionState
  // gives it its own stream of the seed). Not while a checkpoint is being taken.
  void draw_ids_from(std::shared_ptr<IdSource> ids);

  // Filesystem, confined to the root.
  std::string read(std::string_view path) const override;
  void write(std::string_view path, std::string_view data) override;
  void remove(std::string_view path) override;
  std::vector<DirEntry> list(std::string_view path) const override;
  EntryStat stat(std::string_view path) const override;
  void mkdir(std::string_view path) override;
  bool exists(std::string_view path) const override;
  void symlink(std::string_view path, std::string_view target) override;
  std::string readlink(std::string_view path) const override;
  void set_executable(std::string_view path, bool executable) override;

  // Watches the workspace (inotify) from now on, so that captures read only the
  // directories that changed since the one before, not the whole tree — for a
  // long-lived process such as `shadowbox run`. The stat cache is then kept in memory
  // and written when this object is destroyed. Not seen by the watch: writes through
  // a shared mmap or a hard link from outside the workspace, and mounts inside it.
  // Throws kIo if the workspace cannot be watched (no inotify). When it has more
  // directories than the inotify watch limit leaves room for (now or as it grows), the
  // watch gives its watches back and every capture walks the whole tree with the stat
  // cache, as without watch(); on_limit is called once, then, with what to raise
  // (fs.inotify.max_user_watches, and a value that would do).
  void watch(std::function<void(const std::string&)> on_limit = {});
  // Whether watch() is in effect.
  bool watching() const;
  // Reads the events the watch has queued, without capturing: a watcher that stays
  // idle for long calls this now and then so that the kernel's queue does not overflow
  // (which costs the next capture a full walk). No-op when not watching.
  void drain_watch();
  // Number of directories the watch covers (0 when not watching, or past the limit).
  std::size_t watched_directories() const;

  // Captures the whole workspace as a new checkpoint described by meta, recorded
  // together with the notes that notes returns for it (see ShadowRepo::commit_checkpoint).
  // Takes the store lock.
  Checkpoint checkpoint(const CheckpointMeta& meta, const NotesFor& notes = {});
  // Captures the workspace once. If it differs from the newest checkpoint of
  // meta.run (someone changed files since), records that state first as `outside`
  // (with outside_notes), then records meta (with notes) on the same capture. Returns
  // the checkpoints recorded, in order.
  std::vector<Checkpoint> checkpoint_after_outside_changes(const CheckpointMeta& outside,
                                                           const CheckpointMeta& meta,
                                                           const NotesFor& notes = {},
                                                           const NotesFor& outside_notes = {});
  // Makes the workspace exactly the target checkpoint (see RestoreOptions), after a
  // safety checkpoint of the current state — files over the size limit from their copies,
  // and what cannot be put back named in RestoreReport::unrestored. If writing fails part-way (an
  // immutable file, a full disk), the files are put back from the safety checkpoint before the
  // error is thrown (its code is the failure's); if putting them back fails too, the
  // error is kCorrupt and names the safety checkpoint.
  RestoreReport restore_checkpoint(const Checkpoint& target, const RestoreOptions& options);
  // Captures the workspace into the shadow repository without recording a checkpoint
  // (no commit, no ref moves) and returns the tree's hex id — for comparing the live
  // workspace with a checkpoint. Unreferenced objects are removed by gc.
  std::string capture_tree();
  // capture_tree, with what the capture skipped (files over the size limit with their
  // copies) and left out.
  CaptureReport capture_report();
  // Captures like capture_tree but without taking the store lock, and says what was
  // skipped: for a process that captures on behalf of another one which holds the
  // lock (the watch daemon, which watches and so never asks a capture service).
  CaptureReport capture_for_lock_holder();
  // Changes from the current workspace to target, without touching anything (takes
  // a capture of the current state, which is not recorded as a checkpoint).
  std::vector<TreeChange> changes_to(const Checkpoint& target);

  // Snapshotable: a manual checkpoint labelled label (free text, kept in its commit
  // message: no tag, no ref); restore to it.
  FilesystemSnapshot snapshot(std::string_view label) override;
  void restore(const FilesystemSnapshot& snapshot) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The FilesystemSnapshot that names checkpoint c.
FilesystemSnapshot to_snapshot(const Checkpoint& c);

}  // namespace fsnap
