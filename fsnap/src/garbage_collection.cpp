// ShadowRepo::collect_garbage: retention limits and pruning of unreachable objects.

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <unordered_set>

#include <boost/filesystem.hpp>

#include "fsnap/free_space.hpp"
#include "fsnap/shadow_repo.hpp"
#include "large_file_copies.hpp"
#include "pack_names.hpp"
#include "retention_age.hpp"
#include "shadow_repo_impl.hpp"
#include "store_size.hpp"

namespace fsnap {

namespace {

git::Commit lookup_commit(git_repository* repo, const git_oid& oid) {
  git_commit* raw = nullptr;
  git::check(git_commit_lookup(&raw, repo, &oid), "cannot read commit " + git::to_hex(oid));
  return git::Commit(raw);
}

// Recreates a commit with a new parent (or none), keeping tree, message and signatures.
git_oid rewrite_commit(git_repository* repo, const git_commit* commit,
                       const std::optional<git_oid>& parent) {
  git::Commit parent_commit;
  if (parent) parent_commit = lookup_commit(repo, *parent);
  git_tree* raw_tree = nullptr;
  git::check(git_commit_tree(&raw_tree, commit), "cannot read tree of a checkpoint");
  git::Tree tree(raw_tree);
  const git_commit* parents[] = {parent_commit.get()};
  git_oid out;
  git::check(git_commit_create(&out, repo, nullptr, git_commit_author(commit),
                               git_commit_committer(commit), git_commit_message_encoding(commit),
                               git_commit_message_raw(commit), tree.get(), parent ? 1 : 0, parents),
             "cannot rewrite a commit");
  return out;
}

int collect_oid(const git_oid* oid, void* payload) {
  static_cast<std::vector<git_oid>*>(payload)->push_back(*oid);
  return 0;
}

std::size_t prune_loose(const ShadowRepo::Impl& impl, const PackNames& reachable,
                        std::chrono::seconds grace) {
  std::vector<git_oid> all;
  git::check(git_odb_foreach(impl.odb.get(), collect_oid, &all), "cannot list objects");
  std::size_t pruned = 0;
  auto now = std::chrono::system_clock::now();
  for (const git_oid& oid : all) {
    if (reachable.contains(oid)) continue;
    std::string hex = git::to_hex(oid);
    boost::filesystem::path loose = impl.git_dir / "objects" / hex.substr(0, 2) / hex.substr(2);
    // A young object may be one a checkpoint being recorded is about to reference.
    struct stat st {};
    if (::stat(loose.c_str(), &st) != 0 || younger_than(now, st.st_mtime, grace)) {
      continue;
    }
    if (::unlink(loose.c_str()) == 0) ++pruned;
  }
  return pruned;
}

// text with every commit id it names (a run of exactly 40 hex digits) that gc rewrote
// replaced by the new id: a note names its own commit, and may name others.
std::string with_rewritten_ids(const std::string& text,
                               const std::map<std::string, git_oid>& rewritten) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == i) {
      out += text[i++];
      continue;
    }
    std::string run = text.substr(i, end - i);
    auto r = run.size() == 40 ? rewritten.find(run) : rewritten.end();
    out += r != rewritten.end() ? git::to_hex(r->second) : run;
    i = end;
  }
  return out;
}

// Adds every object id text names (a run of exactly 40 hex digits) to ids.
void add_named_ids(const std::string& text, std::set<std::string>& ids) {
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = i;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end - i == 40) ids.insert(text.substr(i, 40));
    i = end == i ? i + 1 : end;
  }
}

