#include "fsnap/branch_export.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <boost/filesystem/operations.hpp>

#include "fsnap/error.hpp"
#include "fsnap/path_quoting.hpp"
#include "global_ignores.hpp"
#include "shadow_repo_impl.hpp"
#include "tree_editor.hpp"
#include "workspace_capture.hpp"
#include "workspace_restore.hpp"

namespace fsnap {

namespace fs = boost::filesystem;

namespace {

// A file, symlink or submodule entry of a tree: its object and mode.
struct FlatEntry {
  git_oid id{};
  git_filemode_t mode = GIT_FILEMODE_BLOB;
  bool operator==(const FlatEntry& o) const { return git_oid_equal(&id, &o.id) && mode == o.mode; }
};

// Every non-directory entry below tree, by path.
std::map<std::string, FlatEntry> flatten(const git_tree* tree) {
  std::map<std::string, FlatEntry> out;
  auto visit = [](const char* root, const git_tree_entry* entry, void* payload) -> int {
    if (git_tree_entry_type(entry) == GIT_OBJECT_TREE) return 0;
    auto& map = *static_cast<std::map<std::string, FlatEntry>*>(payload);
    map[std::string(root) + git_tree_entry_name(entry)] =
        FlatEntry{*git_tree_entry_id(entry), git_tree_entry_filemode(entry)};
    return 0;
  };
  git::check(git_tree_walk(tree, GIT_TREEWALK_PRE, visit, &out), "cannot read tree",
             ErrorCode::kCorrupt);
  return out;
}

git::Tree lookup_tree(git_repository* repo, const git_oid& id) {
  git_tree* raw = nullptr;
  git::check(git_tree_lookup(&raw, repo, &id), "cannot read tree", ErrorCode::kCorrupt);
  return git::Tree(raw);
}

// The mode a captured entry has in git.
git_filemode_t mode_of(const TreeEntryInfo& info) {
  if (info.type == EntryType::kSymlink) return GIT_FILEMODE_LINK;
  return info.executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
}

// Whether a path has a `.git` component in any spelling of the name git refuses.
bool has_git_component(const std::string& path) {
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = std::min(path.find('/', start), path.size());
    std::string component = path.substr(start, end - start);
    for (char& c : component) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (component == ".git") return true;
    start = end + 1;
  }
  return false;
}

// The user's repository, and where the workspace is in its work tree.
struct UserRepository {
  git::Repository repo;
  fs::path workdir;
  std::string prefix;  // the workspace's path in the work tree, "" or ending in '/'
};

UserRepository open_user_repository(const fs::path& workspace) {
  git::ensure_initialized();
  UserRepository out;
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, workspace.c_str(), 0, nullptr);
  out.repo.reset(raw);
  if (rc == GIT_ENOTFOUND || (rc == 0 && git_repository_is_bare(raw))) {
    throw Error(ErrorCode::kNotFound, "the workspace " + workspace.string() +
                                          " is in no git repository with a work tree: export "
                                          "writes into the repository the workspace is in");
  }
  git::check(rc, "cannot open the git repository of " + workspace.string());
  out.workdir = fs::canonical(git_repository_workdir(raw));
  fs::path rel = fs::canonical(workspace).lexically_relative(out.workdir);
  if (rel.empty() || *rel.begin() == ".." || has_git_component(rel.generic_string())) {
    throw Error(ErrorCode::kNotFound, "the workspace " + workspace.string() +
                                          " is not inside the work tree of " +
                                          out.workdir.string());
  }
  if (rel != ".") out.prefix = rel.generic_string() + "/";
  add_global_ignores(raw);
  return out;
}

// Writes the steps into a user's repository.
class Exporter {
 public:
  Exporter(ShadowRepo& shadow, UserRepository& user, std::optional<git_oid> head_tree)
      : shadow_repo_(shadow),
        shadow_(shadow.impl()),
        user_(user),
        editor_(user.repo.get(), head_tree) {
    git_odb* raw = nullptr;
    git::check(git_repository_odb(&raw, user.repo.get()), "cannot open the repository's objects");
    odb_.reset(raw);
    if (head_tree) {
      git::Tree tree = lookup_tree(user.repo.get(), *head_tree);
      head_ = flatten(tree.get());
    }
  }

