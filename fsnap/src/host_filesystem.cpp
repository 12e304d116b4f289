#include "fsnap/host_filesystem.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include <boost/filesystem.hpp>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "fsnap/posix.hpp"
#include "host_paths.hpp"
#include "large_file_restore.hpp"
#include "restore_paths.hpp"
#include "shadow_repo_impl.hpp"
#include "stat_cache.hpp"
#include "workspace_capture.hpp"
#include "workspace_restore.hpp"
#include "workspace_watcher.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

// A missing path is kNotFound; the workspace root is named ".".
[[noreturn]] void fail(const std::string& what, const std::string& rel, int err) {
  ErrorCode code = err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
  throw system_error("cannot " + what + " " + (rel.empty() ? "." : rel), err, code);
}

EntryStat to_entry_stat(const struct stat& st) {
  EntryStat out;
  if (S_ISDIR(st.st_mode)) {
    out.type = EntryType::kDirectory;
  } else if (S_ISLNK(st.st_mode)) {
    out.type = EntryType::kSymlink;
    out.size = static_cast<std::uint64_t>(st.st_size);
  } else {
    out.type = EntryType::kFile;
    out.size = static_cast<std::uint64_t>(st.st_size);
    out.executable = (st.st_mode & S_IXUSR) != 0;
  }
  return out;
}

void remove_tree(const std::string& abs, const std::string& rel) {
  boost::system::error_code ec;
  fs::remove_all(fs::path(abs), ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot remove " + rel + ": " + ec.message());
}

}  // namespace

// What a watched workspace keeps between captures.
struct WatchState {
  WatchState(std::unique_ptr<WorkspaceWatcher> w, std::function<void(const std::string&)> f)
      : watcher(std::move(w)), on_limit(std::move(f)) {}
  std::unique_ptr<WorkspaceWatcher> watcher;
  std::function<void(const std::string&)> on_limit;  // told once if the limit is reached
  bool limit_told = false;
  std::optional<StatCache> cache;    // after the last capture; unset = walk everything
  std::string cache_key;             // workspace and prune generation cache belongs to
  ChangedDirs pending;               // changes not yet in cache
  std::vector<SkippedPath> skipped;  // what the last capture reported
  std::vector<std::string> uncaptured;

  // What the watcher saw since the last look; tells on_limit, once, if it gave up.
  void take_changes() {
    pending.merge(watcher->take_changes());
    if (watcher->scanning() && !limit_told) {
      limit_told = true;
      if (on_limit) on_limit(watcher->limit_message());
    }
  }
};

struct HostFilesystem::Impl {
  Store store;
  CaptureOptions options;
  std::shared_ptr<ShadowRepo> shared_repo;
  ShadowRepo& repo;
  std::shared_ptr<const Clock> clock;
  std::shared_ptr<IdSource> ids;
  std::shared_ptr<CaptureService> captures;
  std::string root;
  LargeFileCopies large_files;  // the store's copies of files over the size limit
  WatchLimit watch_limit;
  std::unique_ptr<WatchState> watch;

  Impl(Store s, CaptureOptions o, HostEnv env)
      : store(std::move(s)),
        options(std::move(o)),
        shared_repo(env.repo
                        ? std::move(env.repo)
                        : std::make_shared<ShadowRepo>(ShadowRepo::open(store.repo_dir(), false))),
        repo(*shared_repo),
        clock(env.clock ? std::move(env.clock) : std::make_shared<SystemClock>()),
        ids(env.ids ? std::move(env.ids) : IdSource::shared_random()),
        captures(std::move(env.captures)),
        root(store.workspace().string()),
        large_files(layout::large_files_dir(store.dir()), std::move(env.copies)),
        watch_limit(std::move(env.watch_limit)) {}

  ~Impl() {
    // A watched workspace writes its stat cache once, here, for the processes after it.
    if (watch && watch->cache) {
      try {
        watch->cache->save(store.stat_cache_file());
      } catch (const std::exception&) {
        // The cache only saves time.
      }
    }
  }