// Rebuilds the notes ref so that it holds the record of every checkpoint a run shows
// and nothing else: notes follow rewritten commits (and name them), and go with dropped
// commits — those of this gc, of a gc that stopped before this step, and of a checkpoint
// whose run never moved to it — along with the anchors no kept note names. The new
// notes history starts afresh, in one commit. on_runs: the commits on the runs' chains
// now. Returns false (and writes nothing) if every note stays as it is.
bool migrate_notes(ShadowRepo::Impl& impl, const std::map<std::string, git_oid>& rewritten,
                   const std::set<std::string>& on_runs,
                   std::chrono::system_clock::time_point now) {
  git_repository* repo = impl.repo.get();
  std::optional<git_oid> tip = impl.ref_target(layout::kNotesRef);
  if (!tip) return false;
  git::Commit tip_commit = lookup_commit(repo, *tip);
  NotesContent content = read_notes(impl, *git_commit_tree_id(tip_commit.get()));
  // The copies made for the rewritten commits before the runs moved: the originals give
  // the same notes.
  std::set<std::string> copies;
  for (const auto& [old_commit, fresh] : rewritten) copies.insert(git::to_hex(fresh));
  std::vector<Note> kept;
  std::set<std::string> named;
  for (const Note& n : content.notes) {
    if (copies.count(n.commit) != 0) continue;
    auto r = rewritten.find(n.commit);
    std::string target = r != rewritten.end() ? git::to_hex(r->second) : n.commit;
    if (on_runs.count(target) == 0) continue;
    kept.push_back(Note{target, with_rewritten_ids(n.text, rewritten)});
    add_named_ids(kept.back().text, named);
  }
  if (rewritten.empty() && kept.size() == content.notes.size()) return false;
  std::vector<ObjectEntry> anchors;
  for (const ObjectEntry& a : content.anchors) {
    if (named.count(a.oid)) anchors.push_back(a);
  }
  git_reference* ref = nullptr;
  if (!kept.empty()) {
    git_oid fresh = commit_notes(impl, std::nullopt, kept, shadowbox_signature(now).get(), anchors);
    impl.clear_stale_lock(layout::kNotesRef);
    git::check(git_reference_create(&ref, repo, layout::kNotesRef, &fresh, 1, "shadowbox: gc"),
               "cannot move the ledger notes");
    git_reference_free(ref);
  } else if (git_reference_lookup(&ref, repo, layout::kNotesRef) == 0) {
    git::Reference owned(ref);
    git::check(git_reference_delete(ref), "cannot delete the ledger notes");
  }
  return true;
}

void delete_ref_if_any(git_repository* repo, const std::string& name) {
  git_reference* ref = nullptr;
  if (git_reference_lookup(&ref, repo, name.c_str()) != 0) return;
  git::Reference owned(ref);
  git::check(git_reference_delete(ref), "cannot delete " + name);
}

// Makes the session chain at ref_name hold trees, oldest first, one commit each (none:
// no chain): the session trees a run's kept records name, which the notes' history
// kept reachable until gc started it afresh. A chain that holds them already stays.
void keep_session_trees(const ShadowRepo::Impl& impl, const std::string& ref_name,
                        const std::vector<git_oid>& trees,
                        std::chrono::system_clock::time_point now) {
  git_repository* repo = impl.repo.get();
  std::optional<git_oid> tip = impl.ref_target(ref_name);
  std::vector<git_oid> held;  // newest first
  for (std::optional<git_oid> at = tip; at;) {
    git::Commit commit = lookup_commit(repo, *at);
    held.push_back(*git_commit_tree_id(commit.get()));
    at = git_commit_parentcount(commit.get()) > 0
             ? std::optional<git_oid>(*git_commit_parent_id(commit.get(), 0))
             : std::nullopt;
  }
  std::reverse(held.begin(), held.end());
  auto same = [](const git_oid& a, const git_oid& b) { return git_oid_equal(&a, &b) != 0; };
  if (std::equal(held.begin(), held.end(), trees.begin(), trees.end(), same)) return;
  impl.clear_stale_lock(ref_name);
  if (trees.empty()) {
    delete_ref_if_any(repo, ref_name);
    return;
  }
  git::Signature sig = shadowbox_signature(now);
  std::optional<git_oid> parent;
  for (const git_oid& tree_id : trees) {
    git::Tree tree = impl.lookup_tree(tree_id);
    git::Commit parent_commit;
    if (parent) parent_commit = lookup_commit(repo, *parent);
    const git_commit* parents[] = {parent_commit.get()};
    git_oid out;
    git::check(git_commit_create(&out, repo, nullptr, sig.get(), sig.get(), nullptr,
                                 "session kept by gc\n", tree.get(), parent ? 1 : 0, parents),
               "cannot write the session chain " + ref_name);
    parent = out;
  }
  git_reference* ref = nullptr;
  git::check(git_reference_create(&ref, repo, ref_name.c_str(), &*parent, 1, "shadowbox: gc"),
             "cannot move " + ref_name);
  git_reference_free(ref);
}