  // Makes the workspace part of the tree the shadow tree start, keeping what the capture
  // did not take (untouchable; with gitignored, what the repository ignores) as HEAD has
  // it.
  void start_from(const std::string& start, const Untouchable& untouchable, bool gitignored) {
    git::Tree tree = lookup_tree(shadow_.repo.get(), git::from_hex(start));
    std::map<std::string, FlatEntry> captured = flatten(tree.get());
    for (const auto& [path, entry] : head_) {
      if (path.compare(0, user_.prefix.size(), user_.prefix) != 0) continue;
      std::string rel = path.substr(user_.prefix.size());
      if (captured.count(rel) != 0 || entry.mode == GIT_FILEMODE_COMMIT ||
          untouchable.covers(rel, false) || (gitignored && ignored(path))) {
        continue;  // there, a submodule, or not captured: as HEAD has it
      }
      editor_.remove(path);
    }
    for (const auto& [rel, entry] : captured) set(rel, entry);
  }

  // Applies the changes between two shadow trees.
  void apply(const std::string& from, const std::string& to) {
    std::vector<TreeChange> changes = shadow_repo_.diff_trees(from, to);
    for (const TreeChange& c : changes) {
      if (c.before && c.before->type != EntryType::kDirectory &&
          !(c.after && c.after->type == c.before->type) && !has_git_component(c.path)) {
        editor_.remove(user_.prefix + c.path);
      }
    }
    for (const TreeChange& c : changes) {
      if (c.after && c.after->type != EntryType::kDirectory) {
        set(c.path, FlatEntry{git::from_hex(c.after->oid), mode_of(*c.after)});
      }
    }
  }

  git_oid tree() { return editor_.write(); }
  std::vector<std::string> ignored_paths() const { return {ignored_.begin(), ignored_.end()}; }

 private:
  // Puts a shadow entry at workspace path rel, unless the user's repository ignores it
  // (and does not track it) or it is under a .git.
  void set(const std::string& rel, const FlatEntry& entry) {
    std::string path = user_.prefix + rel;
    if (has_git_component(path)) return;
    if (head_.count(path) == 0 && ignored(path)) {
      ignored_.insert(rel);
      return;
    }
    copy_object(entry.id);
    editor_.set(path, entry.id, entry.mode);
  }

  bool ignored(const std::string& path) {
    int ignored = 0;
    git::check(git_ignore_path_is_ignored(&ignored, user_.repo.get(), path.c_str()),
               "cannot tell whether " + quote_path(path) + " is ignored");
    return ignored == 1;
  }

  // The blob id of the shadow repository, written into the user's (streamed).
  void copy_object(const git_oid& id) {
    if (git_odb_exists(odb_.get(), &id)) return;
    std::size_t size = 0;
    git_object_t type = GIT_OBJECT_INVALID;
    git::check(git_odb_read_header(&size, &type, shadow_.odb.get(), &id),
               "cannot read " + git::to_hex(id) + " in the shadow repository", ErrorCode::kCorrupt);
    git_odb_stream* raw = nullptr;
    git::check(git_odb_open_wstream(&raw, odb_.get(), size, type),
               "cannot write into the repository's objects");
    std::unique_ptr<git_odb_stream, decltype(&git_odb_stream_free)> stream(raw,
                                                                           git_odb_stream_free);
    shadow_.read_blob_in_pieces(id, [&](const char* data, std::size_t n) {
      git::check(git_odb_stream_write(stream.get(), data, n),
                 "cannot write into the repository's objects");
    });
    git_oid written;
    git::check(git_odb_stream_finalize_write(&written, stream.get()),
               "cannot write into the repository's objects");
    if (!git_oid_equal(&written, &id)) {
      throw Error(ErrorCode::kCorrupt,
                  "object " + git::to_hex(id) + " of the shadow repository does not match its id");
    }
  }

  ShadowRepo& shadow_repo_;
  ShadowRepo::Impl& shadow_;
  UserRepository& user_;
  TreeEditor editor_;
  git::Odb odb_;
  std::map<std::string, FlatEntry> head_;  // HEAD's entries, by path in the work tree
  std::set<std::string> ignored_;
};

