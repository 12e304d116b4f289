#include "fsnap/in_memory_filesystem.hpp"

#include <deque>
#include <map>
#include <mutex>
#include <utility>

#include "fsnap/error.hpp"
#include "git_handles.hpp"
#include "host_paths.hpp"
#include "tree_encoding.hpp"

namespace fsnap {

// An immutable entry of the persistent tree. Directories share unchanged children
// with the versions they were derived from. The git object id of an entry is
// computed on first use and cached, so hashing a snapshot costs only the entries
// created since the last one.
struct InMemoryFilesystem::Node {
  EntryType type = EntryType::kDirectory;
  bool executable = false;
  std::string data;  // file content or symlink target
  std::map<std::string, std::shared_ptr<const Node>, std::less<>> children;

  mutable std::once_flag hashed;
  mutable git_oid oid{};

  const git_oid& id() const {
    std::call_once(hashed, [this] {
      if (type == EntryType::kDirectory) {
        std::vector<TreeItem> items;
        items.reserve(children.size());
        for (const auto& [name, child] : children) {
          items.push_back(TreeItem{name, child->mode(), child->id()});
        }
        std::string body = encode_tree(items);
        git::check(git_odb_hash(&oid, body.data(), body.size(), GIT_OBJECT_TREE), "hash tree");
      } else {
        git::check(git_odb_hash(&oid, data.data(), data.size(), GIT_OBJECT_BLOB), "hash blob");
      }
    });
    return oid;
  }

  std::uint32_t mode() const {
    switch (type) {
      case EntryType::kDirectory:
        return kModeTree;
      case EntryType::kSymlink:
        return kModeLink;
      case EntryType::kFile:
        break;
    }
    return executable ? kModeExec : kModeFile;
  }
};

namespace {

using Node = InMemoryFilesystem::Node;
using NodePtr = std::shared_ptr<const Node>;

constexpr int kMaxSymlinkHops = 40;

NodePtr make_dir() {
  return std::make_shared<const Node>();
}

NodePtr make_leaf(EntryType type, std::string_view data, bool executable) {
  auto node = std::make_shared<Node>();
  node->type = type;
  node->data = std::string(data);
  node->executable = executable;
  return node;
}

std::shared_ptr<Node> copy_dir(const Node& dir) {
  auto node = std::make_shared<Node>();
  node->children = dir.children;
  return node;
}

std::vector<std::string> split(const std::string& rel) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start < rel.size()) {
    std::size_t end = rel.find('/', start);
    if (end == std::string::npos) end = rel.size();
    parts.push_back(rel.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out.push_back('/');
    out += p;
  }
  return out;
}

const Node* child_of(const Node* dir, const std::string& name) {
  if (dir == nullptr || dir->type != EntryType::kDirectory) return nullptr;
  auto it = dir->children.find(name);
  return it == dir->children.end() ? nullptr : it->second.get();
}

// Where a path leads: the components after following symlinks, and the entry there
// (nullptr if nothing is there yet).
struct Resolved {
  std::vector<std::string> parts;
  const Node* node = nullptr;
  std::string rel;  // the caller's path, normalised, for messages
};

// Follows symlinks in every component but the last (and in the last too when
// follow_last). Links must stay inside the tree. Missing components are allowed: the
// result then names a path that does not exist yet. A component below a
// non-directory is an error, unless probing: then the result is "not found".
Resolved resolve(const Node* root, std::string_view path, bool follow_last, bool probing = false) {
  Resolved out;
  out.rel = normalize_relative(path);
  std::deque<std::string> pending;
  for (std::string& p : split(out.rel)) pending.push_back(std::move(p));
  int hops = 0;
  const Node* dir = root;
  while (!pending.empty()) {
    std::string name = std::move(pending.front());
    pending.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (out.parts.empty()) {
        throw Error(ErrorCode::kPathEscape, out.rel + ": a symlink leads outside the root");
      }
      out.parts.pop_back();
      dir = root;
      for (const std::string& p : out.parts) dir = child_of(dir, p);
      continue;
    }
    const Node* node = child_of(dir, name);
    bool last = pending.empty();
    if (node != nullptr && node->type == EntryType::kSymlink && (!last || follow_last)) {
      if (++hops > kMaxSymlinkHops) {
        throw Error(ErrorCode::kInvalidArgument, out.rel + ": too many levels of symlinks");
      }
      if (!node->data.empty() && node->data.front() == '/') {
        throw Error(ErrorCode::kPathEscape, out.rel + ": a symlink leads outside the root");
      }
      std::vector<std::string> target = split(node->data);
      pending.insert(pending.begin(), target.begin(), target.end());
      continue;
    }
    if (!last && node != nullptr && node->type != EntryType::kDirectory) {
      if (probing) {
        out.parts.push_back(std::move(name));
        out.node = nullptr;
        return out;
      }
      throw Error(ErrorCode::kInvalidArgument, out.rel + ": " + join(out.parts) +
                                                   (out.parts.empty() ? "" : "/") + name +
                                                   " is not a directory");
    }
    out.parts.push_back(std::move(name));
    dir = node;
  }
  out.node = out.parts.empty() ? root : dir;
  return out;
}

