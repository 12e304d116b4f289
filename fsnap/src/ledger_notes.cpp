// The ledger's notes (refs/notes/shadowbox), written with git's fanout: a notes tree
// level that holds more than kMaxNotesPerLevel notes has them moved into subtrees named
// by their next two hex digits ("ab/cdef..."), as git itself does. libgit2 puts a new
// note into the subtree of its prefix when there is one, so a write rewrites a few small
// trees instead of one tree that grows with the ledger (and a lookup reads those few).
// The notes of one write (a checkpoint's record, and the record of the call it ends)
// land in one commit.

#include <algorithm>
#include <cctype>
#include <map>

#include "fsnap/error.hpp"
#include "shadow_repo_impl.hpp"
#include "tree_encoding.hpp"

namespace fsnap {

namespace {

constexpr std::size_t kMaxNotesPerLevel = 128;
constexpr const char* kNotesMessage = "Notes added by shadowbox\n";

struct Entry {
  std::string name;
  std::uint32_t mode;
  git_oid oid;
};

// A note at depth: its name is the rest of a 40-digit id after 2 * depth digits.
bool is_note_at(const Entry& e, std::size_t depth) {
  return e.mode != kModeTree && e.name.size() + 2 * depth == GIT_OID_HEXSZ && is_hex(e.name);
}

bool is_fanout(const Entry& e) {
  return e.mode == kModeTree && e.name.size() == 2 && is_hex(e.name);
}

std::vector<Entry> entries_of(const ShadowRepo::Impl& impl, const git_oid& oid) {
  git::Tree tree = impl.lookup_tree(oid);
  std::size_t n = git_tree_entrycount(tree.get());
  std::vector<Entry> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    out.push_back(Entry{git_tree_entry_name(e),
                        static_cast<std::uint32_t>(git_tree_entry_filemode(e)),
                        *git_tree_entry_id(e)});
  }
  return out;
}

git_oid write_entries(ShadowRepo::Impl& impl, const std::vector<Entry>& entries) {
  std::vector<TreeItem> items;
  items.reserve(entries.size());
  for (const Entry& e : entries) items.push_back(TreeItem{&e.name, e.mode, e.oid});
  return impl.write(encode_tree(items), GIT_OBJECT_TREE);
}

// The notes tree at depth, with a crowded level's notes moved into fanout subtrees —
// this level, and those on the path of note (a 40-digit id; "" for this level only).
// The same id if nothing needed to move.
git_oid balance(ShadowRepo::Impl& impl, const git_oid& tree, std::size_t depth,
                std::string_view note) {
  std::vector<Entry> entries = entries_of(impl, tree);
  bool changed = false;
  auto notes_here = std::count_if(entries.begin(), entries.end(),
                                  [&](const Entry& e) { return is_note_at(e, depth); });
  if (static_cast<std::size_t>(notes_here) > kMaxNotesPerLevel && 2 * depth + 2 < GIT_OID_HEXSZ) {
    std::map<std::string, std::vector<Entry>> moved;  // by the next two digits
    std::vector<Entry> kept;
    for (Entry& e : entries) {
      if (is_note_at(e, depth)) {
        moved[e.name.substr(0, 2)].push_back(Entry{e.name.substr(2), e.mode, e.oid});
      } else {
        kept.push_back(std::move(e));
      }
    }
    for (auto& group : moved) {
      const std::string& prefix = group.first;
      std::vector<Entry>& list = group.second;
      auto dir = std::find_if(kept.begin(), kept.end(),
                              [&](const Entry& e) { return is_fanout(e) && e.name == prefix; });
      if (dir != kept.end()) {
        std::vector<Entry> inner = entries_of(impl, dir->oid);
        list.insert(list.end(), inner.begin(), inner.end());
      }
      git_oid sub = balance(impl, write_entries(impl, list), depth + 1, "");
      if (dir != kept.end()) {
        dir->oid = sub;
      } else {
        kept.push_back(Entry{prefix, kModeTree, sub});
      }
    }
    entries = std::move(kept);
    changed = true;
  }
  if (note.size() == GIT_OID_HEXSZ) {
    std::string prefix(note.substr(2 * depth, 2));
    auto dir = std::find_if(entries.begin(), entries.end(),
                            [&](const Entry& e) { return is_fanout(e) && e.name == prefix; });
    if (dir != entries.end()) {
      git_oid sub = balance(impl, dir->oid, depth + 1, note);
      if (!git_oid_equal(&sub, &dir->oid)) {
        dir->oid = sub;
        changed = true;
      }
    }
  }
  return changed ? write_entries(impl, entries) : tree;
}

// The notes tree at depth (none: empty) with the note of commit (40 hex digits) set to
// blob: in the fanout subtree of its next two digits if there is one, else at this
// level; a note of commit at a level passed through goes (git reads the deepest one).
git_oid with_note(ShadowRepo::Impl& impl, const std::optional<git_oid>& tree, std::size_t depth,
                  const std::string& commit, const git_oid& blob) {
  std::vector<Entry> entries;
  if (tree) entries = entries_of(impl, *tree);
  std::string rest = commit.substr(2 * depth);
  std::erase_if(entries, [&](const Entry& e) { return e.mode != kModeTree && e.name == rest; });
  std::string prefix = rest.substr(0, 2);
  auto dir = std::find_if(entries.begin(), entries.end(),
                          [&](const Entry& e) { return is_fanout(e) && e.name == prefix; });
  if (dir != entries.end() && 2 * depth + 2 < GIT_OID_HEXSZ) {
    dir->oid = with_note(impl, dir->oid, depth + 1, commit, blob);
  } else {
    entries.push_back(Entry{rest, kModeFile, blob});
  }
  return write_entries(impl, entries);
}

// A notes tree at depth of notes (the rest of each id after 2 * depth digits, and its
// blob; no two for one commit), fanned out where a level would hold too many.
git_oid fanned_tree(ShadowRepo::Impl& impl, const std::vector<Entry>& notes, std::size_t depth) {
  if (notes.size() <= kMaxNotesPerLevel || 2 * depth + 2 >= GIT_OID_HEXSZ) {
    return write_entries(impl, notes);
  }
  std::map<std::string, std::vector<Entry>> groups;  // by the next two digits
  for (const Entry& e : notes) {
    groups[e.name.substr(0, 2)].push_back(Entry{e.name.substr(2), e.mode, e.oid});
  }
  std::vector<Entry> level;
  level.reserve(groups.size());
  for (const auto& [prefix, group] : groups) {
    level.push_back(Entry{prefix, kModeTree, fanned_tree(impl, group, depth + 1)});
  }
  return write_entries(impl, level);
}

}  // namespace

