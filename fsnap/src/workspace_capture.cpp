#include "workspace_capture.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "checkout_index.hpp"
#include "entry_names.hpp"
#include "fsnap/error.hpp"
#include "fsnap/posix.hpp"
#include "pack_writer.hpp"
#include "restore_temp_names.hpp"
#include "shadow_repo_impl.hpp"
#include "tree_encoding.hpp"

namespace fsnap {

namespace {

constexpr std::chrono::milliseconds kProgressInterval{200};
// Files whose mtime/ctime is this close to (or after) the start of the scan that
// recorded them are re-read next time: file timestamps come from a coarse clock.
constexpr std::int64_t kRacyMarginNs = 50'000'000;
// The mtime of an entry recorded too close to its scan ("racy", as git calls it): it
// matches no file, so the entry is re-read whenever its directory is next looked at.
constexpr std::int64_t kSmudgedNs = -1;

std::int64_t ns_of(const timespec& t) {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::string parent_of(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

[[noreturn]] void fail_io(const std::string& what, const std::string& path, int err) {
  std::string hint = err == EACCES || err == EPERM
                         ? " (exclude it in the config's capture.excludes to skip it)"
                         : "";
  throw Error(ErrorCode::kIo, errno_message("cannot " + what + " " + path, err) + hint);
}

// Names in a directory, sorted bytewise, without "." and "..".
std::vector<std::string> read_names(int dirfd, const std::string& path) {
  int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) fail_io("read directory", path, errno);
  DIR* dir = ::fdopendir(dup);
  if (dir == nullptr) {
    int err = errno;
    ::close(dup);
    fail_io("read directory", path, err);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(dir)) {
    const char* n = e->d_name;
    if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
    names.emplace_back(n);
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) fail_io("read directory", path, err);
  std::sort(names.begin(), names.end());
  return names;
}

// State shared by the threads of one capture.
struct SharedState {
  const CaptureOptions& options;
  const StatCache& previous;
  const CaptureScope* scope;                // null: walk everything
  std::int64_t cutoff_ns;                   // entries modified after this are recorded smudged
  const CheckoutIndex* checkout = nullptr;  // the user's git index, on a first capture
  PackWriter* pack = nullptr;               // where new objects go, on a first capture
  const LargeFileCopies* copies = nullptr;  // a workspace's: where files over the limit go
  bool workspace = false;                   // a workspace: restore's temporary names reserved
  boost::filesystem::path git_dir;          // of the store's repository
  std::atomic<std::uint64_t> entries_seen{0};
  std::atomic<std::uint64_t> files_hashed{0};
  std::atomic<std::uint64_t> bytes_hashed{0};
  std::atomic<bool> failed{false};

  CaptureProgress progress() const {
    CaptureProgress p;
    p.entries_seen = entries_seen.load();
    p.files_hashed = files_hashed.load();
    p.bytes_hashed = bytes_hashed.load();
    return p;
  }

  // Calls options.on_progress if kProgressInterval has passed since the last call. The
  // walking threads call it as they go (one at a time), so that no thread is started
  // for it: most captures are over long before the first report.
  void report_progress() {
    if (!options.on_progress) return;
    std::unique_lock<std::mutex> lock(report_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return;  // another thread is reporting
    auto now = std::chrono::steady_clock::now();
    if (now < next_report) return;
    next_report = now + kProgressInterval;
    options.on_progress(progress());
  }

  std::mutex report_mutex;  // held by the thread reporting
  std::chrono::steady_clock::time_point next_report =
      std::chrono::steady_clock::now() + kProgressInterval;
};

// What one thread found; merged into the CaptureResult at the end.
struct WalkOutput {
  std::vector<SkippedPath> skipped;
  std::vector<std::string> uncaptured;
  std::vector<std::pair<std::string, DirRecord>> records;
  // Directories among records taken from the stat cache without being listed again
  // (capture_known_dir): what the last capture reported in them still stands.
  std::vector<std::string> known_dirs;
  bool changed = false;
};

// A subdirectory queued by a directory being split (see Capture): captured by whichever
// thread takes it, or split in turn.
struct SubdirTask {
  std::string name;
  std::size_t entry_index;  // its StatEntry in its directory's record
  git_oid tree{};           // once captured; zero if it vanished first
};

// Walks directories depth-first for one thread, writing objects through its own odb.
class Walker {
 public:
  Walker(SharedState& shared, git_odb* odb, IgnoreRules rules)
      : shared_(shared), odb_(odb), rules_(std::move(rules)) {}

  // Captures the directory open at dirfd (path dir). With queued, subdirectories
  // are not descended into but queued there (their tree ids are filled in later, and
  // finish_dir must be called).
  git_oid capture_dir(int dirfd, const std::string& dir, std::vector<SubdirTask>* queued,
                      DirRecord* pending_record) {
    const DirRecord* cached = shared_.previous.find_dir(dir);
    if (cached != nullptr && shared_.scope != nullptr && !shared_.scope->must_read(dir)) {
      if (std::optional<git_oid> tree =
              capture_known_dir(dirfd, dir, *cached, queued, pending_record)) {
        return *tree;
      }
    }
    std::vector<std::string> names = read_names(dirfd, dir.empty() ? "." : dir);
    if (shared_.options.respect_gitignore) {
      load_gitignore(dirfd, dir,
                     std::binary_search(names.begin(), names.end(), std::string(".gitignore")));
    }

    DirRecord record;
    std::size_t name_bytes = 0;
    for (const std::string& name : names) name_bytes += name.size();
    record.reserve(names.size(), name_bytes);
    bool changed = cached == nullptr;
    for (const std::string& name : names) {
      if (shared_.failed.load(std::memory_order_relaxed)) {
        throw Error(ErrorCode::kIo, "capture abandoned");
      }
      // The user's repositories are never captured (nor what any filesystem would
      // take for one: a restore refuses to write such a name).
      if (names_git_directory(name)) continue;
      if (shared_.workspace && reserved(dirfd, name)) continue;
      if (shared_.entries_seen.fetch_add(1, std::memory_order_relaxed) % 64 == 63) {
        shared_.report_progress();
      }
      std::string path = join(dir, name);
      struct stat st;
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed while we were looking
        fail_io("stat", path, errno);
      }
      bool is_dir = S_ISDIR(st.st_mode);
      if (!rules_.empty() && rules_.is_ignored(path, is_dir)) {
        out_.uncaptured.push_back(path);
        continue;
      }
      const StatEntry* c = cached ? StatCache::find_entry(*cached, name) : nullptr;
      StatEntry e;
      bool kept = false;
      if (is_dir) {
        kept = capture_subdir(dirfd, name, path, st, c, e, queued, record.entries.size(), changed);
      } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
        kept = capture_file(dirfd, name, path, st, c, e, changed);
      } else {
        skip(path, kUnsupportedType, st);
      }
      if (!kept) continue;
      record.add(name, e);
    }
    return finish_or_hand_over(dir, std::move(record), changed, queued, pending_record);
  }

  // A directory whose own entries the watcher saw no change in, on the way to one below
  // it: its entries are the cached record's, and only the subdirectories the scope names
  // are looked at — no listing, and no stat of the other entries, so that a boundary
  // costs what changed and not the size of the directories above it. Reports what it
  // found (see capture_dir); nullopt, having recorded nothing, if a subdirectory the
  // scope names is no longer a directory (the caller then reads the directory whole).
  std::optional<git_oid> capture_known_dir(int dirfd, const std::string& dir,
                                           const DirRecord& cached, std::vector<SubdirTask>* queued,
                                           DirRecord* pending_record) {
    if (shared_.options.respect_gitignore) {
      load_gitignore(dirfd, dir, StatCache::find_entry(cached, ".gitignore") != nullptr);
    }
    // The subdirectories to walk (positions in cached, stat), each still a directory:
    // checked before anything is recorded.
    std::vector<std::pair<std::size_t, struct stat>> to_walk;
    for (std::size_t i = 0; i < cached.entries.size(); ++i) {
      const StatEntry& c = cached.entries[i];
      if (c.mode() != kModeTree || !shared_.scope->must_walk(join(dir, cached.name(c)))) continue;
      struct stat st;
      std::string name(cached.name(c));
      if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
        return std::nullopt;
      }
      to_walk.emplace_back(i, st);
    }
    DirRecord record;
    record.reserve(cached.entries.size(), cached.name_bytes());
    bool changed = false;
    auto next = to_walk.begin();
    for (std::size_t i = 0; i < cached.entries.size(); ++i) {
      const StatEntry& c = cached.entries[i];
      if (next == to_walk.end() || next->first != i) {
        record.add(cached.name(c), c);
        continue;
      }
      std::string name(cached.name(c));
      StatEntry e;
      if (capture_subdir(dirfd, name, join(dir, name), (next++)->second, &c, e, queued,
                         record.entries.size(), changed)) {
        record.add(name, e);
      }
    }
    out_.known_dirs.push_back(dir);
    return finish_or_hand_over(dir, std::move(record), changed, queued, pending_record);
  }