const Node& existing(const Resolved& r) {
  if (r.node == nullptr) throw Error(ErrorCode::kNotFound, r.rel + ": no such file or directory");
  return *r.node;
}

// Returns a copy of dir in which the entry at parts[index..] is replaced by what
// change returns (nullptr removes it). Missing directories on the way are created.
template <typename Change>
NodePtr update(const Node& dir, const std::vector<std::string>& parts, std::size_t index,
               const Change& change) {
  std::shared_ptr<Node> copy = copy_dir(dir);
  const std::string& name = parts[index];
  auto it = copy->children.find(name);
  const Node* old = it == copy->children.end() ? nullptr : it->second.get();
  NodePtr replacement;
  if (index + 1 == parts.size()) {
    replacement = change(old);
  } else {
    NodePtr empty;
    if (old == nullptr) empty = make_dir();
    replacement = update(old != nullptr ? *old : *empty, parts, index + 1, change);
  }
  if (replacement == nullptr) {
    copy->children.erase(name);
  } else {
    copy->children[name] = std::move(replacement);
  }
  return copy;
}

void require_not_root(const Resolved& r, const char* what) {
  if (r.parts.empty()) {
    throw Error(ErrorCode::kInvalidArgument, std::string("cannot ") + what + " the root");
  }
}

// The frozen state a snapshot refers to: a root plus a marker of its origin.
struct FrozenTree {
  NodePtr root;
};

}  // namespace

InMemoryFilesystem::InMemoryFilesystem(std::shared_ptr<const Clock> clock)
    : root_(make_dir()), clock_(clock ? std::move(clock) : std::make_shared<SystemClock>()) {
  git::ensure_initialized();
}

InMemoryFilesystem::~InMemoryFilesystem() = default;

std::string InMemoryFilesystem::read(std::string_view path) const {
  Resolved r = resolve(root_.get(), path, true);
  const Node& node = existing(r);
  if (node.type == EntryType::kDirectory) {
    throw Error(ErrorCode::kInvalidArgument, "cannot read " + r.rel + ": it is a directory");
  }
  return node.data;
}

void InMemoryFilesystem::write(std::string_view path, std::string_view data) {
  Resolved r = resolve(root_.get(), path, true);
  require_not_root(r, "write to");
  if (r.node != nullptr && r.node->type == EntryType::kDirectory) {
    throw Error(ErrorCode::kInvalidArgument, "cannot write " + r.rel + ": it is a directory");
  }
  bool executable = r.node != nullptr && r.node->executable;
  root_ = update(*root_, r.parts, 0,
                 [&](const Node*) { return make_leaf(EntryType::kFile, data, executable); });
}

void InMemoryFilesystem::remove(std::string_view path) {
  Resolved r = resolve(root_.get(), path, false);
  require_not_root(r, "remove");
  existing(r);
  root_ = update(*root_, r.parts, 0, [](const Node*) { return NodePtr(); });
}

std::vector<DirEntry> InMemoryFilesystem::list(std::string_view path) const {
  Resolved r = resolve(root_.get(), path, true);
  const Node& node = existing(r);
  if (node.type != EntryType::kDirectory) {
    throw Error(ErrorCode::kInvalidArgument, "cannot list " + r.rel + ": not a directory");
  }
  std::vector<DirEntry> out;
  out.reserve(node.children.size());
  for (const auto& [name, child] : node.children) out.push_back(DirEntry{name, child->type});
  return out;
}

EntryStat InMemoryFilesystem::stat(std::string_view path) const {
  const Node& node = existing(resolve(root_.get(), path, false));
  EntryStat st;
  st.type = node.type;
  st.size = node.type == EntryType::kDirectory ? 0 : node.data.size();
  st.executable = node.type == EntryType::kFile && node.executable;
  return st;
}

void InMemoryFilesystem::mkdir(std::string_view path) {
  Resolved r = resolve(root_.get(), path, true);
  if (r.node != nullptr) {
    if (r.node->type == EntryType::kDirectory) return;
    throw Error(ErrorCode::kInvalidArgument,
                "cannot create directory " + r.rel + ": a file is in the way");
  }
  root_ = update(*root_, r.parts, 0, [](const Node*) { return make_dir(); });
}

bool InMemoryFilesystem::exists(std::string_view path) const {
  return resolve(root_.get(), path, false, /*probing=*/true).node != nullptr;
}

void InMemoryFilesystem::symlink(std::string_view path, std::string_view target) {
  Resolved r = resolve(root_.get(), path, false);
  require_not_root(r, "replace");
  if (r.node != nullptr) {
    throw Error(ErrorCode::kInvalidArgument, "cannot create symlink " + r.rel + ": it exists");
  }
  if (target.empty() || target.find('\0') != std::string_view::npos) {
    throw Error(ErrorCode::kInvalidArgument, "cannot create symlink " + r.rel + ": bad target");
  }
  root_ = update(*root_, r.parts, 0,
                 [&](const Node*) { return make_leaf(EntryType::kSymlink, target, false); });
}

