// The ledger's notes (refs/notes/shadowbox), written with git's fanout: a notes tree
// level that holds more than kMaxNotesPerLevel notes has them moved into subtrees named
// by their next two hex digits ("ab/cdef..."), as git itself does, and a new note goes
// into the subtree of its prefix when there is one, so a write rewrites a few small
// trees instead of one tree that grows with the ledger (and a lookup reads those few).
// The notes of one write land in one commit, each tree written once. Beside the notes,
// at the root, a notes tree may hold anchors: trees the notes name, kept reachable.

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
  for (const Entry& e : entries) items.push_back(TreeItem{e.name, e.mode, e.oid});
  return impl.write(encode_tree(items), GIT_OBJECT_TREE);
}

// A note to set at some depth: the rest of its commit's id after 2 * depth digits.
struct NoteAt {
  std::string rest;
  git_oid blob;
};

// The anchors of a notes tree's root, by name.
using Anchors = std::map<std::string, git_oid>;

git_oid edit_level(ShadowRepo::Impl& impl, const std::optional<git_oid>& tree, std::size_t depth,
                   const std::vector<NoteAt>& notes, const Anchors* anchors);

// Moves the notes of entries (a level at depth) into fanout subtrees by their next two
// digits, as git does, if there are more than kMaxNotesPerLevel of them.
void spread(ShadowRepo::Impl& impl, std::vector<Entry>& entries, std::size_t depth) {
  auto crowd = std::count_if(entries.begin(), entries.end(),
                             [&](const Entry& e) { return is_note_at(e, depth); });
  if (static_cast<std::size_t>(crowd) <= kMaxNotesPerLevel || 2 * depth + 2 >= GIT_OID_HEXSZ) {
    return;
  }
  std::map<std::string, std::vector<NoteAt>> moved;  // by the next two digits
  std::vector<Entry> kept;
  for (Entry& e : entries) {
    if (is_note_at(e, depth)) {
      moved[e.name.substr(0, 2)].push_back(NoteAt{e.name.substr(2), e.oid});
    } else {
      kept.push_back(std::move(e));
    }
  }
  for (const auto& entry : moved) {
    const std::string& prefix = entry.first;
    const std::vector<NoteAt>& group = entry.second;
    auto dir = std::find_if(kept.begin(), kept.end(),
                            [&](const Entry& e) { return is_fanout(e) && e.name == prefix; });
    if (dir != kept.end()) {
      dir->oid = edit_level(impl, dir->oid, depth + 1, group, nullptr);
    } else {
      kept.push_back(
          Entry{prefix, kModeTree, edit_level(impl, std::nullopt, depth + 1, group, nullptr)});
    }
  }
  entries = std::move(kept);
}

// The notes tree at depth (none: empty) with notes set — each in the fanout subtree of
// its next two digits if there is one, else at this level (a note of the same commit
// at this level goes: git reads the deepest) — crowded levels fanned out, and at the
// root anchors set. Every tree is written once, each one part of the result.
git_oid edit_level(ShadowRepo::Impl& impl, const std::optional<git_oid>& tree, std::size_t depth,
                   const std::vector<NoteAt>& notes, const Anchors* anchors) {
  std::vector<Entry> entries;
  if (tree) entries = entries_of(impl, *tree);
  std::map<std::string, std::vector<NoteAt>> deeper;  // by fanout subtree
  for (const NoteAt& note : notes) {
    std::erase_if(entries,
                  [&](const Entry& e) { return e.mode != kModeTree && e.name == note.rest; });
    std::string prefix = note.rest.substr(0, 2);
    bool has_dir = 2 * depth + 2 < GIT_OID_HEXSZ &&
                   std::any_of(entries.begin(), entries.end(),
                               [&](const Entry& e) { return is_fanout(e) && e.name == prefix; });
    if (has_dir) {
      deeper[prefix].push_back(NoteAt{note.rest.substr(2), note.blob});
    } else {
      entries.push_back(Entry{note.rest, kModeFile, note.blob});
    }
  }
  for (Entry& e : entries) {
    auto group = is_fanout(e) ? deeper.find(e.name) : deeper.end();
    if (group != deeper.end()) e.oid = edit_level(impl, e.oid, depth + 1, group->second, nullptr);
  }
  if (anchors != nullptr) {
    for (const auto& anchor : *anchors) {
      const std::string& name = anchor.first;
      const git_oid& oid = anchor.second;
      auto at = std::find_if(entries.begin(), entries.end(),
                             [&](const Entry& e) { return e.name == name; });
      if (at != entries.end()) {
        *at = Entry{name, kModeTree, oid};
      } else {
        entries.push_back(Entry{name, kModeTree, oid});
      }
    }
  }
  spread(impl, entries, depth);
  return write_entries(impl, entries);
}

}  // namespace

git_oid commit_notes(ShadowRepo::Impl& impl, std::optional<git_oid> base,
                     const std::vector<Note>& notes, const git_signature* sig,
                     const std::vector<ObjectEntry>& extra_anchors) {
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
  std::map<std::string, git_oid> anchors;  // by name: a later one wins
  auto anchor = [&](const std::string& name, const std::string& tree_hex) {
    if (name.empty()) return;
    if (name.find('/') != std::string::npos || name == "." || name == ".." || is_hex(name) ||
        tree_hex.size() != GIT_OID_HEXSZ || !is_hex(tree_hex)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "bad anchor " + name + " " + tree_hex + " of a note");
    }
    anchors[name] = git::from_hex(tree_hex);
  };
  for (const ObjectEntry& e : extra_anchors) anchor(e.name, e.oid);
  for (const Note& note : notes) anchor(note.anchor_name, note.anchor_tree);
  std::vector<NoteAt> edits;
  edits.reserve(blobs.size());
  for (const auto& [commit, blob] : blobs) edits.push_back(NoteAt{commit, blob});
  tree = edit_level(impl, tree, 0, edits, &anchors);
  git::Tree written = impl.lookup_tree(*tree);
  const git_commit* parents[] = {parent.get()};
  git_oid commit;
  git::check(git_commit_create(&commit, repo, nullptr, sig, sig, nullptr, kNotesMessage,
                               written.get(), base ? 1 : 0, parents),
             "cannot write the ledger's notes");
  return commit;
}

namespace {

void collect_notes(const ShadowRepo::Impl& impl, const git_oid& tree, const std::string& prefix,
                   NotesContent& out) {
  for (const Entry& e : entries_of(impl, tree)) {
    if (is_fanout(e) && prefix.size() + 2 < GIT_OID_HEXSZ) {
      collect_notes(impl, e.oid, prefix + e.name, out);
    } else if (e.mode != kModeTree && is_note_at(e, prefix.size() / 2)) {
      out.notes.push_back(Note{prefix + e.name, impl.read(e.oid, GIT_OBJECT_BLOB)});
    } else if (prefix.empty() && e.mode == kModeTree) {
      out.anchors.push_back(ObjectEntry{e.name, git::to_hex(e.oid), true});
    }
  }
}

}  // namespace

NotesContent read_notes(const ShadowRepo::Impl& impl, const git_oid& tree) {
  NotesContent out;
  collect_notes(impl, tree, "", out);
  return out;
}

}  // namespace fsnap