  // The subdirectory e (name, at path, stat st, cached as c) of the directory open at
  // dirfd: its tree, the cached one where nothing below it can have changed; with
  // queued, put there as the index-th entry instead. Sets changed when its tree is
  // not the cached one. False when it is gone.
  bool capture_subdir(int dirfd, const std::string& name, const std::string& path,
                      const struct stat& st, const StatEntry* c, StatEntry& e,
                      std::vector<SubdirTask>* queued, std::size_t index, bool& changed) {
    e.set_mode(kModeTree);
    record_stat(e, st);
    if (shared_.scope != nullptr && c != nullptr && c->mode() == kModeTree &&
        !shared_.scope->must_walk(path) && shared_.previous.find_dir(path) != nullptr) {
      e.oid = c->oid;  // nothing changed below: the cached subtree stands
      return true;
    }
    if (queued != nullptr) {
      queued->push_back(SubdirTask{name, index});
      return true;
    }
    UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub.get() < 0) {
      if (errno == ENOENT) return false;
      fail_io("open directory", path, errno);
    }
    e.oid = capture_dir(sub.get(), path, nullptr, nullptr);
    if (c == nullptr || c->mode() != kModeTree || !git_oid_equal(&c->oid, &e.oid)) changed = true;
    return true;
  }

