#include "tree_editor.hpp"

namespace fsnap {

namespace {

std::vector<std::string> components_of(const std::string& path) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = std::min(path.find('/', start), path.size());
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

TreeEditor::TreeEditor(git_repository* repo, std::optional<git_oid> base) : repo_(repo) {
  root_.original = base;
  root_.loaded = !base;
}

TreeEditor::~TreeEditor() = default;

void TreeEditor::load(Node& node) {
  if (node.loaded) return;
  git_tree* raw = nullptr;
  git::check(git_tree_lookup(&raw, repo_, &*node.original), "cannot read tree",
             ErrorCode::kCorrupt);
  git::Tree tree(raw);
  for (std::size_t i = 0; i < git_tree_entrycount(tree.get()); ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    Entry entry;
    entry.id = *git_tree_entry_id(e);
    entry.mode = git_tree_entry_filemode(e);
    node.entries.emplace(git_tree_entry_name(e), std::move(entry));
  }
  node.loaded = true;
}

TreeEditor::Node* TreeEditor::directory(const std::vector<std::string>& components,
                                        std::size_t count, bool make) {
  Node* node = &root_;
  for (std::size_t i = 0; i < count; ++i) {
    load(*node);
    node->original.reset();  // something below it changes
    auto it = node->entries.find(components[i]);
    if (it == node->entries.end() || it->second.mode != GIT_FILEMODE_TREE) {
      if (!make) return nullptr;
      Entry dir;
      dir.mode = GIT_FILEMODE_TREE;
      dir.child = std::make_unique<Node>();
      dir.child->loaded = true;
      it = node->entries.insert_or_assign(components[i], std::move(dir)).first;
    } else if (!it->second.child) {
      it->second.child = std::make_unique<Node>();
      it->second.child->original = it->second.id;
    }
    node = it->second.child.get();
  }
  load(*node);
  node->original.reset();
  return node;
}

void TreeEditor::set(const std::string& path, const git_oid& id, git_filemode_t mode) {
  std::vector<std::string> components = components_of(path);
  Node* parent = directory(components, components.size() - 1, true);
  Entry entry;
  entry.id = id;
  entry.mode = mode;
  parent->entries.insert_or_assign(components.back(), std::move(entry));
}

void TreeEditor::remove(const std::string& path) {
  std::vector<std::string> components = components_of(path);
  Node* parent = directory(components, components.size() - 1, false);
  if (parent != nullptr) parent->entries.erase(components.back());
}

git_oid TreeEditor::write() {
  return write(root_);
}

git_oid TreeEditor::write(Node& node) {
  if (node.original) return *node.original;
  git_treebuilder* raw = nullptr;
  git::check(git_treebuilder_new(&raw, repo_, nullptr), "cannot build tree");
  std::unique_ptr<git_treebuilder, decltype(&git_treebuilder_free)> builder(raw,
                                                                            git_treebuilder_free);
  for (auto it = node.entries.begin(); it != node.entries.end();) {
    Entry& entry = it->second;
    if (entry.child) {
      entry.id = write(*entry.child);
      if (entry.child->entries.empty() && entry.child->loaded) {  // git keeps no empty directory
        it = node.entries.erase(it);
        continue;
      }
    }
    git::check(
        git_treebuilder_insert(nullptr, builder.get(), it->first.c_str(), &entry.id, entry.mode),
        "cannot add " + it->first + " to a tree");
    ++it;
  }
  git_oid out;
  git::check(git_treebuilder_write(&out, builder.get()), "cannot write tree");
  node.original = out;
  return out;
}

}  // namespace fsnap
