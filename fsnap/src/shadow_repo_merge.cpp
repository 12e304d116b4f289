// ShadowRepo::merge_trees: a three-way merge of captured trees with libgit2's
// git_merge_trees (text files merged line by line with its xdiff, as git does); and
// ShadowRepo::tree_with_paths_of, one side of a merge that takes some paths only.

#include "fsnap/tree_merge.hpp"

#include "fsnap/shadow_repo.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

namespace {

using ConflictIterator = git::Handle<git_index_conflict_iterator, git_index_conflict_iterator_free>;

std::optional<TreeEntryInfo> side(const git_index_entry* entry) {
  if (entry == nullptr) return std::nullopt;
  TreeEntryInfo info;
  info.oid = git::to_hex(entry->id);
  switch (entry->mode) {
    case GIT_FILEMODE_LINK:
      info.type = EntryType::kSymlink;
      break;
    case GIT_FILEMODE_BLOB_EXECUTABLE:
      info.executable = true;
      break;
    default:
      break;
  }
  return info;
}

// Whether the blob of entry (a file) looks binary, as git decides: a NUL byte among its
// first 8000.
bool is_binary(git_repository* repo, const git_index_entry* entry) {
  if (entry == nullptr || entry->mode == GIT_FILEMODE_LINK) return false;
  git_blob* raw = nullptr;
  if (git_blob_lookup(&raw, repo, &entry->id) != 0) {
    git_error_clear();
    return false;
  }
  git::Blob blob(raw);
  return git_blob_is_binary(blob.get()) == 1;
}

}  // namespace

TreeMerge ShadowRepo::merge_trees(std::string_view ancestor, std::string_view ours,
                                  std::string_view theirs) {
  auto tree = [&](std::string_view hex) {
    return impl_->lookup_tree(hex.empty() ? impl_->empty_tree() : git::from_hex(hex));
  };
  git::Tree base = tree(ancestor), our = tree(ours), their = tree(theirs);
  git_merge_options options = GIT_MERGE_OPTIONS_INIT;
  // Path by path: a file renamed on one side is a removal there, so a change to it on
  // the other side conflicts instead of following it to a path nobody named.
  options.flags = static_cast<git_merge_flag_t>(0);
  options.file_favor = GIT_MERGE_FILE_FAVOR_NORMAL;
  git_index* raw = nullptr;
  git::check(git_merge_trees(&raw, impl_->repo.get(), base.get(), our.get(), their.get(), &options),
             "cannot merge tree " + std::string(theirs) + " into " + std::string(ours));
  git::Index index(raw);

  TreeMerge out;
  if (git_index_has_conflicts(index.get())) {
    git_index_conflict_iterator* it_raw = nullptr;
    git::check(git_index_conflict_iterator_new(&it_raw, index.get()),
               "cannot read the conflicts of a merge");
    ConflictIterator it(it_raw);
    const git_index_entry *a = nullptr, *o = nullptr, *t = nullptr;
    int rc = 0;
    while ((rc = git_index_conflict_next(&a, &o, &t, it.get())) == 0) {
      MergeConflict c;
      const git_index_entry* any = a != nullptr ? a : o != nullptr ? o : t;
      c.path = any->path;
      c.ancestor = side(a);
      c.ours = side(o);
      c.theirs = side(t);
      git_repository* repo = impl_->repo.get();
      c.binary = is_binary(repo, a) || is_binary(repo, o) || is_binary(repo, t);
      out.conflicts.push_back(std::move(c));
    }
    if (rc != GIT_ITEROVER) git::check(rc, "cannot read the conflicts of a merge");
    return out;
  }
  git_oid merged;
  git::check(git_index_write_tree_to(&merged, index.get(), impl_->repo.get()),
             "cannot write the tree of a merge");
  out.tree = git::to_hex(merged);
  return out;
}

std::string ShadowRepo::tree_with_paths_of(std::string_view base, std::string_view source,
                                           const std::set<std::string>& paths) {
  auto tree = [&](std::string_view hex) {
    return impl_->lookup_tree(hex.empty() ? impl_->empty_tree() : git::from_hex(hex));
  };
  git::Tree from = tree(source), into = tree(base);
  using Entry = std::unique_ptr<git_tree_entry, decltype(&git_tree_entry_free)>;
  auto entry_at = [](const git::Tree& t, const std::string& path) {
    git_tree_entry* found = nullptr;
    int rc = git_tree_entry_bypath(&found, t.get(), path.c_str());
    if (rc == GIT_ENOTFOUND) git_error_clear();
    if (rc != GIT_ENOTFOUND) git::check(rc, "cannot read " + path + " in a tree");
    return Entry(found, git_tree_entry_free);
  };
  // A directory either side has at a path is taken whole: nothing below it is looked at.
  std::set<std::string> whole;
  auto below_whole = [&](const std::string& path) {
    for (std::size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      if (whole.count(path.substr(0, slash)) != 0) return true;
    }
    return false;
  };
  // Removals first, then additions: libgit2 neither removes and adds the same entry nor
  // turns a file into a directory in one update.
  std::vector<git_tree_update> removals, additions;
  for (const std::string& path : paths) {
    if (below_whole(path)) continue;
    Entry was = entry_at(into, path), wanted = entry_at(from, path);
    auto is_tree = [](const Entry& e) {
      return e && git_tree_entry_type(e.get()) == GIT_OBJECT_TREE;
    };
    if (is_tree(was) || is_tree(wanted)) whole.insert(path);
    bool same = was && wanted &&
                git_oid_equal(git_tree_entry_id(was.get()), git_tree_entry_id(wanted.get())) &&
                git_tree_entry_filemode(was.get()) == git_tree_entry_filemode(wanted.get());
    if (same) continue;
    if (was && (!wanted || is_tree(was) != is_tree(wanted))) {
      removals.push_back({GIT_TREE_UPDATE_REMOVE, {}, GIT_FILEMODE_UNREADABLE, path.c_str()});
    }
    if (wanted) {
      additions.push_back({GIT_TREE_UPDATE_UPSERT, *git_tree_entry_id(wanted.get()),
                           git_tree_entry_filemode(wanted.get()), path.c_str()});
    }
  }
  git_oid out = *git_tree_id(into.get());
  for (const std::vector<git_tree_update>* updates : {&removals, &additions}) {
    if (updates->empty()) continue;
    git::Tree now = impl_->lookup_tree(out);
    git::check(
        git_tree_create_updated(&out, impl_->repo.get(), now.get(), updates->size(),
                                updates->data()),
        "cannot write a tree of " + std::string(base) + " with paths of " + std::string(source));
  }
  return git::to_hex(out);
}

}  // namespace fsnap