// The trees that the notes of run's checkpoints name, oldest checkpoint first, each
// once.
std::vector<git_oid> named_trees(const ShadowRepo& shadow, const ShadowRepo::Impl& impl,
                                 const std::string& run) {
  std::vector<Checkpoint> chain = impl.run_log(run, 0);  // newest first
  std::vector<git_oid> out;
  OidSet seen;
  for (auto c = chain.rbegin(); c != chain.rend(); ++c) {
    std::optional<std::string> text = shadow.note(c->commit);
    if (!text) continue;
    std::set<std::string> ids;
    add_named_ids(*text, ids);
    for (const std::string& hex : ids) {
      git_oid oid = git::from_hex(hex);
      std::size_t size = 0;
      git_object_t type = GIT_OBJECT_INVALID;
      if (hex == c->tree || seen.count(oid) ||
          git_odb_read_header(&size, &type, impl.odb.get(), &oid) != 0 || type != GIT_OBJECT_TREE) {
        git_error_clear();
        continue;
      }
      seen.insert(oid);
      out.push_back(oid);
    }
  }
  return out;
}

// One collection. What needs no new space comes first — runs dropped whole (by
// keep_last, max_age and max_size), the tags of their checkpoints, then what nothing
// reaches any more is pruned — so that a store whose filesystem is full can be
// collected. Then the writes: the shortened runs' rewritten commits, the tags that
// follow them, the notes. A write that fails for want of space is tried once more
// after a prune; if it fails again, the writes after it are left for a later gc (the
// store stays consistent, as after a crash at that step) and the report says why.
class Collection {
 public:
  Collection(ShadowRepo& shadow, const RetentionPolicy& policy,
             std::chrono::system_clock::time_point now,
             const std::function<void(std::string_view)>& after_step,
             const std::function<void(const std::string&)>& on_run_dropped)
      : shadow_(shadow),
        impl_(shadow.impl()),
        repo_(impl_.repo.get()),
        policy_(policy),
        now_(now),
        after_step_(after_step),
        on_run_dropped_(on_run_dropped) {}

  GcReport run(const std::set<std::string>& keep_whole) {
    std::vector<Shortened> shortened = drop_emptied_runs(keep_whole);
    if (policy_.max_size > 0) drop_runs_over_size(keep_whole, shortened);
    delete_dropped_tags();
    if (report_.runs_dropped > 0) prune();
    if (attempt([&] { rewrite(shortened); })) attempt([&] { move_tags(); });
    attempt([&] {
      if (migrate_notes(impl_, rewritten_, commits_on_runs(), now_)) {
        done("notes migrated");
        // The notes' history held every session tree a record names; it starts afresh,
        // so each run's session chain keeps those of its kept records (and only those).
        for (const std::string& run : shadow_.runs()) {
          keep_session_trees(impl_, layout::session_ref(run), named_trees(shadow_, impl_, run),
                             now_);
        }
      }
    });
    prune();
    report_.out_of_space = short_of_space_;
    return report_;
  }

 private:
  // A run that keeps some of its checkpoints: its chain (newest first) and how many.
  struct Shortened {
    std::string run;
    std::vector<Checkpoint> chain;
    std::size_t keep;
  };

  void done(std::string_view step) {
    if (after_step_) after_step_(step);
  }

  // Runs step; when it fails for want of space, prunes and runs it once more. False
  // (and no later attempt is made) if it still has no room.
  template <typename Step>
  bool attempt(const Step& step) {
    if (!short_of_space_.empty()) return false;
    try {
      step();
      return true;
    } catch (const std::exception& e) {
      if (!out_of_space(e, impl_.git_dir)) throw;
    }
    prune();
    try {
      step();
      return true;
    } catch (const std::exception& e) {
      if (!out_of_space(e, impl_.git_dir)) throw;
      short_of_space_ = e.what();
      return false;
    }
  }