git_oid write_commit(git_repository* repo, const git_oid& tree_id, const ExportStep& step,
                     std::optional<git_oid> parent) {
  git::Tree tree = lookup_tree(repo, tree_id);
  git::Commit parent_commit;
  if (parent) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, repo, &*parent), "cannot read commit", ErrorCode::kCorrupt);
    parent_commit.reset(raw);
  }
  git::Signature sig = shadowbox_signature(step.time);
  const git_commit* parents[] = {parent_commit.get()};
  git_oid out;
  git::check(git_commit_create(&out, repo, nullptr, sig.get(), sig.get(), nullptr,
                               step.message.c_str(), tree.get(), parent ? 1 : 0, parents),
             "cannot write commit");
  return out;
}

}  // namespace

BranchExportResult export_branch(ShadowRepo& shadow, const fs::path& workspace,
                                 const CaptureOptions& capture,
                                 const BranchExportRequest& request) {
  UserRepository user = open_user_repository(workspace);
  git_repository* repo = user.repo.get();
  BranchExportResult result;
  result.repository = user.workdir.string();
  result.ref = "refs/heads/" + request.branch;
  int valid = 0;
  git::check(git_branch_name_is_valid(&valid, request.branch.c_str()), "cannot check a name");
  if (valid == 0 || request.branch.empty() || request.branch.front() == '-') {
    throw Error(ErrorCode::kInvalidArgument,
                quote_input(request.branch) + " is not a name git allows for a branch");
  }
  git_reference* existing_raw = nullptr;
  int rc = git_reference_lookup(&existing_raw, repo, result.ref.c_str());
  git::Reference existing(existing_raw);
  if (rc != GIT_ENOTFOUND) git::check(rc, "cannot read " + result.ref);
  if (existing) {
    if (git_branch_is_checked_out(existing.get()) == 1) {
      throw Error(ErrorCode::kConflict, "branch " + quote_input(request.branch) +
                                            " is checked out: export never moves a checked-out "
                                            "branch; name another");
    }
    if (!request.force) {
      throw Error(ErrorCode::kConflict, "branch " + quote_input(request.branch) +
                                            " exists; replace it with --force, or name another");
    }
    result.replaced = true;
  }

  // The base: HEAD's commit (none on an unborn HEAD).
  std::optional<git_oid> tip;
  std::optional<git_oid> head_tree;
  git_oid head_id;
  if (git_reference_name_to_id(&head_id, repo, "HEAD") == 0) {
    git_commit* raw = nullptr;
    git::check(git_commit_lookup(&raw, repo, &head_id), "cannot read HEAD", ErrorCode::kCorrupt);
    git::Commit head(raw);
    tip = head_id;
    head_tree = *git_commit_tree_id(head.get());
    result.base = git::to_hex(head_id);
  }

  Exporter exporter(shadow, user, head_tree);
  Untouchable untouchable;
  untouchable.excludes = exclude_rules(capture);
  for (const SkippedPath& s : request.start_skipped) untouchable.paths.insert(s.path);
  exporter.start_from(request.start.tree, untouchable, capture.respect_gitignore);
  git_oid tree = exporter.tree();
  if (!head_tree || !git_oid_equal(&tree, &*head_tree)) {
    tip = write_commit(repo, tree, request.start, tip);
    result.start_commit = git::to_hex(*tip);
  }
  std::string previous = request.start.tree;
  for (const ExportStep& step : request.steps) {
    git_oid before = tree;
    exporter.apply(previous, step.tree);
    previous = step.tree;
    tree = exporter.tree();
    if (git_oid_equal(&tree, &before)) {
      result.commits.emplace_back(std::nullopt);
      continue;
    }
    tip = write_commit(repo, tree, step, tip);
    result.commits.emplace_back(git::to_hex(*tip));
  }
  result.ignored = exporter.ignored_paths();
  if (!tip) return result;  // nothing to point a branch at: an unborn HEAD, nothing exported
  result.tip = git::to_hex(*tip);
  git_reference* made = nullptr;
  git::check(git_reference_create(&made, repo, result.ref.c_str(), &*tip, request.force ? 1 : 0,
                                  "shadowbox export"),
             "cannot write " + result.ref, request.force ? ErrorCode::kIo : ErrorCode::kConflict);
  git_reference_free(made);
  return result;
}

}  // namespace fsnap