  // The regular file or symlink e (name, at path, stat st, cached as c) of the directory
  // open at dirfd: its blob id, from the cache where its stat is trusted, else from the
  // user's checkout or hashed. Sets changed when not from the cache. False when it is left
  // out (over the size limit, kept as a copy if configured) or gone.
  bool capture_file(int dirfd, const std::string& name, const std::string& path,
                    const struct stat& st, const StatEntry* c, StatEntry& e, bool& changed) {
    if (S_ISREG(st.st_mode) && shared_.options.max_file_size != 0 &&
        static_cast<std::uint64_t>(st.st_size) > shared_.options.max_file_size) {
      skip(path, kOverMaxFileSize, st);
      if (shared_.copies != nullptr) {
        out_.skipped.back().copy = shared_.copies->keep(dirfd, name, path, st);
      }
      return false;
    }
    std::uint32_t mode = S_ISLNK(st.st_mode)      ? kModeLink
                         : (st.st_mode & S_IXUSR) ? kModeExec
                                                  : kModeFile;
    if (trusted(c, mode, st)) {
      e = *c;
      return true;
    }
    changed = true;
    if (std::optional<git_oid> id = from_checkout(dirfd, name, path, mode, st)) {
      e.oid = *id;
      e.set_mode(mode);
      record_stat(e, st);
      return true;
    }
    return S_ISLNK(st.st_mode) ? hash_link(dirfd, name, path, st, e)
                               : hash_file(dirfd, name, path, e);
  }

  // With queued (a directory being split: its subdirectories are captured as tasks),
  // hands record over as *pending_record for Capture to finish once their trees are
  // known; otherwise finishes it.
  git_oid finish_or_hand_over(const std::string& dir, DirRecord record, bool changed,
                              const std::vector<SubdirTask>* queued, DirRecord* pending_record) {
    if (queued == nullptr) return finish_dir(dir, std::move(record), changed);
    *pending_record = std::move(record);
    pending_changed_ = changed;
    return git_oid{};
  }

  // Computes (and if new, writes) the tree of a directory and records it.
  git_oid finish_dir(const std::string& dir, DirRecord record, bool changed) {
    const DirRecord* cached = shared_.previous.find_dir(dir);
    // Every entry was found unchanged in the cached record; the same count means the
    // same set of names.
    changed = changed || cached == nullptr || cached->entries.size() != record.entries.size();
    git_oid tree;
    if (!changed) {
      // Same names, same modes, same ids: the same tree.
      tree = cached->tree;
    } else {
      std::vector<TreeItem> items;
      items.reserve(record.entries.size());
      for (const StatEntry& e : record.entries) {
        items.push_back(TreeItem{record.name(e), e.mode(), e.oid});
      }
      tree = store_object(encode_tree(items), GIT_OBJECT_TREE);
      out_.changed = true;
    }
    record.tree = tree;
    record.shrink_to_fit();  // kept as long as the cache: for a daemon, its life
    out_.records.emplace_back(dir, std::move(record));
    return tree;
  }

  bool pending_changed() const { return pending_changed_; }
  const IgnoreRules& rules() const { return rules_; }
  WalkOutput& output() { return out_; }