  // Deletes the refs of run (its checkpoints, preserved HOME data, session trees).
  void drop_whole(const std::string& run) {
    std::string ref_name = layout::run_ref(run);
    git_reference* ref = nullptr;
    git::check(git_reference_lookup(&ref, repo_, ref_name.c_str()), "cannot read " + ref_name);
    git::Reference owned(ref);
    git::check(git_reference_delete(ref), "cannot delete " + ref_name);
    delete_ref_if_any(repo_, layout::home_ref(run));
    delete_ref_if_any(repo_, layout::session_ref(run));
    ++report_.runs_dropped;
    report_.dropped_runs.push_back(run);
    if (on_run_dropped_) on_run_dropped_(run);
  }

  // Applies keep_last and max_age: runs left with nothing go at once (no space needed);
  // the runs to shorten are returned.
  std::vector<Shortened> drop_emptied_runs(const std::set<std::string>& keep_whole) {
    std::vector<Shortened> out;
    for (const std::string& run : shadow_.runs()) {
      if (keep_whole.count(run) != 0) continue;
      std::vector<Checkpoint> chain = impl_.run_log(run, 0);  // newest first
      std::size_t keep = 0;
      while (keep < chain.size() && (policy_.keep_last == 0 || keep < policy_.keep_last) &&
             (policy_.max_age.count() == 0 ||
              within_max_age(now_, chain[keep].created_at, policy_.max_age))) {
        ++keep;
      }
      if (keep == chain.size()) continue;
      for (std::size_t i = keep; i < chain.size(); ++i) dropped_.insert(chain[i].commit);
      if (keep == 0) {
        report_.checkpoints_dropped += chain.size();
        drop_whole(run);
      } else {
        out.push_back({run, std::move(chain), keep});
      }
    }
    return out;
  }

  // Rewrites each shortened run to start at its oldest kept checkpoint, copies the
  // records to the new commits, then moves the runs (a run already moved stays).
  void rewrite(const std::vector<Shortened>& shortened) {
    struct RefMove {
      std::string ref;
      git_oid to;
      git_oid from;
      std::size_t dropped;  // checkpoints the run leaves behind
    };
    std::vector<RefMove> moves;
    for (const Shortened& s : shortened) {
      std::optional<git_oid> parent;
      for (std::size_t i = s.keep; i-- > 0;) {  // oldest kept first
        git::Commit commit = lookup_commit(repo_, git::from_hex(s.chain[i].commit));
        git_oid fresh = rewrite_commit(repo_, commit.get(), parent);
        rewritten_[s.chain[i].commit] = fresh;
        parent = fresh;
      }
      moves.push_back({layout::run_ref(s.run), *parent, git::from_hex(s.chain.front().commit),
                       s.chain.size() - s.keep});
    }
    done("commits rewritten");
    // Before any run moves to its rewritten commits, each of those gets its record: a
    // crash from here on leaves every checkpoint a run shows with its record (the old
    // ones keep theirs until the notes are migrated).
    if (!rewritten_.empty()) {
      std::vector<Note> bridged;
      for (const auto& [old_commit, fresh] : rewritten_) {
        if (std::optional<std::string> text = shadow_.note(old_commit)) {
          bridged.push_back(Note{git::to_hex(fresh), with_rewritten_ids(*text, rewritten_)});
        }
      }
      if (!bridged.empty()) shadow_.write_notes(bridged, now_);
      done("records copied");
    }
    for (const RefMove& move : moves) {
      std::optional<git_oid> at = impl_.ref_target(move.ref);
      if (at && git_oid_equal(&*at, &move.to)) continue;
      git_reference* ref = nullptr;
      impl_.clear_stale_lock(move.ref);
      git::check(git_reference_create_matching(&ref, repo_, move.ref.c_str(), &move.to, 1,
                                               &move.from, "shadowbox: gc"),
                 "cannot move " + move.ref);
      git_reference_free(ref);
      report_.checkpoints_dropped += move.dropped;
    }
    done("runs moved");
  }

  // Whole runs, the oldest first, while the store (its shortened runs as they will be)
  // is over its size; those among the shortened ones are not rewritten then.
  void drop_runs_over_size(const std::set<std::string>& keep_whole,
                           std::vector<Shortened>& shortened) {
    std::map<std::string, std::vector<git_oid>> kept_trees;
    for (const Shortened& s : shortened) {
      for (std::size_t i = 0; i < s.keep; ++i) {
        kept_trees[s.run].push_back(git::from_hex(s.chain[i].tree));
      }
    }
    for (const std::string& run : runs_over_size(impl_, policy_.max_size, keep_whole, kept_trees)) {
      std::erase_if(shortened, [&](const Shortened& s) { return s.run == run; });
      std::vector<Checkpoint> chain = impl_.run_log(run, 0);
      for (const Checkpoint& c : chain) dropped_.insert(c.commit);
      report_.checkpoints_dropped += chain.size();
      drop_whole(run);
    }
  }