git_oid commit_notes(ShadowRepo::Impl& impl, std::optional<git_oid> base,
                     const std::vector<Note>& notes, const git_signature* sig) {
  if (notes.empty()) throw Error(ErrorCode::kInvalidArgument, "no notes to write");
  git_repository* repo = impl.repo.get();
  git::Commit parent;
  std::optional<git_oid> tree;
  if (base) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, repo, &*base), "cannot read the ledger's notes");
    parent.reset(raw);
    tree = *git_commit_tree_id(parent.get());
  }
  std::map<std::string, git_oid> blobs;  // by commit: a later note of one commit wins
  for (const Note& note : notes) {
    if (note.commit.size() != GIT_OID_HEXSZ || !is_hex(note.commit)) {
      throw Error(ErrorCode::kInvalidArgument, "a note needs a full commit id, not " + note.commit);
    }
    blobs[note.commit] = impl.write(note.text, GIT_OBJECT_BLOB);
  }
  if (!tree) {
    // A new history (gc rebuilding the ledger): the whole tree at once.
    std::vector<Entry> all;
    all.reserve(blobs.size());
    for (const auto& [commit, blob] : blobs) all.push_back(Entry{commit, kModeFile, blob});
    tree = fanned_tree(impl, all, 0);
  } else {
    for (const auto& [commit, blob] : blobs) {
      tree = balance(impl, with_note(impl, tree, 0, commit, blob), 0, commit);
    }
  }
  git::Tree written = impl.lookup_tree(*tree);
  const git_commit* parents[] = {parent.get()};
  git_oid commit;
  git::check(git_commit_create(&commit, repo, nullptr, sig, sig, nullptr, kNotesMessage,
                               written.get(), base ? 1 : 0, parents),
             "cannot write the ledger's notes");
  return commit;
}

}  // namespace fsnap