 private:
  // The blob id the checkout's index gives the file, once its content is confirmed to
  // be that blob's, with the blob stored. The index is in the workspace: whoever writes
  // the workspace can write it (an id and stat data for content that is not on disk),
  // and the checkout's packs too. Confirming costs a read and a hash; what the checkout
  // saves is compressing the object, when its packs hold it whole (the bytes are
  // decompressed and compared with the content before they are written).
  std::optional<git_oid> from_checkout(int dirfd, const std::string& name, const std::string& path,
                                       std::uint32_t mode, const struct stat& st) {
    if (shared_.checkout == nullptr) return std::nullopt;
    std::optional<git_oid> id = shared_.checkout->blob_for(path, mode, st);
    if (!id) return std::nullopt;
    std::optional<std::string> content =
        mode == kModeLink ? read_link(dirfd, name, path, st) : read_small(dirfd, name, path, st);
    if (!content) return std::nullopt;
    const std::string& bytes = *content;
    git_oid actual;
    git::check(git_odb_hash(&actual, bytes.data(), bytes.size(), GIT_OBJECT_BLOB),
               "cannot hash " + path);
    if (!git_oid_equal(&actual, &*id)) return std::nullopt;  // read and stored as any file
    thread_local std::string compressed;
    if (store_lacks(*id) && shared_.checkout->compressed_blob(*id, *content, compressed)) {
      shared_.pack->add(*id, *content, GIT_OBJECT_BLOB, compressed);
    } else {
      store_hashed(*id, *content, GIT_OBJECT_BLOB);
    }
    return id;
  }

