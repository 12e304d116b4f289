// ShadowRepo's plain object access: blobs and trees written and read by id, for data
// kept beside the checkpoints (the ledger's session trees).

#include <set>

#include "fsnap/error.hpp"
#include "fsnap/shadow_repo.hpp"
#include "shadow_repo_impl.hpp"
#include "tree_encoding.hpp"

namespace fsnap {

std::string ShadowRepo::write_blob(std::string_view content) {
  return git::to_hex(impl_->write(content, GIT_OBJECT_BLOB));
}

std::string ShadowRepo::write_tree(const std::vector<ObjectEntry>& entries) {
  std::vector<TreeItem> items;
  items.reserve(entries.size());
  std::set<std::string_view> names;
  for (const ObjectEntry& e : entries) {
    if (e.name.empty() || e.name == "." || e.name == ".." ||
        e.name.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
      throw Error(ErrorCode::kInvalidArgument, "not a tree entry name: " + quote_input(e.name));
    }
    if (!names.insert(e.name).second) {
      throw Error(ErrorCode::kInvalidArgument, "two tree entries named " + quote_input(e.name));
    }
    items.push_back(TreeItem{e.name, e.is_tree ? kModeTree : kModeFile, git::from_hex(e.oid)});
  }
  return git::to_hex(impl_->write(encode_tree(items), GIT_OBJECT_TREE));
}

std::vector<ObjectEntry> ShadowRepo::read_tree(std::string_view oid) const {
  git::Tree tree = impl_->lookup_tree(git::from_hex(oid));
  std::size_t n = git_tree_entrycount(tree.get());
  std::vector<ObjectEntry> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
    out.push_back(ObjectEntry{git_tree_entry_name(e), git::to_hex(*git_tree_entry_id(e)),
                              git_tree_entry_type(e) == GIT_OBJECT_TREE});
  }
  return out;
}

bool ShadowRepo::has_object(std::string_view oid) const {
  git_oid id = git::from_hex(oid);
  return git_odb_exists(impl_->odb.get(), &id) != 0;
}

}  // namespace fsnap