std::string InMemoryFilesystem::readlink(std::string_view path) const {
  Resolved r = resolve(root_.get(), path, false);
  const Node& node = existing(r);
  if (node.type != EntryType::kSymlink) {
    throw Error(ErrorCode::kInvalidArgument, "cannot read link " + r.rel + ": not a symlink");
  }
  return node.data;
}

void InMemoryFilesystem::set_executable(std::string_view path, bool executable) {
  Resolved r = resolve(root_.get(), path, true);
  const Node& node = existing(r);
  if (node.type != EntryType::kFile) {
    throw Error(ErrorCode::kInvalidArgument, "cannot chmod " + r.rel + ": not a regular file");
  }
  if (node.executable == executable) return;
  root_ = update(*root_, r.parts, 0, [&](const Node* old) {
    return make_leaf(EntryType::kFile, old->data, executable);
  });
}

FilesystemSnapshot InMemoryFilesystem::snapshot(std::string_view label) {
  FilesystemSnapshot snap;
  snap.id = git::to_hex(root_->id());
  snap.tree = snap.id;
  snap.label = std::string(label);
  snap.created_at = clock_->now();
  snap.state = std::make_shared<const FrozenTree>(FrozenTree{root_});
  return snap;
}

void InMemoryFilesystem::restore(const FilesystemSnapshot& snapshot) {
  // Snapshots of this class always carry a FrozenTree and no commit; anything else
  // came from another kind of filesystem (or was forged) and is refused.
  if (!snapshot.commit.empty() || snapshot.state == nullptr) {
    throw Error(ErrorCode::kInvalidArgument,
                "snapshot " + snapshot.id + " was not taken of an in-memory filesystem");
  }
  const auto* frozen = static_cast<const FrozenTree*>(snapshot.state.get());
  if (frozen->root == nullptr || git::to_hex(frozen->root->id()) != snapshot.id) {
    throw Error(ErrorCode::kInvalidArgument,
                "snapshot " + snapshot.id + " does not match the tree it holds");
  }
  root_ = frozen->root;
}

namespace {

void list_entries(const Node& dir, const std::string& prefix,
                  std::vector<InMemoryFilesystem::FrozenEntry>& out) {
  for (const auto& [name, child] : dir.children) {
    std::string path = prefix.empty() ? name : prefix + "/" + name;
    out.push_back({path, child->type, child->executable, child->data});
    if (child->type == EntryType::kDirectory) list_entries(*child, path, out);
  }
}

}  // namespace

std::vector<InMemoryFilesystem::FrozenEntry> InMemoryFilesystem::entries_of(
    const FilesystemSnapshot& snapshot) {
  if (!snapshot.commit.empty() || snapshot.state == nullptr) {
    throw Error(ErrorCode::kInvalidArgument,
                "snapshot " + snapshot.id + " was not taken of an in-memory filesystem");
  }
  std::vector<FrozenEntry> out;
  list_entries(*static_cast<const FrozenTree*>(snapshot.state.get())->root, "", out);
  return out;
}

FilesystemSnapshot InMemoryFilesystem::with_entries(FilesystemSnapshot snapshot,
                                                    const std::vector<FrozenEntry>& entries) {
  git::ensure_initialized();
  auto bad = [&](const std::string& path, const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "in-memory snapshot " + snapshot.id + ": entry " + quote_input(path) + " " + why);
  };
  auto root = std::make_shared<Node>();
  std::map<std::string, std::shared_ptr<Node>> dirs{{"", root}};
  for (const FrozenEntry& e : entries) {
    std::size_t slash = e.path.rfind('/');
    std::string parent = slash == std::string::npos ? "" : e.path.substr(0, slash);
    std::string name = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
    if (name.empty() || name == "." || name == ".." || name.find('\0') != std::string::npos) {
      throw bad(e.path, "is not a path of a tree");
    }
    auto dir = dirs.find(parent);
    if (dir == dirs.end()) throw bad(e.path, "comes before its directory, or has none");
    if (dir->second->children.count(name) != 0) throw bad(e.path, "is listed twice");
    auto node = std::make_shared<Node>();
    node->type = e.type;
    node->executable = e.type == EntryType::kFile && e.executable;
    if (e.type != EntryType::kDirectory) node->data = e.data;
    if (e.type == EntryType::kDirectory) dirs.emplace(e.path, node);
    dir->second->children.emplace(name, node);
  }
  std::string id = git::to_hex(root->id());
  if (id != snapshot.id) {
    throw Error(ErrorCode::kInvalidArgument, "in-memory snapshot " + snapshot.id +
                                                 ": its entries make the tree " + id +
                                                 ", not the one its id names");
  }
  snapshot.commit.clear();
  snapshot.state = std::make_shared<const FrozenTree>(FrozenTree{root});
  return snapshot;
}

}  // namespace fsnap