  // The content of a regular file of st's size, or nullopt if it is not that any more
  // (then it is read again as any file is).
  std::optional<std::string> read_small(int dirfd, const std::string& name, const std::string& path,
                                        const struct stat& st) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) return std::nullopt;
    struct stat now;
    if (::fstat(fd.get(), &now) != 0 || !S_ISREG(now.st_mode) || now.st_size != st.st_size) {
      return std::nullopt;
    }
    try {
      return read_whole_file(fd.get(), static_cast<std::uint64_t>(st.st_size), path);
    } catch (const Error&) {
      return std::nullopt;
    }
  }

  // A symlink's target, or nullopt if it is not st's size any more.
  static std::optional<std::string> read_link(int dirfd, const std::string& name,
                                              const std::string& /*path*/, const struct stat& st) {
    std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
    if (n < 0 || n != st.st_size) return std::nullopt;
    target.resize(static_cast<std::size_t>(n));
    return target;
  }

  // Stores an object: into the capture's pack when it has one and the store lacks the
  // object (looked up without rescanning the pack directory, which libgit2 does for
  // every object it writes and does not find), else through the object database.
  git_oid store_object(std::string_view data, git_object_t type) {
    if (shared_.pack == nullptr || data.size() > kStreamedBlobSize) {
      return write_object(odb_, data, type);
    }
    git_oid oid;
    git::check(git_odb_hash(&oid, data.data(), data.size(), type), "cannot hash an object");
    store_hashed(oid, data, type);
    return oid;
  }

  // store_object for an object whose id oid the caller computed, on a capture with a
  // pack.
  void store_hashed(const git_oid& oid, std::string_view data, git_object_t type) {
    if (shared_.pack->contains(oid)) return;
    if (git_odb_exists_ext(odb_, &oid, GIT_ODB_LOOKUP_NO_REFRESH) != 0) {
      write_object(odb_, data, type);  // freshens it, for gc's grace period
      return;
    }
    shared_.pack->add(oid, data, type);
  }

  // Whether neither the capture's pack nor the store holds oid yet.
  bool store_lacks(const git_oid& oid) const {
    return !shared_.pack->contains(oid) &&
           git_odb_exists_ext(odb_, &oid, GIT_ODB_LOOKUP_NO_REFRESH) == 0;
  }

  // Whether name is reserved for a restore's temporary file: never captured, and
  // removed when the restore that wrote it is gone (killed; the caller holds the store
  // lock, so no restore of this store is writing).
  static bool reserved(int dirfd, const std::string& name) {
    std::optional<pid_t> owner = restore_temp_owner(name);
    if (!owner) return false;
    if (!restore_may_be_running(*owner)) ::unlinkat(dirfd, name.c_str(), 0);
    return true;
  }

  bool trusted(const StatEntry* c, std::uint32_t mode, const struct stat& st) const {
    std::int64_t cutoff = shared_.previous.scan_started_ns();
    return c != nullptr && c->mode() == mode &&
           c->size() == static_cast<std::uint64_t>(st.st_size) &&
           c->size() != StatEntry::kMaxSize && c->mtime_ns == ns_of(st.st_mtim) &&
           c->ctime_ns == ns_of(st.st_ctim) && c->ino == st.st_ino && c->mtime_ns < cutoff &&
           c->ctime_ns < cutoff;
  }

  void record_stat(StatEntry& e, const struct stat& st) const {
    e.set_size(static_cast<std::uint64_t>(st.st_size));
    e.mtime_ns = ns_of(st.st_mtim);
    e.ctime_ns = ns_of(st.st_ctim);
    e.ino = st.st_ino;
    if (e.mtime_ns >= shared_.cutoff_ns || e.ctime_ns >= shared_.cutoff_ns) e.mtime_ns = kSmudgedNs;
  }

  // Reads and stores a regular file; returns false if it vanished meanwhile.
  bool hash_file(int dirfd, const std::string& name, const std::string& path, StatEntry& e) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
      if (errno == ENOENT) return false;
      if (errno == ELOOP) {
        throw Error(ErrorCode::kConflict, path + " changed type while being captured");
      }
      fail_io("read", path, errno);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) fail_io("stat", path, errno);
    if (!S_ISREG(st.st_mode)) {
      throw Error(ErrorCode::kConflict, path + " changed type while being captured");
    }
    auto size = static_cast<std::uint64_t>(st.st_size);
    e.oid = shared_.pack != nullptr && size <= kStreamedBlobSize
                ? store_object(read_whole_file(fd.get(), size, path), GIT_OBJECT_BLOB)
                : write_blob_from_fd(odb_, shared_.git_dir, fd.get(), size, path);
    e.set_mode((st.st_mode & S_IXUSR) ? kModeExec : kModeFile);
    record_stat(e, st);
    shared_.files_hashed.fetch_add(1, std::memory_order_relaxed);
    shared_.bytes_hashed.fetch_add(static_cast<std::uint64_t>(st.st_size),
                                   std::memory_order_relaxed);
    shared_.report_progress();
    return true;
  }

  // Stores a symlink's target; returns false if it vanished meanwhile.
  bool hash_link(int dirfd, const std::string& name, const std::string& path, const struct stat& st,
                 StatEntry& e) {
    std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
    for (;;) {
      ssize_t n = ::readlinkat(dirfd, name.c_str(), target.data(), target.size());
      if (n < 0) {
        if (errno == ENOENT) return false;
        fail_io("read link", path, errno);
      }
      if (static_cast<std::size_t>(n) < target.size()) {
        target.resize(static_cast<std::size_t>(n));
        break;
      }
      target.resize(target.size() * 2);
    }
    e.oid = store_object(target, GIT_OBJECT_BLOB);
    e.set_mode(kModeLink);
    record_stat(e, st);
    shared_.files_hashed.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  void skip(const std::string& path, std::string_view reason, const struct stat& st) {
    out_.skipped.push_back(
        SkippedPath{path, std::string(reason), static_cast<std::uint64_t>(st.st_size)});
  }

  // Reads dir's .gitignore into the rules if present (the directory lists one).
  void load_gitignore(int dirfd, const std::string& dir, bool present) {
    if (!present) return;
    UniqueFd fd(::openat(dirfd, ".gitignore", O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0) return;
    std::string text;
    char buf[8192];
    for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0;) {
      text.append(buf, static_cast<std::size_t>(n));
    }
    rules_.add_file(dir, text);
  }

  SharedState& shared_;
  git_odb* odb_;
  IgnoreRules rules_;
  WalkOutput out_;
  bool pending_changed_ = false;
};

// Threads a capture shares its directories among. A walk of the whole tree takes more
// than the cores: where files or their inodes are not in memory (a first capture, from a
// disk), each thread waits for its reads, and more reads in flight keep the disk busy;
// from memory the extra threads cost nothing measurable. A capture of what the watcher
// saw change reads little: one thread per core.
unsigned capture_threads(bool whole_tree) {
  static const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  return whole_tree ? std::clamp(2 * cores, 8u, 32u) : cores;
}

// Directories more than this many levels below the root are never split.
constexpr int kMaxSplitDepth = 4;

// A directory split into tasks: its own entries captured, its subdirectories queued;
// finished by the thread that captures the last of them.
struct SplitDir {
  std::string path;
  UniqueFd fd;
  DirRecord record;
  bool changed = false;
  std::vector<SubdirTask> tasks;  // not resized once queued
  std::size_t remaining = 0;      // tasks not captured yet (under Capture::mutex_)
  SplitDir* parent = nullptr;     // nullptr for the root
  std::size_t task_in_parent = 0;
  int depth = 0;
  git_oid tree{};
};