  // The tags of this store: name -> the commit it points at (hex).
  std::vector<std::pair<std::string, std::string>> tags() const {
    git_reference_iterator* raw = nullptr;
    std::string glob = std::string(layout::kTagRefPrefix) + "*";
    git::check(git_reference_iterator_glob_new(&raw, repo_, glob.c_str()), "cannot list tags");
    git::ReferenceIterator it(raw);
    std::vector<std::pair<std::string, std::string>> out;
    const char* name = nullptr;
    while (git_reference_next_name(&name, it.get()) == 0) {
      auto oid = impl_.ref_target(name);
      if (oid) out.emplace_back(name, git::to_hex(*oid));
    }
    return out;
  }

  // Tags of dropped checkpoints go with them (no space needed).
  void delete_dropped_tags() {
    if (dropped_.empty()) return;
    for (const auto& [tag, target] : tags()) {
      if (dropped_.count(target) == 0) continue;
      git_reference* ref = nullptr;
      impl_.clear_stale_lock(tag);
      git::check(git_reference_lookup(&ref, repo_, tag.c_str()), "cannot read " + tag);
      git::Reference owned(ref);
      git::check(git_reference_delete(ref), "cannot delete " + tag);
    }
  }

  // Tags of rewritten checkpoints follow them.
  void move_tags() {
    if (rewritten_.empty()) return;
    for (const auto& [tag, target] : tags()) {
      auto r = rewritten_.find(target);
      if (r == rewritten_.end()) continue;
      git_reference* ref = nullptr;
      impl_.clear_stale_lock(tag);
      git::check(git_reference_create(&ref, repo_, tag.c_str(), &r->second, 1, "shadowbox: gc"),
                 "cannot move " + tag);
      git_reference_free(ref);
    }
  }

  // Every commit on a run's chain.
  std::set<std::string> commits_on_runs() const {
    std::set<std::string> out;
    for (const std::string& run : shadow_.runs()) {
      for (const Checkpoint& c : impl_.run_log(run, 0)) out.insert(c.commit);
    }
    return out;
  }

  // Deletes the loose objects nothing reaches, and the copies of large files no
  // checkpoint names, that are older than the grace.
  void prune() {
    std::size_t pruned = prune_loose(impl_, name_reachable_objects(impl_), policy_.prune_grace);
    report_.objects_pruned += pruned;
    if (pruned > 0) impl_.bump_generation();
    report_.large_files_pruned += prune_large_files();
  }

  std::size_t prune_large_files() const {
    boost::filesystem::path dir = layout::large_files_dir(layout::store_of_repo(impl_.git_dir));
    boost::system::error_code ec;
    if (!boost::filesystem::is_directory(dir, ec)) return 0;
    return LargeFileCopies(dir).prune(large_files_named(impl_, shadow_.runs()), now_,
                                      policy_.prune_grace);
  }

  ShadowRepo& shadow_;
  ShadowRepo::Impl& impl_;
  git_repository* repo_;
  const RetentionPolicy& policy_;
  std::chrono::system_clock::time_point now_;
  const std::function<void(std::string_view)>& after_step_;
  const std::function<void(const std::string&)>& on_run_dropped_;
  GcReport report_;
  std::map<std::string, git_oid> rewritten_;  // old commit hex -> new commit
  std::set<std::string> dropped_;             // commit hex
  std::string short_of_space_;                // the write that found no room, if one did
};

}  // namespace

GcReport ShadowRepo::collect_garbage(
    const RetentionPolicy& policy, std::chrono::system_clock::time_point now,
    const std::set<std::string>& keep_whole,
    const std::function<void(std::string_view)>& after_step,
    const std::function<void(const std::string&)>& on_run_dropped) {
  return Collection(*this, policy, now, after_step, on_run_dropped).run(keep_whole);
}

}  // namespace fsnap
