// ShadowRepo::diff_trees / unified_diff: comparing two captured trees.

#include <algorithm>

#include "entry_names.hpp"
#include "fsnap/shadow_repo.hpp"
#include "fsnap/tree_change.hpp"
#include "shadow_repo_impl.hpp"

namespace fsnap {

namespace {

struct Entry {
  std::string name;
  TreeEntryInfo info;
  git_oid oid;
};

std::optional<TreeEntryInfo> info_of(git_filemode_t mode, const git_oid& oid) {
  TreeEntryInfo info;
  info.oid = git::to_hex(oid);
  switch (mode) {
    case GIT_FILEMODE_TREE:
      info.type = EntryType::kDirectory;
      break;
    case GIT_FILEMODE_BLOB:
      info.type = EntryType::kFile;
      break;
    case GIT_FILEMODE_BLOB_EXECUTABLE:
      info.type = EntryType::kFile;
      info.executable = true;
      break;
    case GIT_FILEMODE_LINK:
      info.type = EntryType::kSymlink;
      break;
    default:
      return std::nullopt;  // gitlinks are never written by shadowbox
  }
  return info;
}

// The entries of the tree at path, sorted bytewise by name (git orders directories as
// if their names ended in '/', which would interleave differently). Every name is one
// a restore may write (a tree may come from someone else's store): kPathEscape or
// kCorrupt otherwise.
std::vector<Entry> entries_of(const ShadowRepo::Impl& impl, const std::optional<git_oid>& tree,
                              const std::string& path) {
  std::vector<Entry> out;
  if (!tree) return out;
  git::Tree t = impl.lookup_tree(*tree);
  std::string what = "tree " + git::to_hex(*tree);
  std::size_t n = git_tree_entrycount(t.get());
  out.reserve(n);
  std::vector<std::string_view> names;
  names.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(t.get(), i);
    std::string_view name = git_tree_entry_name(e);
    check_entry_name(name, path, what);
    names.push_back(name);
    auto info = info_of(git_tree_entry_filemode(e), *git_tree_entry_id(e));
    if (!info) continue;
    out.push_back(Entry{std::string(name), *info, *git_tree_entry_id(e)});
  }
  check_unique_names(names, path, what);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

class TreeDiffer {
 public:
  TreeDiffer(const ShadowRepo::Impl& impl, std::vector<TreeChange>& out) : impl_(impl), out_(out) {}

  void diff(const std::optional<git_oid>& a, const std::optional<git_oid>& b,
            const std::string& prefix) {
    check_tree_depth(depth_, prefix, "the tree");
    ++depth_;
    std::vector<Entry> olds = entries_of(impl_, a, prefix), news = entries_of(impl_, b, prefix);
    std::size_t i = 0, j = 0;
    while (i < olds.size() || j < news.size()) {
      if (j == news.size() || (i < olds.size() && olds[i].name < news[j].name)) {
        removed(olds[i++], prefix);
      } else if (i == olds.size() || news[j].name < olds[i].name) {
        added(news[j++], prefix);
      } else {
        changed(olds[i++], news[j++], prefix);
      }
    }
    --depth_;
  }

 private:
  static std::string join(const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "/" + name;
  }
  static bool is_dir(const Entry& e) { return e.info.type == EntryType::kDirectory; }

  void emit(TreeChange::Kind kind, std::string path, const Entry* before, const Entry* after) {
    TreeChange c;
    c.kind = kind;
    c.path = std::move(path);
    if (before) c.before = before->info;
    if (after) c.after = after->info;
    out_.push_back(std::move(c));
  }

  void removed(const Entry& e, const std::string& prefix) {
    std::string path = join(prefix, e.name);
    emit(TreeChange::Kind::kDeleted, path, &e, nullptr);
    if (is_dir(e)) diff(e.oid, std::nullopt, path);
  }

  void added(const Entry& e, const std::string& prefix) {
    std::string path = join(prefix, e.name);
    emit(TreeChange::Kind::kAdded, path, nullptr, &e);
    if (is_dir(e)) diff(std::nullopt, e.oid, path);
  }

  void changed(const Entry& a, const Entry& b, const std::string& prefix) {
    if (a.info == b.info) return;
    std::string path = join(prefix, a.name);
    if (is_dir(a) && is_dir(b)) {
      diff(a.oid, b.oid, path);
      return;
    }
    bool same_type = a.info.type == b.info.type;
    emit(same_type ? TreeChange::Kind::kModified : TreeChange::Kind::kTypeChanged, path, &a, &b);
    if (is_dir(a)) diff(a.oid, std::nullopt, path);
    if (is_dir(b)) diff(std::nullopt, b.oid, path);
  }

  const ShadowRepo::Impl& impl_;
  std::vector<TreeChange>& out_;
  std::size_t depth_ = 0;  // of the directory being compared
};

std::optional<git_oid> optional_oid(std::string_view hex) {
  if (hex.empty()) return std::nullopt;
  return git::from_hex(hex);
}

}  // namespace

char status_letter(TreeChange::Kind kind) {
  switch (kind) {
    case TreeChange::Kind::kAdded:
      return 'A';
    case TreeChange::Kind::kDeleted:
      return 'D';
    case TreeChange::Kind::kModified:
      return 'M';
    case TreeChange::Kind::kTypeChanged:
      return 'T';
  }
  return '?';
}

std::vector<TreeChange> ShadowRepo::diff_trees(std::string_view from, std::string_view to) const {
  std::vector<TreeChange> out;
  auto a = optional_oid(from), b = optional_oid(to);
  if (a && b && git_oid_equal(&*a, &*b)) return out;
  TreeDiffer(*impl_, out).diff(a, b, "");
  return out;
}

std::string ShadowRepo::unified_diff(std::string_view from, std::string_view to) const {
  git::Tree a, b;
  if (!from.empty()) a = impl_->lookup_tree(git::from_hex(from));
  if (!to.empty()) b = impl_->lookup_tree(git::from_hex(to));
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw = nullptr;
  git::check(git_diff_tree_to_tree(&raw, impl_->repo.get(), a.get(), b.get(), &opts),
             "cannot compare trees");
  git::Diff diff(raw);
  git::Buf buf;
  git::check(git_diff_to_buf(&buf.buf, diff.get(), GIT_DIFF_FORMAT_PATCH), "cannot format diff");
  return buf.str();
}

}  // namespace fsnap
