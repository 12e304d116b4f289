#include "fsnap/shadow_repo.hpp"

#include <fcntl.h>
#include <git2/sys/repository.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include <boost/filesystem.hpp>

#include "fsnap/posix.hpp"
#include "shadow_repo_impl.hpp"
#include "stored_blobs.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

// Loose objects are compressed at zlib's fastest level: checkpoints are written far
// more often than they are read, and `git gc` can repack them tighter later.
constexpr int kLooseCompressionLevel = 1;

void validate_text(std::string_view kind, std::string_view value) {
  if (value.size() > kMaxTagBytes) {
    throw Error(ErrorCode::kInvalidArgument, std::string(kind) + " " + quote_input(value) +
                                                 " is longer than " + std::to_string(kMaxTagBytes) +
                                                 " bytes");
  }
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) {
      throw Error(ErrorCode::kInvalidArgument,
                  std::string(kind) + " " + quote_input(value) + " must be one line of text");
    }
  }
}

// The object database of the repository at git_dir; with stored_writes, the streams it
// opens write loose objects of stored deflate blocks (stored_blobs.hpp).
git::Odb open_odb(const fs::path& git_dir, bool stored_writes = false) {
  std::string objects = (git_dir / "objects").string();
  git_odb* raw = nullptr;
  git::check(git_odb_new(&raw), "cannot create object database");
  git::Odb odb(raw);
  git_odb_backend* loose = nullptr;
  // Objects are the user's files: readable by the user alone, whatever the umask.
  git::check(git_odb_backend_loose(&loose, objects.c_str(), kLooseCompressionLevel, 0, 0700, 0400),
             "cannot open loose objects in " + objects);
  git::check(git_odb_add_backend(odb.get(), loose, 2), "cannot add loose object backend");
  git_odb_backend* packs = nullptr;
  git::check(git_odb_backend_pack(&packs, objects.c_str()), "cannot open packs in " + objects);
  git::check(git_odb_add_backend(odb.get(), packs, 1), "cannot add pack backend");
  if (stored_writes) {
    git::check(git_odb_add_backend(odb.get(), new_stored_blob_backend(objects), 3),
               "cannot add the stored-object backend");
  }
  return odb;
}

// The fsck checks of git that are about checking a tree out, not about the repository's
// health: a workspace may hold a .gitmodules git would refuse to use, a directory named
// .GIT or git~1, and the store never checks anything out. With these off, `git fsck`
// on the store judges what shadowbox wrote.
constexpr const char* kWorkspaceContentChecks[] = {"gitmodulesName",
                                                   "gitmodulesUrl",
                                                   "gitmodulesPath",
                                                   "gitmodulesParse",
                                                   "gitmodulesBlob",
                                                   "gitmodulesSymlink",
                                                   "gitmodulesLarge",
                                                   "gitmodulesMissing",
                                                   "gitmodulesUpdate",
                                                   "hasDotgit",
                                                   "hasDot",
                                                   "hasDotdot",
                                                   "fullPathname",
                                                   "emptyName",
                                                   "gitattributesLarge",
                                                   "gitattributesLineLength",
                                                   "gitattributesSymlink",
                                                   "gitattributesBlob",
                                                   "gitattributesMissing",
                                                   "gitignoreSymlink",
                                                   "mailmapSymlink"};

// Sets the fsck configuration of kWorkspaceContentChecks, unless a store has it already.
void configure_fsck(git_repository* repo, const fs::path& git_dir) {
  git_config* raw = nullptr;
  git::check(git_repository_config(&raw, repo), "cannot open config of " + git_dir.string());
  git::Config config(raw);
  std::string last = std::string("fsck.") + std::end(kWorkspaceContentChecks)[-1];
  git_config_entry* entry = nullptr;
  if (git_config_get_entry(&entry, config.get(), last.c_str()) == 0) {
    git_config_entry_free(entry);
    return;
  }
  for (const char* check : kWorkspaceContentChecks) {
    std::string key = std::string("fsck.") + check;
    git::check(git_config_set_string(config.get(), key.c_str(), "ignore"), "config");
  }
}