// Captures: the root's own entries on this thread, its subdirectories on a pool of
// threads (each with its own object database handle), then the root tree. Walking the
// whole tree, a thread that takes a directory while fewer are queued than there are
// threads (a repository whose files are all under src/ would leave one thread with most
// of the tree) splits it: it captures the directory's own entries and queues its
// subdirectories, and the thread that captures the last of them finishes it.
class Capture {
 public:
  Capture(ShadowRepo::Impl& repo, const CaptureOptions& options, StatCache previous,
          std::int64_t now_ns, const CaptureScope* scope, const LargeFileCopies* copies)
      : repo_(repo),
        workspace_(copies != nullptr),
        previous_(std::move(previous)),
        shared_{options, previous_, scope, now_ns - kRacyMarginNs} {
    shared_.workspace = workspace_;
    shared_.copies = copies;
    shared_.git_dir = repo_.git_dir;
  }

  CaptureResult run(const std::string& root) {
    CaptureResult result;
    result.cache.set_workspace(previous_.workspace());
    result.cache.set_scan_started_ns(shared_.cutoff_ns);
    UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (root_fd.get() < 0) fail_io("open workspace", root, errno);
    if (workspace_ && shared_.scope == nullptr && shared_.previous.find_dir("") == nullptr) {
      // Nothing to go by: about every file is new to the store. One pack for them all,
      // and the ids the checkout's index vouches for, if it is one.
      pack_ = std::make_unique<PackWriter>(repo_.git_dir / "objects" / "pack");
      shared_.pack = pack_.get();
      if (shared_.options.use_git_index) {
        checkout_ = CheckoutIndex::open(root);
        shared_.checkout = checkout_.get();
      }
    }
    Walker main(shared_, repo_.odb.get(), exclude_rules(shared_.options));
    SplitDir& top = splits_.emplace_back();
    top.fd = std::move(root_fd);
    main.capture_dir(top.fd.get(), "", &top.tasks, &top.record);
    top.changed = main.pending_changed();
    run_tasks(main, top);
    result.tree = top.tree;
    if (pack_) {
      pack_->finish(repo_.odb.get());
      git_odb_refresh(repo_.odb.get());
    }

    std::unordered_set<std::string> walked;
    if (shared_.scope != nullptr) {
      // The directories not walked keep their records: start from the old cache.
      for (const auto& [dir, record] : main.output().records) walked.insert(dir);
      for (auto& w : workers_) {
        for (const auto& [dir, record] : w->output().records) walked.insert(dir);
      }
      for (const std::string& dir : main.output().known_dirs) walked.erase(dir);
      for (auto& w : workers_) {
        for (const std::string& dir : w->output().known_dirs) walked.erase(dir);
      }
      previous_.set_scan_started_ns(shared_.cutoff_ns);
      result.cache = std::move(previous_);
    }
    std::vector<std::string> gone;  // directories a walked directory no longer holds
    merge(main.output(), result, shared_.scope != nullptr ? &gone : nullptr);
    for (auto& w : workers_) merge(w->output(), result, shared_.scope != nullptr ? &gone : nullptr);
    for (const std::string& dir : gone) result.cache.drop_subtree(dir);
    if (shared_.scope != nullptr) carry_over(*shared_.scope, walked, result);
    std::sort(result.skipped.begin(), result.skipped.end(),
              [](const SkippedPath& a, const SkippedPath& b) { return a.path < b.path; });
    std::sort(result.uncaptured.begin(), result.uncaptured.end());
    result.progress = shared_.progress();
    result.progress.done = true;
    if (shared_.options.on_progress) shared_.options.on_progress(result.progress);
    return result;
  }