  std::string cache_key() const {
    // The cache is bound to this workspace and to the repository's prune generation.
    return root + '\0' + std::to_string(repo.impl().generation());
  }

  std::string path(std::string_view rel, bool follow_last,
                   std::string* normalized = nullptr) const {
    std::string n = normalize_relative(rel);
    if (normalized) *normalized = n;
    return confined_path(root, n, follow_last);
  }

  // Captures the workspace; the caller holds the store lock. With save_cache, the new
  // stat cache is written (only after the caller made its objects reachable).
  std::int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock->now().time_since_epoch())
        .count();
  }

  // A capture the service made, in the form of one this process made (with no stat
  // cache: the service keeps it).
  static CaptureResult served(CaptureReport report) {
    CaptureResult result;
    result.tree = git::from_hex(report.tree);
    result.skipped = std::move(report.skipped);
    result.uncaptured = std::move(report.uncaptured);
    result.progress = report.progress;
    result.cache_changed = false;
    return result;
  }

  CaptureResult capture() {
    if (!watch && captures) {
      if (std::optional<CaptureReport> report = captures->capture(options)) {
        return served(std::move(*report));
      }
    }
    std::string key = cache_key();
    if (!watch) {
      return capture_workspace(root, repo.impl(), options,
                               StatCache::load(store.stat_cache_file(), key), now_ns(), nullptr,
                               &large_files);
    }
    watch->take_changes();
    std::optional<CaptureScope> scope;
    StatCache previous;
    if (watch->cache && watch->cache_key == key) {
      // Everything changed (an overflow, past the watch limit): a walk of the whole
      // tree, still with the cache in memory.
      if (!watch->pending.everything) {
        scope.emplace(watch->pending, watch->skipped, watch->uncaptured);
      }
      previous = std::move(*watch->cache);
    } else {
      previous = StatCache::load(store.stat_cache_file(), key);
    }
    watch->cache.reset();  // if this capture fails, the next one walks everything
    CaptureResult result = capture_workspace(root, repo.impl(), options, std::move(previous),
                                             now_ns(), scope ? &*scope : nullptr, &large_files);
    watch->cache = std::move(result.cache);
    watch->cache_key = key;
    watch->pending = ChangedDirs{};
    watch->skipped = result.skipped;
    watch->uncaptured = result.uncaptured;
    result.cache_changed = false;  // kept in memory, saved when this object goes
    return result;
  }

  void save_cache(const CaptureResult& result) {
    if (result.cache_changed) result.cache.save(store.stat_cache_file());
  }

  Checkpoint record(const CaptureResult& captured, const CheckpointMeta& meta,
                    const NotesFor& notes) {
    Checkpoint draft;
    draft.id = ids->hex(16);
    draft.created_at = clock->now();
    draft.meta = meta;
    draft.skipped = captured.skipped;
    Checkpoint c = repo.commit_checkpoint(git::to_hex(captured.tree), std::move(draft), notes);
    save_cache(captured);
    return c;
  }

  // What a restore from current to target does: the tree's changes without the paths
  // it must leave alone, and the files over the size limit.
  struct Plan {
    std::vector<TreeChange> changes;
    LargeFilePlan large;
  };

  // The plan from current to target; the paths kept go to kept.
  Plan plan_restore(const CaptureResult& current, const Checkpoint& target,
                    std::vector<std::string>& kept) {
    Plan plan;
    plan.large = plan_large_files(current.skipped, target.skipped, large_files);
    Untouchable untouchable;
    untouchable.excludes = exclude_rules(options);
    untouchable.paths.insert(current.uncaptured.begin(), current.uncaptured.end());
    untouchable.paths.insert(plan.large.untouchable.begin(), plan.large.untouchable.end());
    // What the configuration excludes now is not touched, whatever the target holds.
    std::erase_if(plan.large.put_back,
                  [&](const SkippedPath& s) { return untouchable.covers(s.path, false); });
    std::erase_if(plan.large.changes,
                  [&](const TreeChange& c) { return untouchable.covers(c.path, false); });
    std::vector<TreeChange> all = repo.diff_trees(git::to_hex(current.tree), target.tree);
    plan.changes = without_untouchable(all, untouchable, kept);
    return plan;
  }

  // Error kNotFound for a named path that is in neither target (its tree, or the files
  // over the size limit it skipped) nor the workspace (current's tree, or on disk).
  void check_named_paths_exist(const std::vector<std::string>& named, const Checkpoint& target,
                               const CaptureResult& current) const {
    git::Tree target_tree = repo.impl().lookup_tree(git::from_hex(target.tree));
    git::Tree current_tree = repo.impl().lookup_tree(current.tree);
    auto in_tree = [](git_tree* tree, const std::string& path) {
      git_tree_entry* entry = nullptr;
      if (git_tree_entry_bypath(&entry, tree, path.c_str()) != 0) return false;
      git_tree_entry_free(entry);
      return true;
    };
    for (const std::string& path : named) {
      if (path.empty() || in_tree(target_tree.get(), path) || in_tree(current_tree.get(), path)) {
        continue;
      }
      std::vector<std::string> one{path};
      bool skipped = std::any_of(target.skipped.begin(), target.skipped.end(),
                                 [&](const SkippedPath& s) { return under_named(s.path, one); });
      struct stat st;
      if (skipped ||
          ::fstatat(AT_FDCWD, (root + "/" + path).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        continue;
      }
      throw Error(ErrorCode::kNotFound, "cannot restore " + quote_path(path) +
                                            ": it is in neither " + target.id +
                                            " nor the workspace (nothing changed)");
    }
  }

  // After a restore failed part-way: makes the workspace the safety checkpoint again.
  // Returns "" on success, else why it could not.
  std::string put_back(const Checkpoint& safety) {
    try {
      CaptureResult now = capture();
      std::vector<std::string> kept;
      std::vector<UnrestoredPath> unrestored;
      Plan back = plan_restore(now, safety, kept);
      apply_changes(root, repo.impl(), back.changes, {back.large, large_files, unrestored}, kept);
      return "";
    } catch (const std::exception& e) {
      return e.what();
    }
  }
};