void configure_new_repository(git_repository* repo, const fs::path& git_dir) {
  git_config* raw = nullptr;
  git::check(git_repository_config(&raw, repo), "cannot open config of " + git_dir.string());
  git::Config config(raw);
  // No reflogs (the run chains are the history) and no automatic gc by anyone who runs
  // git in the store: retention is `shadowbox gc`'s job.
  git::check(git_config_set_bool(config.get(), "core.logAllRefUpdates", 0), "config");
  git::check(git_config_set_int32(config.get(), "gc.auto", 0), "config");
  git::check(git_config_set_string(config.get(), "gc.reflogExpire", "never"), "config");
  // HEAD must name a branch for git to call the repository valid (`git fsck`), but
  // checkpoints live under refs/shadowbox/, so HEAD is an unborn branch that nothing
  // ever moves: browse with `git log --all` or a run's ref.
  git_reference* head = nullptr;
  git::check(git_reference_symbolic_create(&head, repo, "HEAD", layout::kUnbornHead, 1, nullptr),
             "cannot set HEAD of " + git_dir.string());
  git_reference_free(head);
}

}  // namespace

void validate_ref_component(std::string_view kind, std::string_view name) {
  if (name.size() > kMaxTagBytes) {
    throw Error(ErrorCode::kInvalidArgument, "invalid " + std::string(kind) + " name " +
                                                 quote_input(name) + ": longer than " +
                                                 std::to_string(kMaxTagBytes) + " bytes");
  }
  std::string full = layout::tag_ref(name);
  int valid = 0;
  if (name.empty() || name.find('/') != std::string_view::npos ||
      git_reference_name_is_valid(&valid, full.c_str()) != 0 || !valid) {
    throw Error(ErrorCode::kInvalidArgument,
                "invalid " + std::string(kind) + " name " + quote_input(name) +
                    ": use letters, digits, '-', '_' and '.' (no '/', spaces or '..')");
  }
}