 private:
  // Opens subdirectory name of the directory open at dirfd (path names it); an invalid
  // descriptor if it is gone.
  static UniqueFd open_subdir(int dirfd, const std::string& name, const std::string& path) {
    UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub.valid() && errno != ENOENT) fail_io("open directory", path, errno);
    return sub;
  }

  // A subdirectory to capture: the task-th of in.
  struct Job {
    SplitDir* in;
    std::size_t task;
  };

  // Captures top's queued subdirectories on up to threads_ threads (this one among them),
  // then finishes top.
  void run_tasks(Walker& main, SplitDir& top) {
    // Only a walk of the whole tree is split: a capture of what the watcher saw change
    // shares the root's subdirectories, as few as they are.
    bool whole_tree = shared_.scope == nullptr;
    threads_ = capture_threads(whole_tree);
    split_ = whole_tree;
    if (top.tasks.empty()) {
      finish_split(main, top);
      return;
    }
    queue(top);
    unsigned extra = split_ ? threads_ - 1 : std::min<std::size_t>(threads_, top.tasks.size()) - 1;
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < extra; ++i) {
      odbs_.push_back(repo_.open_odb());
      workers_.push_back(std::make_unique<Walker>(shared_, odbs_.back().get(), main.rules()));
    }
    for (unsigned i = 0; i < extra; ++i) {
      threads.emplace_back([this, &w = *workers_[i]] { work(w); });
    }
    work(main);
    for (std::thread& t : threads) t.join();
    if (error_) std::rethrow_exception(error_);
  }

  // Queues the subdirectories of d (which has some).
  void queue(SplitDir& d) {
    std::lock_guard<std::mutex> lock(mutex_);
    d.remaining = d.tasks.size();
    for (std::size_t t = 0; t < d.tasks.size(); ++t) jobs_.push_back(Job{&d, t});
    ready_.notify_all();
  }

  // One thread's share: jobs until the root is finished (or a thread failed).
  void work(Walker& walker) {
    try {
      for (;;) {
        Job job{};
        bool split = false;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          ready_.wait(lock, [&] { return !jobs_.empty() || finished_ || shared_.failed; });
          if (jobs_.empty()) return;  // finished, or failed
          job = jobs_.front();
          jobs_.pop_front();
          split = split_ && job.in->depth < kMaxSplitDepth && jobs_.size() < threads_;
        }
        take(walker, job, split);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      shared_.failed = true;
      ready_.notify_all();
    }
  }

  // Captures the subdirectory of job: whole, or split.
  void take(Walker& walker, const Job& job, bool split) {
    SubdirTask& t = job.in->tasks[job.task];
    std::string path = join(job.in->path, t.name);
    UniqueFd fd = open_subdir(job.in->fd.get(), t.name, path);
    if (!fd.valid()) return captured(walker, *job.in, job.task, git_oid{});  // gone: dropped
    if (!split) {
      return captured(walker, *job.in, job.task,
                      walker.capture_dir(fd.get(), path, nullptr, nullptr));
    }
    SplitDir* d = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      d = &splits_.emplace_back();
    }
    d->path = std::move(path);
    d->fd = std::move(fd);
    d->parent = job.in;
    d->task_in_parent = job.task;
    d->depth = job.in->depth + 1;
    walker.capture_dir(d->fd.get(), d->path, &d->tasks, &d->record);
    d->changed = walker.pending_changed();
    if (d->tasks.empty()) {
      finish_split(walker, *d);
      return captured(walker, *job.in, job.task, d->tree);
    }
    queue(*d);
  }

  // Records the tree of the task-th subdirectory of in (zero: it is gone); the last one
  // to be captured finishes in, and so on up.
  void captured(Walker& walker, SplitDir& in, std::size_t task, const git_oid& tree) {
    SplitDir* dir = &in;
    dir->tasks[task].tree = tree;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--dir->remaining != 0) return;
      }
      finish_split(walker, *dir);
      if (dir->parent == nullptr) {
        std::lock_guard<std::mutex> lock(mutex_);
        finished_ = true;
        ready_.notify_all();
        return;
      }
      dir->parent->tasks[dir->task_in_parent].tree = dir->tree;
      dir = dir->parent;
    }
  }

  // Finishes d once the trees of its subdirectories are known.
  void finish_split(Walker& walker, SplitDir& d) {
    const DirRecord* cached = shared_.previous.find_dir(d.path);
    for (const SubdirTask& t : d.tasks) {
      StatEntry& e = d.record.entries[t.entry_index];
      e.oid = t.tree;
      const StatEntry* c = cached ? StatCache::find_entry(*cached, t.name) : nullptr;
      if (c == nullptr || c->mode() != kModeTree || !git_oid_equal(&c->oid, &e.oid)) {
        d.changed = true;
      }
    }
    // Subdirectories that vanished before a thread reached them are dropped.
    std::erase_if(d.record.entries, [](const StatEntry& e) {
      return e.mode() == kModeTree && git_oid_is_zero(&e.oid);
    });
    d.tree = walker.finish_dir(d.path, std::move(d.record), d.changed);
    d.fd.reset();  // its subdirectories are all open or done
  }

  // After a scoped capture: keeps what the last capture reported in the directories
  // not walked this time.
  static void carry_over(const CaptureScope& scope, const std::unordered_set<std::string>& walked,
                         CaptureResult& result) {
    auto kept = [&](const std::string& path) {
      std::string dir = parent_of(path);
      return walked.count(dir) == 0 && result.cache.find_dir(dir) != nullptr;
    };
    for (const SkippedPath& s : scope.skipped()) {
      if (kept(s.path)) result.skipped.push_back(s);
    }
    for (const std::string& u : scope.uncaptured()) {
      if (kept(u)) result.uncaptured.push_back(u);
    }
    result.cache_changed = true;
  }

  // Adds to gone the subdirectories of dir that its old record has and its new one does
  // not (removed, moved away, or now a file or a symlink).
  static void add_gone(const std::string& dir, const DirRecord& old, const DirRecord& now,
                       std::vector<std::string>& gone) {
    for (const StatEntry& e : old.entries) {
      if (e.mode() != kModeTree) continue;
      const StatEntry* still = StatCache::find_entry(now, old.name(e));
      if (still == nullptr || still->mode() != kModeTree) gone.push_back(join(dir, old.name(e)));
    }
  }

  // Moves what a walker found into the result. With gone (a scoped capture, into the
  // last capture's cache), adds the subdirectories each walked directory no longer
  // holds: only their records are dropped afterwards, so that a boundary costs what
  // changed, not a pass over every directory's record.
  static void merge(WalkOutput& from, CaptureResult& into, std::vector<std::string>* gone) {
    into.skipped.insert(into.skipped.end(), std::make_move_iterator(from.skipped.begin()),
                        std::make_move_iterator(from.skipped.end()));
    into.uncaptured.insert(into.uncaptured.end(), std::make_move_iterator(from.uncaptured.begin()),
                           std::make_move_iterator(from.uncaptured.end()));
    for (auto& [dir, record] : from.records) {
      const DirRecord* old = gone != nullptr ? into.cache.find_dir(dir) : nullptr;
      if (old != nullptr) add_gone(dir, *old, record, *gone);
      into.cache.put_dir(dir, std::move(record));
    }
    into.cache_changed = into.cache_changed || from.changed;
  }

  ShadowRepo::Impl& repo_;
  bool workspace_;
  StatCache previous_;
  SharedState shared_;
  std::unique_ptr<CheckoutIndex> checkout_;
  std::unique_ptr<PackWriter> pack_;
  std::vector<git::Odb> odbs_;
  std::vector<std::unique_ptr<Walker>> workers_;
  unsigned threads_ = 1;
  bool split_ = false;             // whether directories other than the root are split
  std::mutex mutex_;               // guards what follows, and each SplitDir's remaining
  std::condition_variable ready_;  // a job was queued, the root finished, or a thread failed
  std::deque<SplitDir> splits_;    // the root first (never moved: a deque)
  std::deque<Job> jobs_;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace

IgnoreRules exclude_rules(const CaptureOptions& options) {
  IgnoreRules rules;
  if (!options.excludes.empty()) rules.add("", options.excludes);
  return rules;
}

CaptureScope::CaptureScope(const ChangedDirs& changes, std::vector<SkippedPath> skipped,
                           std::vector<std::string> uncaptured)
    : everything_(changes.everything),
      subtrees_(changes.subtrees),
      skipped_(std::move(skipped)),
      uncaptured_(std::move(uncaptured)) {
  walk_.insert("");
  auto add_with_ancestors = [&](std::string dir) {
    while (walk_.insert(dir).second && !dir.empty()) dir = parent_of(dir);
  };
  read_.insert(changes.dirs.begin(), changes.dirs.end());
  for (const std::string& d : changes.dirs) add_with_ancestors(d);
  for (const std::string& d : changes.subtrees) add_with_ancestors(d);
}

bool CaptureScope::must_read(const std::string& dir) const {
  return everything_ || read_.count(dir) != 0 || in_new_subtree(dir);
}

bool CaptureScope::must_walk(const std::string& dir) const {
  return everything_ || walk_.count(dir) != 0 || in_new_subtree(dir);
}

bool CaptureScope::in_new_subtree(const std::string& dir) const {
  for (std::string d = dir;; d = parent_of(d)) {
    if (subtrees_.count(d) != 0) return true;
    if (d.empty()) return false;
  }
}

CaptureResult capture_workspace(const std::string& root, ShadowRepo::Impl& repo,
                                const CaptureOptions& options, StatCache previous,
                                std::int64_t now_ns, const CaptureScope* scope,
                                const LargeFileCopies* copies) {
  return Capture(repo, options, std::move(previous), now_ns, scope, copies).run(root);
}

}  // namespace fsnap