HostFilesystem::HostFilesystem(Store store, CaptureOptions options, HostEnv env)
    : impl_(std::make_unique<Impl>(std::move(store), std::move(options), std::move(env))) {}

HostFilesystem::~HostFilesystem() = default;
HostFilesystem::HostFilesystem(HostFilesystem&&) noexcept = default;

const fs::path& HostFilesystem::root() const {
  return impl_->store.workspace();
}
const Store& HostFilesystem::store() const {
  return impl_->store;
}
ShadowRepo& HostFilesystem::repo() {
  return impl_->repo;
}
const std::shared_ptr<ShadowRepo>& HostFilesystem::shared_repo() const {
  return impl_->shared_repo;
}
const Clock& HostFilesystem::clock() const {
  return *impl_->clock;
}
const CaptureOptions& HostFilesystem::options() const {
  return impl_->options;
}

void HostFilesystem::watch(std::function<void(const std::string&)> on_limit) {
  if (impl_->watch) return;
  impl_->watch = std::make_unique<WatchState>(
      std::make_unique<WorkspaceWatcher>(impl_->root, exclude_rules(impl_->options),
                                         impl_->watch_limit),
      std::move(on_limit));
  impl_->watch->take_changes();  // says now if the limit was reached at the start
}

bool HostFilesystem::watching() const {
  return impl_->watch != nullptr;
}

void HostFilesystem::drain_watch() {
  if (impl_->watch) impl_->watch->take_changes();
}

std::size_t HostFilesystem::watched_directories() const {
  return impl_->watch ? impl_->watch->watcher->watched() : 0;
}

// ---- Filesystem ------------------------------------------------------------------