namespace layout {

bool is_valid_run_name(std::string_view run) {
  try {
    check_run_name(run);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void check_run_name(std::string_view run) {
  git::ensure_initialized();
  validate_ref_component("run", run);
}

}  // namespace layout

// ---- Impl -------------------------------------------------------------------------

git_oid write_object(git_odb* odb, std::string_view data, git_object_t type) {
  git_oid oid;
  git::check(git_odb_write(&oid, odb, data.data(), data.size(), type),
             "cannot write to the shadow repository");
  return oid;
}

git::Odb ShadowRepo::Impl::open_odb() const {
  return fsnap::open_odb(git_dir);
}

void fsync_path(const fs::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw system_error("cannot open " + path.string(), errno);
  if (::fsync(fd.get()) != 0) throw system_error("cannot sync " + path.string(), errno);
}

std::string read_whole_file(int fd, std::uint64_t size, const std::string& path_for_errors) {
  std::string data(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, data.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw system_error("cannot read " + path_for_errors, errno);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got != size) {
    throw Error(ErrorCode::kConflict, path_for_errors + " changed size while being read");
  }
  return data;
}

git_oid write_blob_from_fd(git_odb* odb, const fs::path& git_dir, int fd, std::uint64_t size,
                           const std::string& path_for_errors) {
  constexpr std::size_t kChunk = 1 << 20;
  auto read_fail = [&]() { return system_error("cannot read " + path_for_errors, errno); };
  if (size <= 8 * kChunk) {
    return write_object(odb, read_whole_file(fd, size, path_for_errors), GIT_OBJECT_BLOB);
  }
  // Content zlib cannot shrink is stored as it is, at the speed of a copy.
  git::Odb stored;
  if (resists_compression(fd, size)) {
    stored = open_odb(git_dir, /*stored_writes=*/true);
    odb = stored.get();
  }
  git_odb_stream* raw = nullptr;
  git::check(git_odb_open_wstream(&raw, odb, size, GIT_OBJECT_BLOB),
             "cannot open object stream for " + path_for_errors);
  std::unique_ptr<git_odb_stream, void (*)(git_odb_stream*)> stream(raw, git_odb_stream_free);
  std::string buf(kChunk, '\0');
  std::uint64_t left = size;
  while (left > 0) {
    ssize_t n = ::read(fd, buf.data(), std::min<std::uint64_t>(left, kChunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw read_fail();
    if (n == 0) throw Error(ErrorCode::kConflict, path_for_errors + " shrank while being read");
    git::check(git_odb_stream_write(stream.get(), buf.data(), static_cast<std::size_t>(n)),
               "cannot write object for " + path_for_errors);
    left -= static_cast<std::uint64_t>(n);
  }
  git_oid oid;
  git::check(git_odb_stream_finalize_write(&oid, stream.get()),
             "cannot finish object for " + path_for_errors);
  return oid;
}

std::string ShadowRepo::Impl::read(const git_oid& oid, git_object_t expected_type) const {
  git_odb_object* raw = nullptr;
  git::check(git_odb_read(&raw, odb.get(), &oid),
             "cannot read object " + git::to_hex(oid) + " in " + git_dir.string());
  git::OdbObject object(raw);
  if (git_odb_object_type(object.get()) != expected_type) {
    throw Error(ErrorCode::kCorrupt, "object " + git::to_hex(oid) + " has an unexpected type");
  }
  return std::string(static_cast<const char*>(git_odb_object_data(object.get())),
                     git_odb_object_size(object.get()));
}

void ShadowRepo::Impl::read_blob_in_pieces(
    const git_oid& oid, const std::function<void(const char*, std::size_t)>& sink) const {
  std::size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  git::check(git_odb_read_header(&size, &type, odb.get(), &oid),
             "cannot read object " + git::to_hex(oid) + " in " + git_dir.string());
  if (type != GIT_OBJECT_BLOB) {
    throw Error(ErrorCode::kCorrupt, "object " + git::to_hex(oid) + " has an unexpected type");
  }
  if (size > kStreamedBlobSize) {
    git_odb_stream* raw = nullptr;
    std::size_t length = 0;
    if (git_odb_open_rstream(&raw, &length, &type, odb.get(), &oid) == 0) {
      std::unique_ptr<git_odb_stream, void (*)(git_odb_stream*)> stream(raw, git_odb_stream_free);
      std::string buffer(1 << 20, '\0');
      std::size_t total = 0;
      for (;;) {
        int n = git_odb_stream_read(stream.get(), buffer.data(), buffer.size());
        git::check(n, "cannot read object " + git::to_hex(oid));
        if (n == 0) break;
        sink(buffer.data(), static_cast<std::size_t>(n));
        total += static_cast<std::size_t>(n);
      }
      if (total != size) {
        throw Error(ErrorCode::kCorrupt, "object " + git::to_hex(oid) + " is truncated");
      }
      return;
    }
    git_error_clear();  // in a pack: no stream, read whole below
  }
  std::string data = read(oid, GIT_OBJECT_BLOB);
  sink(data.data(), data.size());
}

git::Tree ShadowRepo::Impl::lookup_tree(const git_oid& oid) const {
  git_tree* raw = nullptr;
  git::check(git_tree_lookup(&raw, repo.get(), &oid), "cannot read tree " + git::to_hex(oid));
  return git::Tree(raw);
}

bool ShadowRepo::descends_from(std::string_view newer, std::string_view older) const {
  if (newer == older) return true;
  git_oid descendant = git::from_hex(newer);
  git_oid ancestor = git::from_hex(older);
  int rc = git_graph_descendant_of(impl_->repo.get(), &descendant, &ancestor);
  if (rc < 0) {
    git_error_clear();  // older (or newer) is gone: no history joins them
    return false;
  }
  return rc == 1;
}

std::size_t ShadowRepo::commits_between(std::string_view newer, std::string_view older,
                                        std::size_t limit) const {
  git_revwalk* raw = nullptr;
  git::check(git_revwalk_new(&raw, impl_->repo.get()), "cannot walk the history");
  git::Revwalk walk(raw);
  git_oid from = git::from_hex(newer);
  git::check(git_revwalk_push(walk.get(), &from), "cannot walk from " + std::string(newer));
  if (!older.empty()) {
    git_oid hidden = git::from_hex(older);
    // A commit this repository does not have hides nothing.
    if (git_revwalk_hide(walk.get(), &hidden) < 0) git_error_clear();
  }
  std::size_t count = 0;
  git_oid oid;
  while (count < limit && git_revwalk_next(&oid, walk.get()) == 0) ++count;
  return count;
}

std::optional<std::string> ShadowRepo::ref_target(const std::string& ref) const {
  std::optional<git_oid> target = impl_->ref_target(ref);
  if (!target) return std::nullopt;
  return git::to_hex(*target);
}

std::optional<git_oid> ShadowRepo::Impl::ref_target(const std::string& name) const {
  git_oid oid;
  int rc = git_reference_name_to_id(&oid, repo.get(), name.c_str());
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  git::check(rc, "cannot read ref " + name);
  return oid;
}

Checkpoint ShadowRepo::Impl::checkpoint_of(const git_commit* commit) const {
  Checkpoint c = parse_checkpoint_commit(commit);
  drop_moved_tag(c);
  return c;
}

Checkpoint ShadowRepo::Impl::parse_checkpoint_commit(const git_commit* commit) const {
  Checkpoint c;
  const char* message = git_commit_message_raw(commit);
  if (message == nullptr || !parse_checkpoint_message(message, c)) {
    throw Error(ErrorCode::kNotFound,
                "commit " + git::to_hex(*git_commit_id(commit)) + " is not a shadowbox checkpoint");
  }
  c.commit = git::to_hex(*git_commit_id(commit));
  c.tree = git::to_hex(*git_commit_tree_id(commit));
  if (git_commit_parentcount(commit) > 0) c.parent = git::to_hex(*git_commit_parent_id(commit, 0));
  if (c.created_at == std::chrono::system_clock::time_point{}) {
    c.created_at = std::chrono::system_clock::from_time_t(git_commit_time(commit));
  }
  return c;
}

void ShadowRepo::Impl::drop_moved_tag(Checkpoint& c) const {
  if (c.meta.tag.empty()) return;
  // A tag moved since (`snapshot --force`) is shown only where it points now.
  std::optional<git_oid> tagged = ref_target(layout::tag_ref(c.meta.tag));
  if (!tagged || git::to_hex(*tagged) != c.commit) c.meta.tag.clear();
}

std::vector<Checkpoint> ShadowRepo::Impl::run_log(std::string_view run, std::size_t limit) const {
  std::vector<Checkpoint> out;
  std::optional<git_oid> next = ref_target(layout::run_ref(run));
  while (next && (limit == 0 || out.size() < limit)) {
    std::optional<CommitCache::Entry> entry = commits.find(*next);
    if (!entry) {
      git_commit* raw = nullptr;
      git::check(git_commit_lookup(&raw, repo.get(), &*next),
                 "cannot read checkpoint " + git::to_hex(*next) + " of run " + std::string(run));
      git::Commit commit(raw);
      entry = CommitCache::Entry{parse_checkpoint_commit(commit.get()), std::nullopt};
      if (git_commit_parentcount(commit.get()) > 0)
        entry->parent = *git_commit_parent_id(commit.get(), 0);
      commits.put(*next, *entry);
    }
    next = entry->parent;
    drop_moved_tag(entry->checkpoint);
    out.push_back(std::move(entry->checkpoint));
  }
  return out;
}

CommitOnRef ShadowRepo::Impl::commit_on_tip(const std::string& ref, const git_oid& tree,
                                            const git::Signature& sig, const std::string& message,
                                            const std::string& failure) const {
  git::Tree tree_obj = lookup_tree(tree);
  CommitOnRef out{{}, ref_target(ref)};
  git::Commit parent;
  if (out.parent) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, repo.get(), &*out.parent), "cannot read the tip of " + ref);
    parent.reset(raw);
  }
  const git_commit* parents[] = {parent.get()};
  git::check(git_commit_create(&out.commit, repo.get(), nullptr, sig.get(), sig.get(), nullptr,
                               message.c_str(), tree_obj.get(), parent ? 1 : 0, parents),
             failure);
  return out;
}

void ShadowRepo::Impl::move_ref(const std::string& ref, const git_oid& target,
                                const std::optional<git_oid>& expected,
                                const std::string& log) const {
  clear_stale_lock(ref);
  git_reference* raw = nullptr;
  if (expected) {
    git::check(git_reference_create_matching(&raw, repo.get(), ref.c_str(), &target, 1, &*expected,
                                             log.c_str()),
               "cannot move " + ref + " (was it moved by another writer?)");
  } else {
    git::check(git_reference_create(&raw, repo.get(), ref.c_str(), &target, 0, log.c_str()),
               "cannot create " + ref);
  }
  git_reference_free(raw);
}

void ShadowRepo::Impl::clear_stale_lock(const std::string& ref) const {
  fs::path lock = git_dir / (ref + ".lock");
  if (::unlink(lock.c_str()) != 0 && errno != ENOENT) {
    throw system_error("cannot remove the stale lock " + lock.string() + " of " + ref, errno);
  }
}

git_oid ShadowRepo::Impl::empty_tree() {
  return write({}, GIT_OBJECT_TREE);
}

std::int64_t ShadowRepo::Impl::generation() const {
  // Read again only when the config file is another (libgit2 writes it anew and renames
  // it into place) or was changed: every capture asks, and parsing it cost more than
  // the rest of a watched capture's bookkeeping.
  struct stat st {};
  std::optional<ConfigStamp> stamp;
  if (::stat((git_dir / "config").c_str(), &st) == 0) {
    stamp =
        ConfigStamp{static_cast<std::uint64_t>(st.st_ino), static_cast<std::int64_t>(st.st_size),
                    st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec,
                    st.st_ctim.tv_sec * 1'000'000'000 + st.st_ctim.tv_nsec};
  }
  {
    std::lock_guard<std::mutex> lock(generation_mutex);
    if (stamp && generation_read && generation_read->first == *stamp) {
      return generation_read->second;
    }
  }
  git_config* raw = nullptr;
  git::check(git_repository_config_snapshot(&raw, repo.get()), "cannot read config");
  git::Config config(raw);
  std::int64_t value = 0;
  if (git_config_get_int64(&value, config.get(), "shadowbox.pruneGeneration") != 0) value = 0;
  git_error_clear();
  std::lock_guard<std::mutex> lock(generation_mutex);
  if (stamp) {
    generation_read = std::make_pair(*stamp, value);
  } else {
    generation_read.reset();
  }
  return value;
}

void ShadowRepo::Impl::bump_generation() {
  std::int64_t next = generation() + 1;
  git_config* raw = nullptr;
  git::check(git_repository_config(&raw, repo.get()), "cannot open config");
  git::Config config(raw);
  git::check(git_config_set_int64(config.get(), "shadowbox.pruneGeneration", next),
             "cannot write config");
}

// ---- ShadowRepo ----------------------------------------------------------------------

ShadowRepo::ShadowRepo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ShadowRepo::ShadowRepo(ShadowRepo&&) noexcept = default;
ShadowRepo& ShadowRepo::operator=(ShadowRepo&&) noexcept = default;
ShadowRepo::~ShadowRepo() = default;

ShadowRepo ShadowRepo::open(const fs::path& git_dir, bool create) {
  git::ensure_initialized();
  auto impl = std::make_unique<Impl>();
  impl->git_dir = git_dir;
  git_repository* raw = nullptr;
  boost::system::error_code ec;
  bool exists = fs::exists(git_dir / "HEAD", ec);
  if (!exists && !create) {
    throw Error(ErrorCode::kNotFound, "no shadow repository at " + git_dir.string());
  }
  if (!exists) {
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    opts.description = "shadowbox checkpoints (browse with: git log --all)";
    git::check(git_repository_init_ext(&raw, git_dir.c_str(), &opts),
               "cannot create shadow repository " + git_dir.string());
    impl->repo.reset(raw);
    configure_new_repository(raw, git_dir);
    configure_fsck(raw, git_dir);
  } else {
    git::check(git_repository_open_bare(&raw, git_dir.c_str()),
               "cannot open shadow repository " + git_dir.string());
    impl->repo.reset(raw);
    try {
      // A store made by an older version gets it too; another process opening it at
      // the same moment may hold the config's lock, and will set it itself.
      configure_fsck(impl->repo.get(), git_dir);
    } catch (const Error&) {
    }
  }
  // Ref updates sign their reflog entries (when a config asks for reflogs) as shadowbox:
  // without an identity libgit2 reads the config for a default one at every update.
  git::check(git_repository_set_ident(impl->repo.get(), "shadowbox", "shadowbox@localhost"),
             "cannot set the repository's identity");
  impl->odb = open_odb(git_dir);
  git::check(git_repository_set_odb(impl->repo.get(), impl->odb.get()),
             "cannot attach object database");
  return ShadowRepo(std::move(impl));
}

const fs::path& ShadowRepo::git_dir() const {
  return impl_->git_dir;
}

namespace {

// Puts ref back to what it was before move_ref(…, target, previous, …), or deletes it if
// it did not exist. Best effort: the caller is already failing.
void move_ref_back(git_repository* repo, const std::string& ref, const git_oid& target,
                   const std::optional<git_oid>& previous) {
  git_reference* raw = nullptr;
  if (previous) {
    if (git_reference_create_matching(&raw, repo, ref.c_str(), &*previous, 1, &target,
                                      "shadowbox: undo") == 0) {
      git_reference_free(raw);
    }
  } else if (git_reference_lookup(&raw, repo, ref.c_str()) == 0) {
    git_reference_delete(raw);
    git_reference_free(raw);
  }
  git_error_clear();
}

// Where write_notes_at moved the notes ref: to tip, from old_tip.
struct NotesMove {
  git_oid tip;
  std::optional<git_oid> old_tip;
};

// Writes notes as one notes commit on top of the notes ref, then moves the ref. The
// caller holds the store lock.
std::optional<NotesMove> write_notes_at(ShadowRepo::Impl& impl, const std::vector<Note>& notes,
                                        std::chrono::system_clock::time_point when) {
  if (notes.empty()) return std::nullopt;
  git::Signature sig = shadowbox_signature(when);
  std::optional<git_oid> old_tip = impl.ref_target(layout::kNotesRef);
  git_oid tip = commit_notes(impl, old_tip, notes, sig.get());
  impl.move_ref(layout::kNotesRef, tip, old_tip, "shadowbox: ledger");
  return NotesMove{tip, old_tip};
}

}  // namespace

Checkpoint ShadowRepo::commit_checkpoint(std::string_view tree, Checkpoint draft,
                                         const NotesFor& notes) {
  // Everything is checked before anything is written.
  validate_ref_component("run", draft.meta.run);
  if (!draft.meta.tag.empty()) validate_ref_component("tag", draft.meta.tag);
  validate_text("tool name", draft.meta.tool_name);
  validate_text("tool call id", draft.meta.tool_call_id);
  if (draft.meta.tool_call_id.find(' ') != std::string::npos) {
    throw Error(
        ErrorCode::kInvalidArgument,
        "tool call id " + quote_input(draft.meta.tool_call_id) + " must not contain spaces");
  }
  if (draft.id.empty() || draft.created_at == std::chrono::system_clock::time_point{}) {
    throw Error(ErrorCode::kInvalidArgument, "a checkpoint needs an id and a time");
  }

  git_repository* repo = impl_->repo.get();
  std::string tag_ref = draft.meta.tag.empty() ? "" : layout::tag_ref(draft.meta.tag);
  if (!tag_ref.empty() && !draft.meta.move_tag) {
    if (std::optional<git_oid> tagged = impl_->ref_target(tag_ref)) {
      throw Error(ErrorCode::kConflict, "tag " + quote_input(draft.meta.tag) +
                                            " exists already (on checkpoint " +
                                            read_checkpoint(git::to_hex(*tagged)).id +
                                            "); choose another, or move it with --force");
    }
  }
  std::string run_ref = layout::run_ref(draft.meta.run);
  CommitOnRef made =
      impl_->commit_on_tip(run_ref, git::from_hex(tree), shadowbox_signature(draft.created_at),
                           format_checkpoint_message(draft), "cannot write checkpoint commit");
  const git_oid& commit_oid = made.commit;
  const std::optional<git_oid>& parent_oid = made.parent;
  draft.commit = git::to_hex(commit_oid);
  draft.tree = std::string(tree);
  draft.parent = parent_oid ? git::to_hex(*parent_oid) : std::string();

  // The commit and everything it references is written; its notes next, so that the
  // run never shows a checkpoint without its record. A crash before the run ref moves
  // leaves an unreferenced commit (and its note), which gc removes.
  std::optional<NotesMove> noted;
  if (notes) noted = write_notes_at(*impl_, notes(draft), draft.created_at);

  std::string log = "shadowbox: " + std::string(to_string(draft.meta.phase));
  try {
    impl_->move_ref(run_ref, commit_oid, parent_oid, log);
  } catch (...) {
    // The notes go back too: they may amend an earlier record by this checkpoint (the
    // outcome of the call it ends), which must not stand without it.
    if (noted) move_ref_back(repo, layout::kNotesRef, noted->tip, noted->old_tip);
    throw;
  }
  if (!tag_ref.empty()) {
    git_reference* raw_ref = nullptr;
    impl_->clear_stale_lock(tag_ref);
    int rc = git_reference_create(&raw_ref, repo, tag_ref.c_str(), &commit_oid, 1, log.c_str());
    if (rc < 0) {
      std::string why = git::last_error_message();
      move_ref_back(repo, run_ref, commit_oid, parent_oid);
      throw Error(ErrorCode::kIo, "cannot create " + quote_input(tag_ref) + ": " + why +
                                      " (the checkpoint was not recorded)");
    }
    git_reference_free(raw_ref);
  }
  return draft;
}

std::vector<std::string> ShadowRepo::runs() const {
  std::vector<std::string> out;
  git_reference_iterator* raw = nullptr;
  std::string glob = std::string(layout::kRunRefPrefix) + "*";
  git::check(git_reference_iterator_glob_new(&raw, impl_->repo.get(), glob.c_str()),
             "cannot list runs");
  git::ReferenceIterator it(raw);
  const char* name = nullptr;
  while (git_reference_next_name(&name, it.get()) == 0) {
    // A ref no run name makes ("a/b", from a store someone else wrote) is no run.
    std::string_view run = std::string_view(name).substr(layout::kRunRefPrefix.size());
    if (layout::is_valid_run_name(run)) out.emplace_back(run);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool ShadowRepo::has_run(std::string_view run) const {
  validate_ref_component("run", run);
  return impl_->ref_target(layout::run_ref(run)).has_value();
}

std::vector<Checkpoint> ShadowRepo::log(std::string_view run, std::size_t limit) const {
  if (!run.empty()) {
    validate_ref_component("run", run);
    return impl_->run_log(run, limit);
  }
  std::vector<Checkpoint> all;
  for (const std::string& name : runs()) {
    auto part = impl_->run_log(name, limit);
    all.insert(all.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  }
  std::stable_sort(all.begin(), all.end(), [](const Checkpoint& a, const Checkpoint& b) {
    return a.created_at > b.created_at;
  });
  if (limit != 0 && all.size() > limit) all.resize(limit);
  return all;
}

Checkpoint ShadowRepo::read_checkpoint(std::string_view commit) const {
  git_oid oid = git::from_hex(commit);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, impl_->repo.get(), &oid);
  if (rc == GIT_ENOTFOUND) {
    throw Error(ErrorCode::kNotFound, "no checkpoint commit " + std::string(commit));
  }
  git::check(rc, "cannot read commit " + std::string(commit));
  git::Commit c(raw);
  return impl_->checkpoint_of(c.get());
}

Checkpoint ShadowRepo::resolve(std::string_view ref) const {
  if (ref.empty()) throw Error(ErrorCode::kInvalidArgument, "empty checkpoint reference");
  auto all_checkpoints = [&] { return log({}, 0); };

  for (auto [prefix, phase] : {std::pair{std::string_view("pre:"), Phase::kPreTool},
                               std::pair{std::string_view("post:"), Phase::kPostTool}}) {
    if (ref.substr(0, prefix.size()) != prefix) continue;
    std::string_view call = ref.substr(prefix.size());
    if (call.empty()) {
      throw Error(ErrorCode::kInvalidArgument, quote_input(ref) + " names no tool call id (use " +
                                                   std::string(prefix) + "<tool_call_id>)");
    }
    // A call that was rolled back has no post-tool checkpoint: the workspace as it left
    // the call is the safety checkpoint taken before its rollback.
    std::optional<Checkpoint> rolled_back;
    for (Checkpoint& c : all_checkpoints()) {
      if (c.meta.tool_call_id != call) continue;
      if (c.meta.phase == phase) return std::move(c);
      if (phase == Phase::kPostTool && c.meta.phase == Phase::kSafety && !rolled_back) {
        rolled_back = std::move(c);
      }
    }
    if (rolled_back) return std::move(*rolled_back);
    throw Error(ErrorCode::kNotFound, "no " + std::string(to_string(phase)) +
                                          " checkpoint for tool call " + quote_input(call));
  }
  if (ref.substr(0, 4) == "run:") {
    std::string_view run = ref.substr(4);
    validate_ref_component("run", run);
    auto tip = impl_->run_log(run, 1);
    if (tip.empty()) throw Error(ErrorCode::kNotFound, "no run named " + quote_input(run));
    return std::move(tip.front());
  }

  int valid = 0;
  std::string tag_ref = layout::tag_ref(ref);
  if (ref.find('/') == std::string_view::npos &&
      git_reference_name_is_valid(&valid, tag_ref.c_str()) == 0 && valid) {
    if (auto oid = impl_->ref_target(tag_ref)) return read_checkpoint(git::to_hex(*oid));
    if (auto tip = impl_->run_log(ref, 1); !tip.empty()) return std::move(tip.front());
  }

  if (is_hex(ref)) {
    if (ref.size() < 4) {
      throw Error(ErrorCode::kInvalidArgument,
                  quote_input(ref) + " is too short: give at least 4 hex digits");
    }
    std::map<std::string, Checkpoint> matches;  // by commit
    for (Checkpoint& c : all_checkpoints()) {
      if (c.id.compare(0, ref.size(), ref) == 0 || c.commit.compare(0, ref.size(), ref) == 0) {
        matches.emplace(c.commit, std::move(c));
      }
    }
    if (matches.size() == 1) return std::move(matches.begin()->second);
    if (matches.size() > 1) {
      std::string list;
      for (const auto& [commit, c] : matches) {
        list += (list.empty() ? " " : "; ") + c.id + " (commit " + commit.substr(0, 12) + ", " +
                std::string(to_string(c.meta.phase)) + ", " + format_timestamp(c.created_at) + ")";
      }
      throw Error(ErrorCode::kAmbiguous, quote_input(ref) + " is ambiguous; it matches" + list);
    }
    if (ref.size() == GIT_OID_HEXSZ) return read_checkpoint(ref);
  }
  throw Error(ErrorCode::kNotFound, "unknown checkpoint, tag or run: " + quote_input(ref));
}

std::string ShadowRepo::read_blob(std::string_view oid) const {
  return impl_->read(git::from_hex(oid), GIT_OBJECT_BLOB);
}

git::Signature shadowbox_signature(std::chrono::system_clock::time_point t) {
  git_signature* raw = nullptr;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch());
  git::check(git_signature_new(&raw, "shadowbox", "shadowbox@localhost",
                               static_cast<git_time_t>(seconds.count()), 0),
             "cannot make signature");
  return git::Signature(raw);
}

void ShadowRepo::write_notes(const std::vector<Note>& notes,
                             std::chrono::system_clock::time_point when) {
  write_notes_at(*impl_, notes, when);
}

std::optional<std::string> ShadowRepo::note(std::string_view commit) const {
  return note_in(layout::kNotesRef, commit);
}

std::optional<std::string> ShadowRepo::note_in(const std::string& notes_ref,
                                               std::string_view commit) const {
  git_oid target = git::from_hex(commit);
  git_note* raw = nullptr;
  int rc = git_note_read(&raw, impl_->repo.get(), notes_ref.c_str(), &target);
  if (rc == GIT_ENOTFOUND) return std::nullopt;
  git::check(rc, "cannot read the ledger note of " + std::string(commit));
  std::string text = git_note_message(raw);
  git_note_free(raw);
  return text;
}

}  // namespace fsnap
