#include "pack_names.hpp"

#include <algorithm>

namespace fsnap {

namespace {

class Namer {
 public:
  Namer(const ShadowRepo::Impl& impl, const OidSet* only) : impl_(impl), only_(only) {}

  void walk_ref(const std::string& ref, const git_oid& tip) {
    std::string kind = kind_of(ref);
    std::vector<git_oid> commits{tip};
    while (!commits.empty()) {
      git_oid id = commits.back();
      commits.pop_back();
      if (!take(id, kind)) continue;
      git_object* obj = nullptr;
      if (git_object_lookup(&obj, impl_.repo.get(), &id, GIT_OBJECT_ANY) != 0) continue;
      git_object_t type = git_object_type(obj);
      if (type == GIT_OBJECT_TREE) {
        git_object_free(obj);
        walk_tree(id, kind);
        continue;
      }
      if (type != GIT_OBJECT_COMMIT) {
        git_object_free(obj);
        continue;
      }
      auto* commit = reinterpret_cast<git_commit*>(obj);
      const git_oid* tree = git_commit_tree_id(commit);
      if (take(*tree, kind)) walk_tree(*tree, kind);
      for (unsigned i = 0; i < git_commit_parentcount(commit); ++i) {
        commits.push_back(*git_commit_parent_id(commit, i));
      }
      git_object_free(obj);
    }
  }

  PackNames take_names() { return std::move(names_); }

 private:
  // "runs", "notes", "sessions", "home", "tags": what the objects under ref are.
  static std::string kind_of(const std::string& ref) {
    if (ref.rfind(layout::kNotesRef, 0) == 0) return "notes";
    std::string rest = ref.substr(ref.rfind("refs/shadowbox/", 0) == 0 ? 15 : 5);
    return rest.substr(0, rest.find('/'));
  }

  // Names id if it is to be named and has no name yet; whether it got one.
  bool take(const git_oid& id, const std::string& name) {
    if (only_ != nullptr && only_->count(id) == 0) return false;
    if (!names_.names.emplace(id, name).second) return false;
    names_.order.push_back(id);
    return true;
  }

  void walk_tree(const git_oid& id, const std::string& path) {
    git::Tree tree = impl_.lookup_tree(id);
    std::size_t n = git_tree_entrycount(tree.get());
    bool notes = path.rfind("notes", 0) == 0;
    for (std::size_t i = 0; i < n; ++i) {
      const git_tree_entry* e = git_tree_entry_byindex(tree.get(), i);
      bool subtree = git_tree_entry_type(e) == GIT_OBJECT_TREE;
      // Notes are named by their ids: they are all one kind of thing (what else the notes
      // tree holds, the trees notes name, keeps its names).
      std::string entry = git_tree_entry_name(e);
      std::string name = path + "/" + (notes && !subtree && is_hex(entry) ? "note" : entry);
      if (subtree) {
        if (take(*git_tree_entry_id(e), name)) walk_tree(*git_tree_entry_id(e), name);
      } else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
        take(*git_tree_entry_id(e), name);
      }
    }
  }

  const ShadowRepo::Impl& impl_;
  const OidSet* only_;
  PackNames names_;
};

}  // namespace

std::vector<RefTip> ref_tips(const ShadowRepo::Impl& impl) {
  git_reference_iterator* raw = nullptr;
  git::check(git_reference_iterator_new(&raw, impl.repo.get()), "cannot list refs");
  git::ReferenceIterator it(raw);
  std::vector<RefTip> tips;
  git_reference* ref = nullptr;
  while (git_reference_next(&ref, it.get()) == 0) {
    git::Reference owned(ref);
    git_reference* resolved = nullptr;
    if (git_reference_resolve(&resolved, ref) == 0) {
      tips.emplace_back(git_reference_name(ref), *git_reference_target(resolved));
      git_reference_free(resolved);
    }
  }
  return tips;
}

PackNames name_objects_from(const ShadowRepo::Impl& impl, const std::vector<RefTip>& tips,
                            const OidSet* only) {
  Namer namer(impl, only);
  for (const auto& [name, tip] : tips) namer.walk_ref(name, tip);
  return namer.take_names();
}

PackNames name_reachable_objects(const ShadowRepo::Impl& impl, const OidSet* only) {
  return name_reachable_objects(impl, ref_tips(impl), only);
}

PackNames name_reachable_objects(const ShadowRepo::Impl& impl, std::vector<RefTip> tips,
                                 const OidSet* only) {
  // A tag names a checkpoint its run reaches too: the run's walk names it first.
  std::stable_partition(tips.begin(), tips.end(), [](const RefTip& tip) {
    return tip.first.rfind(layout::kTagRefPrefix, 0) != 0;
  });
  return name_objects_from(impl, tips, only);
}

}  // namespace fsnap