std::string HostFilesystem::read(std::string_view path) const {
  std::string rel;
  std::string abs = impl_->path(path, true, &rel);
  UniqueFd fd(::open(abs.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) fail("read", rel, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw Error(ErrorCode::kInvalidArgument, "cannot read " + rel + ": it is a directory");
  }
  std::string data;
  if (!read_all(fd.get(), data)) fail("read", rel, errno);
  return data;
}

void HostFilesystem::write(std::string_view path, std::string_view data) {
  std::string rel;
  std::string abs = impl_->path(path, true, &rel);
  if (rel.empty()) throw Error(ErrorCode::kInvalidArgument, "cannot write to the workspace root");
  struct stat st;
  if (::lstat(abs.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    throw Error(ErrorCode::kInvalidArgument,
                "cannot write " + rel + ": it is a symlink that does not resolve");
  }
  fs::path parent = fs::path(abs).parent_path();
  boost::system::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create the parent of " + rel + ": " + ec.message());
  mode_t mode = 0666;
  bool exists = ::stat(abs.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    throw Error(ErrorCode::kInvalidArgument, "cannot write " + rel + ": it is a directory");
  }
  UniqueFd fd(::open(abs.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid() || !write_all(fd.get(), data.data(), data.size())) fail("write", rel, errno);
  if (::close(fd.release()) != 0) fail("write", rel, errno);
}

void HostFilesystem::remove(std::string_view path) {
  std::string rel;
  std::string abs = impl_->path(path, false, &rel);
  if (rel.empty()) throw Error(ErrorCode::kInvalidArgument, "cannot remove the workspace root");
  struct stat st;
  if (::lstat(abs.c_str(), &st) != 0) fail("remove", rel, errno);
  if (S_ISDIR(st.st_mode)) {
    remove_tree(abs, rel);
  } else if (::unlink(abs.c_str()) != 0) {
    fail("remove", rel, errno);
  }
}

std::vector<DirEntry> HostFilesystem::list(std::string_view path) const {
  std::string rel;
  std::string abs = impl_->path(path, true, &rel);
  DIR* dir = ::opendir(abs.c_str());
  if (dir == nullptr) fail("list", rel, errno);
  int dfd = ::dirfd(dir);
  std::vector<DirEntry> out;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    out.push_back(DirEntry{name, to_entry_stat(st).type});
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

EntryStat HostFilesystem::stat(std::string_view path) const {
  std::string rel;
  std::string abs = impl_->path(path, false, &rel);
  struct stat st;
  if (::lstat(abs.c_str(), &st) != 0) fail("stat", rel, errno);
  return to_entry_stat(st);
}

void HostFilesystem::mkdir(std::string_view path) {
  std::string rel;
  std::string abs = impl_->path(path, false, &rel);
  boost::system::error_code ec;
  fs::create_directories(fs::path(abs), ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create directory " + rel + ": " + ec.message());
}

bool HostFilesystem::exists(std::string_view path) const {
  std::string abs = impl_->path(path, false);
  struct stat st;
  return ::lstat(abs.c_str(), &st) == 0;
}

void HostFilesystem::symlink(std::string_view path, std::string_view target) {
  std::string rel;
  std::string abs = impl_->path(path, false, &rel);
  if (rel.empty()) throw Error(ErrorCode::kInvalidArgument, "cannot replace the workspace root");
  boost::system::error_code ec;
  fs::create_directories(fs::path(abs).parent_path(), ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot create the parent of " + rel + ": " + ec.message());
  if (::symlink(std::string(target).c_str(), abs.c_str()) != 0) fail("create symlink", rel, errno);
}

std::string HostFilesystem::readlink(std::string_view path) const {
  std::string rel;
  std::string abs = impl_->path(path, false, &rel);
  std::string buf(4096, '\0');
  ssize_t n = ::readlink(abs.c_str(), buf.data(), buf.size());
  if (n < 0) fail("read link", rel, errno);
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

void HostFilesystem::set_executable(std::string_view path, bool executable) {
  std::string rel;
  std::string abs = impl_->path(path, true, &rel);
  struct stat st;
  if (::stat(abs.c_str(), &st) != 0) fail("chmod", rel, errno);
  if (!S_ISREG(st.st_mode)) {
    throw Error(ErrorCode::kInvalidArgument, "cannot chmod " + rel + ": not a regular file");
  }
  mode_t mode = st.st_mode & 07777;
  mode = executable ? (mode | ((mode & 0444) >> 2) | S_IXUSR) : (mode & ~0111);
  if (::chmod(abs.c_str(), mode) != 0) fail("chmod", rel, errno);
}

// ---- Snapshots -------------------------------------------------------------------

Checkpoint HostFilesystem::checkpoint(const CheckpointMeta& meta, const NotesFor& notes) {
  StoreLock lock = impl_->store.lock();
  CaptureResult captured = impl_->capture();
  return impl_->record(captured, meta, notes);
}

std::vector<Checkpoint> HostFilesystem::checkpoint_after_outside_changes(
    const CheckpointMeta& outside, const CheckpointMeta& meta, const NotesFor& notes,
    const NotesFor& outside_notes) {
  StoreLock lock = impl_->store.lock();
  CaptureResult captured = impl_->capture();
  std::vector<Checkpoint> out;
  std::vector<Checkpoint> tip = impl_->repo.log(meta.run, 1);
  if (!tip.empty() && tip.front().tree != git::to_hex(captured.tree)) {
    CheckpointMeta first = outside;
    first.run = meta.run;
    out.push_back(impl_->record(captured, first, outside_notes));
  }
  out.push_back(impl_->record(captured, meta, notes));
  return out;
}

std::string HostFilesystem::capture_tree() {
  StoreLock lock = impl_->store.lock();
  // The stat cache is not saved: these objects are not reachable from any ref, and a
  // later prune must never leave the cache pointing at missing objects.
  return git::to_hex(impl_->capture().tree);
}

CaptureReport HostFilesystem::capture_report() {
  StoreLock lock = impl_->store.lock();
  return capture_for_lock_holder();  // the stat cache is not saved, as in capture_tree
}

CaptureReport HostFilesystem::capture_for_lock_holder() {
  CaptureResult result = impl_->capture();
  CaptureReport report;
  report.tree = git::to_hex(result.tree);
  report.skipped = std::move(result.skipped);
  report.uncaptured = std::move(result.uncaptured);
  report.progress = result.progress;
  return report;
}

std::vector<TreeChange> HostFilesystem::changes_to(const Checkpoint& target) {
  std::string current = capture_tree();
  return impl_->repo.diff_trees(current, target.tree);
}

namespace {

// The changes at paths in only, less a directory's removal or replacement when some
// change below it is not among them (it would take that path along).
std::vector<TreeChange> only_changes(std::vector<TreeChange> changes,
                                     const std::set<std::string>& only) {
  std::vector<std::string> left;  // paths whose change is not made
  std::vector<TreeChange> out;
  for (const TreeChange& c : changes) {
    if (only.count(c.path) == 0) left.push_back(c.path);
  }
  std::sort(left.begin(), left.end());
  for (TreeChange& c : changes) {
    if (only.count(c.path) == 0) continue;
    bool removes_dir = c.before && c.before->type == EntryType::kDirectory &&
                       (!c.after || c.after->type != EntryType::kDirectory);
    if (removes_dir) {
      std::string prefix = c.path + "/";
      auto below = std::lower_bound(left.begin(), left.end(), prefix);
      if (below != left.end() && below->compare(0, prefix.size(), prefix) == 0) continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

RestoreReport HostFilesystem::restore_checkpoint(const Checkpoint& target,
                                                 const RestoreOptions& options) {
  if (options.paths) {
    if (options.only) {
      throw Error(ErrorCode::kInvalidArgument, "a restore takes paths or only, not both");
    }
    check_named_paths(*options.paths);
  }
  StoreLock lock = impl_->store.lock();
  git_oid target_tree = git::from_hex(target.tree);
  impl_->repo.impl().lookup_tree(target_tree);  // fails before anything is touched

  CaptureResult current = impl_->capture();
  RestoreReport report;
  Impl::Plan plan;
  try {
    plan = impl_->plan_restore(current, target, report.kept);
    std::optional<std::set<std::string>> only = options.only;
    if (options.paths) {
      impl_->check_named_paths_exist(*options.paths, target, current);
      only = paths_to_restore(*options.paths, plan.changes, plan.large);
    }
    if (only) {
      plan.changes = only_changes(std::move(plan.changes), *only);
      keep_only(plan.large, *only);
    }
    report.changes = plan.changes;
    report.large_files = plan.large.changes;
    report.unrestored = plan.large.unrestored;
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kPathEscape && e.code() != ErrorCode::kCorrupt) throw;
    // A tree someone else wrote (a fetched run, a store another user can write): no
    // name of it has become a path yet.
    throw Error(e.code(), "cannot restore " + target.id + ": " + e.what() +
                              " (refused before anything was written)");
  }
  if (options.dry_run) return report;

  if (options.safety) {
    if (git::to_hex(current.tree) != options.safety->tree ||
        !large_file_changes(current.skipped, options.safety->skipped).empty()) {
      throw Error(ErrorCode::kConflict, "cannot restore " + target.id +
                                            ": the workspace changed after checkpoint " +
                                            options.safety->id + " (nothing was changed)");
    }
    report.safety = *options.safety;
  } else {
    CheckpointMeta meta;
    meta.phase = Phase::kSafety;
    meta.run = options.run;
    meta.tool_call_id = options.tool_call_id;
    meta.tool_name = options.tool_name;
    report.safety = impl_->record(current, meta, options.safety_notes);
  }
  try {
    apply_changes(impl_->root, impl_->repo.impl(), report.changes,
                  {plan.large, impl_->large_files, report.unrestored}, report.kept);
    // A file that could not go where it belongs after all is not among the changes.
    for (const UnrestoredPath& u : report.unrestored) {
      std::erase_if(report.large_files, [&](const TreeChange& c) {
        return c.path == u.path && c.kind != TreeChange::Kind::kDeleted;
      });
    }
  } catch (const Error& e) {
    std::string failure = e.what();
    std::string put_back = impl_->put_back(*report.safety);
    if (put_back.empty()) {
      throw Error(e.code(), "cannot restore " + target.id + ": " + failure +
                                " (nothing changed: the workspace was put back as it was)");
    }
    throw Error(ErrorCode::kCorrupt, "cannot restore " + target.id + ": " + failure +
                                         "; putting the workspace back failed too (" + put_back +
                                         "): it may be partly restored; undo with: shadowbox "
                                         "restore " +
                                         report.safety->id);
  }
  return report;
}

FilesystemSnapshot to_snapshot(const Checkpoint& c) {
  FilesystemSnapshot s;
  s.id = c.id;
  s.commit = c.commit;
  s.tree = c.tree;
  s.tag = c.meta.tag;
  s.label = c.meta.label;
  s.created_at = c.created_at;
  s.skipped = c.skipped;
  return s;
}

void HostFilesystem::draw_ids_from(std::shared_ptr<IdSource> ids) {
  if (ids == nullptr) throw Error(ErrorCode::kInvalidArgument, "no id source to draw from");
  impl_->ids = std::move(ids);
}

FilesystemSnapshot HostFilesystem::snapshot(std::string_view label) {
  CheckpointMeta meta;
  meta.label = std::string(label);
  return to_snapshot(checkpoint(meta));
}

void HostFilesystem::restore(const FilesystemSnapshot& snapshot) {
  if (snapshot.commit.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "snapshot " + snapshot.id + " is not a host filesystem snapshot");
  }
  Checkpoint target = impl_->repo.read_checkpoint(snapshot.commit);
  restore_checkpoint(target, RestoreOptions{});
}

}  // namespace fsnap
