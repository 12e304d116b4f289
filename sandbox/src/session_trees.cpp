#include "sandbox/session_trees.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Parser.h>
#include <Poco/JSON/Stringifier.h>

#include "fsnap/error.hpp"
#include "fsnap/store_layout.hpp"
#include "sandbox/builtin_slices.hpp"
#include "sandbox/errors.hpp"
#include "session_json.hpp"

namespace sandbox {

namespace {

constexpr const char* kFormat = "shadowbox.session-tree.v1";
constexpr const char* kHead = "head.json";
constexpr std::size_t kFanout = 32;  // items per chunk, children per node
constexpr std::size_t kMaxPosition = std::size_t{1} << 48;

// The directory name of a slice type: its name, with bytes other than letters, digits,
// '_', '-' and an inner '.' written as %XX (and each '.' too if the name is head.json's).
std::string directory_of(const std::string& type) {
  std::string out;
  for (std::size_t i = 0; i < type.size(); ++i) {
    auto c = static_cast<unsigned char>(type[i]);
    bool plain = std::isalnum(c) || c == '_' || c == '-' || (c == '.' && i > 0 && type != kHead);
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string child_name(std::size_t index, bool leaf) {
  char buf[16];
  std::snprintf(buf, sizeof buf, leaf ? "%02zu.json" : "%02zu", index);
  return buf;
}

// Items covered by one node of a trie of the given level (0: a chunk).
std::size_t span_of(std::size_t level) {
  std::size_t span = kFanout;
  for (std::size_t i = 0; i < level; ++i) span *= kFanout;
  return span;
}

// The level of a slice's root node: at least 1, so a slice is always a directory.
std::size_t root_level(std::size_t items) {
  std::size_t level = 1;
  while (span_of(level) < items) ++level;
  return level;
}

Error damaged(std::string_view tree, const std::string& why) {
  return Error(ErrorCode::kCorrupt,
               "the session tree " + std::string(tree) + " is damaged: " + why);
}

// Runs read, turning what goes wrong into Error kCorrupt about tree (a slice type this
// process has not registered stays a SnapshotMismatchError).
template <typename F>
auto guarded(std::string_view tree, F read) -> decltype(read()) {
  try {
    return read();
  } catch (const Poco::Exception& e) {
    throw damaged(tree, e.displayText());
  } catch (const SnapshotMismatchError&) {
    throw;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kCorrupt) throw;
    throw damaged(tree, e.what());
  }
}

// What a SessionTrees remembers of one repository: the chunks and nodes it wrote or
// read in its last two operations.
struct Chunk {
  std::vector<statekit::Item> items;  // keeps the items, so their addresses stay theirs
  std::string oid;
  std::uint64_t used = 0;
};
struct Node {
  std::string oid;
  std::uint64_t used = 0;
};
struct RepoMemory {
  std::map<std::vector<const void*>, std::shared_ptr<Chunk>> chunks_by_items;
  std::unordered_map<std::string, std::shared_ptr<Chunk>> chunks_by_oid;
  std::unordered_map<std::string, Node> nodes;  // level and child ids -> tree id
  std::uint64_t op = 0;

  // Drops what neither this operation nor the one before used.
  void forget_unused() {
    auto stale = [&](std::uint64_t used) { return used + 1 < op; };
    for (auto it = chunks_by_items.begin(); it != chunks_by_items.end();) {
      if (stale(it->second->used)) {
        chunks_by_oid.erase(it->second->oid);
        it = chunks_by_items.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = nodes.begin(); it != nodes.end();) {
      it = stale(it->second.used) ? nodes.erase(it) : std::next(it);
    }
  }
  void remember(std::shared_ptr<Chunk> chunk) {
    std::vector<const void*> key;
    key.reserve(chunk->items.size());
    for (const statekit::Item& item : chunk->items) key.push_back(item.get());
    chunks_by_oid[chunk->oid] = chunk;
    chunks_by_items[std::move(key)] = std::move(chunk);
  }
};

// The items of the chunk oid whose text is text, as JSON values.
Poco::JSON::Array::Ptr chunk_values(const std::string& text, const std::string& oid,
                                    std::string_view tree) {
  // Keys in stored order, so the items read back as they were encoded.
  Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
  Poco::Dynamic::Var parsed = parser.parse(text);
  Poco::JSON::Array::Ptr values;
  if (parsed.type() == typeid(Poco::JSON::Array::Ptr))
    values = parsed.extract<Poco::JSON::Array::Ptr>();
  if (values == nullptr || values->size() == 0 || values->size() > kFanout) {
    throw damaged(tree, "chunk " + oid + " is not an array of 1 to 32 items");
  }
  return values;
}

// A full chunk of a slice read back from a session tree: its text is read with the
// tree, its items are decoded when first used. Writing the slice again names the same
// chunk by its id, decoded or not.
class StoredChunk : public statekit::LazyLeaf<statekit::Item> {
 public:
  StoredChunk(std::string oid, std::string text, std::shared_ptr<const SliceType> codec,
              std::string tree)
      : oid_(std::move(oid)),
        text_(std::move(text)),
        codec_(std::move(codec)),
        tree_(std::move(tree)) {}
  // A chunk whose items are known already.
  StoredChunk(std::string oid, std::vector<statekit::Item> items)
      : statekit::LazyLeaf<statekit::Item>(std::move(items)), oid_(std::move(oid)) {}

  const std::string& oid() const { return oid_; }

 private:
  std::vector<statekit::Item> load() const override {
    return guarded(tree_, [&] {
      Poco::JSON::Array::Ptr values = chunk_values(text_, oid_, tree_);
      if (values->size() != kFanout) {
        throw damaged(tree_, "chunk " + oid_ + " holds " + std::to_string(values->size()) +
                                 " items, not " + std::to_string(kFanout));
      }
      std::vector<statekit::Item> items;
      items.reserve(kFanout);
      for (std::size_t i = 0; i < values->size(); ++i) {
        items.push_back(codec_->decode(values->get(static_cast<unsigned>(i))));
      }
      return items;
    });
  }

  std::string oid_;
  std::string text_;
  std::shared_ptr<const SliceType> codec_;
  std::string tree_;
};

static_assert(kFanout == statekit::SliceItems::kLeafSize,
              "a chunk is a leaf of the slice's vector");

// Writes the trie of one slice. Chunk k holds the items at positions [32k, 32k + 32)
// of the slice's vector (PersistentVector::start is the position of its first item),
// so a slice whose oldest items a window dropped keeps the chunks of the items left;
// the chunks and nodes wholly before its first item are left out.
class SliceWriter {
 public:
  SliceWriter(fsnap::ShadowRepo& repo, RepoMemory& memory, const SliceType& codec,
              const statekit::SliceItems& items)
      : repo_(repo),
        memory_(memory),
        codec_(codec),
        items_(items),
        first_(items.start()),
        end_(items.start() + items.size()) {}

  std::string write() { return node(root_level(end_), 0); }

 private:
  // The node of the given level whose first position is base.
  std::string node(std::size_t level, std::size_t base) {
    if (level == 0) return chunk(base);
    std::vector<fsnap::ObjectEntry> children;
    std::string key = std::to_string(level);
    std::size_t span = span_of(level - 1);
    for (std::size_t i = 0; i < kFanout && base + i * span < end_; ++i) {
      if (base + (i + 1) * span <= first_) continue;  // dropped by a window
      std::string oid = node(level - 1, base + i * span);
      std::string name = child_name(i, level == 1);
      key += name + oid;
      children.push_back(fsnap::ObjectEntry{std::move(name), std::move(oid), level > 1});
    }
    auto known = memory_.nodes.find(key);
    if (known != memory_.nodes.end() && repo_.has_object(known->second.oid)) {
      known->second.used = memory_.op;
      return known->second.oid;
    }
    std::string oid = repo_.write_tree(children);
    memory_.nodes[key] = Node{oid, memory_.op};
    return oid;
  }

  // The chunk of the positions from base: those of them the slice holds.
  std::string chunk(std::size_t base) {
    std::size_t start = std::max(base, first_) - first_;  // indices into items_
    std::size_t end = std::min(base + kFanout, end_) - first_;
    // A chunk read back from this repository, decoded or not, is named by its id.
    if (const auto* stored = dynamic_cast<const StoredChunk*>(items_.lazy_leaf(start));
        stored != nullptr && end - start == kFanout && repo_.has_object(stored->oid())) {
      return stored->oid();
    }
    std::vector<const void*> key;
    key.reserve(end - start);
    for (std::size_t i = start; i < end; ++i) key.push_back(items_[i].get());
    auto known = memory_.chunks_by_items.find(key);
    if (known != memory_.chunks_by_items.end() && repo_.has_object(known->second->oid)) {
      known->second->used = memory_.op;
      return known->second->oid;
    }
    auto fresh = std::make_shared<Chunk>();
    std::ostringstream out;
    out << "[\n";
    for (std::size_t i = start; i < end; ++i) {
      fresh->items.push_back(items_[i]);
      Poco::JSON::Stringifier::condense(codec_.encode(items_[i].get()), out);
      out << (i + 1 < end ? ",\n" : "\n");
    }
    out << "]\n";
    fresh->oid = repo_.write_blob(out.str());
    fresh->used = memory_.op;
    std::string oid = fresh->oid;
    memory_.remember(std::move(fresh));
    return oid;
  }

  fsnap::ShadowRepo& repo_;
  RepoMemory& memory_;
  const SliceType& codec_;
  const statekit::SliceItems& items_;
  std::size_t first_;  // the position of the first item
  std::size_t end_;    // the position after the last
};

// Calls visit with the position and id of each chunk below the node root of the given
// level whose first position is base, in order.
void walk_chunks(const fsnap::ShadowRepo& repo, const std::string& root, std::size_t level,
                 std::size_t base, std::string_view tree,
                 const std::function<void(std::size_t, const std::string&)>& visit) {
  std::vector<fsnap::ObjectEntry> children = repo.read_tree(root);
  std::size_t span = span_of(level - 1);
  std::size_t next = 0;  // children are named by their index, in order
  for (const fsnap::ObjectEntry& child : children) {
    std::size_t index = next;
    while (index < kFanout && child.name != child_name(index, level == 1)) ++index;
    if (index == kFanout || child.is_tree != (level > 1)) {
      throw damaged(tree, "unexpected entry " + fsnap::quote_input(child.name));
    }
    next = index + 1;
    if (level > 1) {
      walk_chunks(repo, child.oid, level - 1, base + index * span, tree, visit);
    } else {
      visit(base + index * span, child.oid);
    }
  }
}

// One slice as head.json lists it.
struct SliceEntry {
  std::string type;
  SlicePolicy policy = SlicePolicy::kState;
  std::size_t count = 0;
  std::size_t first = 0;  // the position of its first item (see SliceWriter)
  std::string root;       // its root node ("" for an empty slice)

  std::size_t end() const { return first + count; }
};

// The items of the chunk oid, decoded (or as remembered).
std::vector<statekit::Item> chunk_items(const fsnap::ShadowRepo& repo, RepoMemory& memory,
                                        const SliceType& codec, const std::string& oid,
                                        std::string_view tree) {
  auto known = memory.chunks_by_oid.find(oid);
  if (known != memory.chunks_by_oid.end()) {
    known->second->used = memory.op;
    return known->second->items;
  }
  auto fresh = std::make_shared<Chunk>();
  fresh->oid = oid;
  fresh->used = memory.op;
  Poco::JSON::Array::Ptr values = chunk_values(repo.read_blob(oid), oid, tree);
  for (std::size_t i = 0; i < values->size(); ++i) {
    fresh->items.push_back(codec.decode(values->get(static_cast<unsigned>(i))));
  }
  std::vector<statekit::Item> items = fresh->items;
  memory.remember(std::move(fresh));
  return items;
}

// The items of slice: every full chunk but the last as a lazy leaf (or as remembered),
// the last one, and a first one that a window cut, decoded.
statekit::SliceItems read_items(const fsnap::ShadowRepo& repo, RepoMemory& memory,
                                const std::shared_ptr<const SliceType>& codec,
                                const SliceEntry& slice, std::string_view tree) {
  std::vector<std::pair<std::size_t, std::string>> chunks;  // position, id
  walk_chunks(
      repo, slice.root, root_level(slice.end()), 0, tree,
      [&](std::size_t position, const std::string& oid) { chunks.emplace_back(position, oid); });
  std::size_t expected = slice.first / kFanout * kFanout;
  for (const auto& [position, oid] : chunks) {
    if (position != expected) {
      throw damaged(
          tree, "slice " + slice.type + " has no chunk at position " + std::to_string(expected));
    }
    expected += kFanout;
  }
  std::vector<std::shared_ptr<const statekit::LazyLeaf<statekit::Item>>> leaves;
  std::vector<statekit::Item> tail;
  leaves.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const auto& [position, oid] = chunks[i];
    bool last = i + 1 == chunks.size();
    std::size_t cut = slice.first > position ? slice.first - position : 0;
    if (!last && cut == 0) {
      auto known = memory.chunks_by_oid.find(oid);
      if (known != memory.chunks_by_oid.end() && known->second->items.size() == kFanout) {
        known->second->used = memory.op;
        leaves.push_back(std::make_shared<StoredChunk>(oid, known->second->items));
      } else {
        leaves.push_back(
            std::make_shared<StoredChunk>(oid, repo.read_blob(oid), codec, std::string(tree)));
      }
      continue;
    }
    // The positions a window dropped are placeholders, never read.
    std::vector<statekit::Item> items(cut);
    std::vector<statekit::Item> held = chunk_items(repo, memory, *codec, oid, tree);
    items.insert(items.end(), held.begin(), held.end());
    if (last) {
      tail = std::move(items);
    } else if (items.size() != kFanout) {
      throw damaged(tree, "chunk " + oid + " of slice " + slice.type + " holds " +
                              std::to_string(held.size()) + " items, not " +
                              std::to_string(kFanout - cut));
    } else {
      leaves.push_back(std::make_shared<StoredChunk>(oid, std::move(items)));
    }
  }
  return statekit::SliceItems::from_leaves(leaves, std::move(tail), slice.first);
}

// head.json of a session tree, and its slices.
struct TreeHead {
  Poco::JSON::Object::Ptr head;
  std::vector<SliceEntry> slices;
};

TreeHead read_head(const fsnap::ShadowRepo& repo, std::string_view tree) {
  std::optional<fsnap::ObjectEntry> head_entry;
  std::map<std::string, fsnap::ObjectEntry> slice_dirs;
  for (const fsnap::ObjectEntry& e : repo.read_tree(tree)) {
    if (e.name == kHead && !e.is_tree) {
      head_entry = e;
    } else {
      slice_dirs.emplace(e.name, e);
    }
  }
  if (!head_entry) throw damaged(tree, "it has no head.json");
  TreeHead out;
  Poco::JSON::Parser parser;
  Poco::Dynamic::Var parsed = parser.parse(repo.read_blob(head_entry->oid));
  if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
    out.head = parsed.extract<Poco::JSON::Object::Ptr>();
  }
  if (out.head == nullptr || session_json::string_field(out.head, "format") != kFormat) {
    throw damaged(tree, "head.json is not of format " + std::string(kFormat));
  }
  Poco::JSON::Array::Ptr slice_list = out.head->getArray("slices");
  if (slice_list == nullptr) throw damaged(tree, "head.json lists no slices");
  for (std::size_t i = 0; i < slice_list->size(); ++i) {
    Poco::JSON::Object::Ptr entry = slice_list->getObject(static_cast<unsigned>(i));
    if (entry == nullptr) throw damaged(tree, "a bad slice entry in head.json");
    SliceEntry slice;
    slice.type = session_json::string_field(entry, "type");
    std::optional<SlicePolicy> policy =
        parse_slice_policy(session_json::string_field(entry, "policy"));
    if (!policy) throw damaged(tree, "bad policy of slice " + slice.type);
    slice.policy = *policy;
    slice.count = entry->getValue<std::size_t>("items");
    if (entry->has("first")) slice.first = entry->getValue<std::size_t>("first");
    // Positions past 2^48 are none a slice reaches (and would overflow the trie's spans).
    if (slice.count > kMaxPosition || slice.first > kMaxPosition - slice.count) {
      throw damaged(tree, "slice " + slice.type + " has positions out of range");
    }
    if (slice.count > 0) {
      auto dir = slice_dirs.find(directory_of(slice.type));
      if (dir == slice_dirs.end() || !dir->second.is_tree) {
        throw damaged(tree, "slice " + slice.type + " has no directory");
      }
      slice.root = dir->second.oid;
    }
    out.slices.push_back(std::move(slice));
  }
  return out;
}

void check_count(const SliceEntry& slice, std::size_t found, std::string_view tree) {
  if (found != slice.count) {
    throw damaged(tree, "slice " + slice.type + " holds " + std::to_string(found) +
                            " items, head.json says " + std::to_string(slice.count));
  }
}

}  // namespace

// What a SessionTrees remembers, per repository (by git directory).
struct SessionTrees::Memory {
  std::map<std::string, RepoMemory> repos;
  RepoMemory& of(const fsnap::ShadowRepo& repo) { return repos[repo.git_dir().string()]; }
};

SessionTrees::SessionTrees() : memory_(std::make_unique<Memory>()) {}

SessionTrees::~SessionTrees() = default;

std::string SessionTrees::write(fsnap::ShadowRepo& repo, const SessionSnapshot& snapshot) {
  register_builtin_slice_types();
  std::lock_guard<std::mutex> lock(mutex_);
  RepoMemory& memory = memory_->of(repo);
  ++memory.op;
  Poco::JSON::Object::Ptr head = session_json::ordered_object();
  head->set("format", kFormat);
  session_json::write_header(snapshot, *head);
  session_json::write_covers(snapshot, *head);
  // Slices in name order, so equal snapshots give equal trees.
  std::map<std::string, std::type_index> by_name;
  for (const auto& [type, items] : snapshot.slices) {
    by_name.emplace(session_json::codec_for(type)->name, type);
  }
  Poco::JSON::Array::Ptr slice_list = new Poco::JSON::Array;
  std::vector<fsnap::ObjectEntry> root;
  for (const auto& [name, type] : by_name) {
    std::shared_ptr<const SliceType> codec = session_json::codec_for(type);
    const statekit::SliceItems& items = snapshot.slices.at(type);
    auto policy = snapshot.policies.find(type);
    Poco::JSON::Object::Ptr entry = session_json::ordered_object();
    entry->set("type", name);
    entry->set("policy",
               std::string(to_string(policy == snapshot.policies.end() ? SlicePolicy::kState
                                                                       : policy->second)));
    entry->set("items", items.size());
    // A slice a window cut: the position of its first item (0 is not written, so a
    // slice no window touched has the same head as before windows kept positions).
    if (items.start() > 0 && !items.empty()) entry->set("first", items.start());
    slice_list->add(entry);
    if (items.empty()) continue;
    root.push_back(fsnap::ObjectEntry{directory_of(name),
                                      SliceWriter(repo, memory, *codec, items).write(), true});
  }
  head->set("slices", slice_list);
  std::ostringstream head_text;
  head->stringify(head_text, 1);
  head_text << '\n';
  root.push_back(fsnap::ObjectEntry{kHead, repo.write_blob(head_text.str()), false});
  std::string tree = repo.write_tree(root);
  memory.forget_unused();
  return tree;
}

std::vector<std::string> SessionTrees::slice_types(const fsnap::ShadowRepo& repo,
                                                   std::string_view tree) {
  return guarded(tree, [&] {
    std::vector<std::string> out;
    for (const SliceEntry& slice : read_head(repo, tree).slices) {
      if (slice.count > 0) out.push_back(slice.type);
    }
    return out;
  });
}

fsnap::Note SessionTrees::anchored(fsnap::Note note, const std::string& run,
                                   const std::string& tree) {
  if (tree.empty()) return note;
  note.anchor_name = "session-" + run;
  note.anchor_tree = tree;
  return note;
}

SessionSnapshot SessionTrees::read(const fsnap::ShadowRepo& repo, std::string_view tree,
                                   const SessionTrees::SessionStamp& stamp) {
  register_builtin_slice_types();
  std::lock_guard<std::mutex> lock(mutex_);
  RepoMemory& memory = memory_->of(repo);
  ++memory.op;
  SessionSnapshot snap = guarded(tree, [&] {
    TreeHead head = read_head(repo, tree);
    SessionSnapshot out;
    out.id = stamp.id;
    out.session_id = stamp.session_id;
    out.created_at = stamp.created_at;
    session_json::read_header(head.head, out);
    for (const SliceEntry& slice : head.slices) {
      std::shared_ptr<const SliceType> codec = SliceTypes::find(slice.type);
      if (codec == nullptr || !codec->decode) {
        throw SnapshotMismatchError("session snapshot " + out.id + " holds slice type '" +
                                    slice.type + "', which this process has not registered");
      }
      statekit::SliceItems items;
      if (!slice.root.empty()) items = read_items(repo, memory, codec, slice, tree);
      check_count(slice, items.size(), tree);
      out.slices.emplace(codec->type, std::move(items));
      out.policies.emplace(codec->type, slice.policy);
    }
    return out;
  });
  memory.forget_unused();
  return snap;
}

std::string SessionTrees::read_json(const fsnap::ShadowRepo& repo, std::string_view tree,
                                    const SessionTrees::SessionStamp& stamp) {
  return guarded(tree, [&] {
    TreeHead head = read_head(repo, tree);
    Poco::JSON::Object::Ptr root = session_json::ordered_object();
    root->set("format", "shadowbox.session-snapshot.v1");
    SessionSnapshot stamped;
    stamped.id = stamp.id;
    stamped.session_id = stamp.session_id;
    stamped.created_at = stamp.created_at;
    session_json::write_stamp(stamped, *root);
    for (const char* key : {"parent_id", "children_ids", "tags"}) {
      root->set(key, head.head->get(key));
    }
    Poco::JSON::Array::Ptr slices = new Poco::JSON::Array;
    for (const SliceEntry& slice : head.slices) {
      Poco::JSON::Object::Ptr entry = session_json::ordered_object();
      entry->set("type", slice.type);
      entry->set("policy", std::string(to_string(slice.policy)));
      Poco::JSON::Array::Ptr items = new Poco::JSON::Array;
      if (!slice.root.empty()) {
        walk_chunks(repo, slice.root, root_level(slice.end()), 0, tree,
                    [&](std::size_t, const std::string& oid) {
                      Poco::JSON::Array::Ptr values = chunk_values(repo.read_blob(oid), oid, tree);
                      for (std::size_t i = 0; i < values->size(); ++i) {
                        items->add(values->get(static_cast<unsigned>(i)));
                      }
                    });
      }
      check_count(slice, items->size(), tree);
      entry->set("items", items);
      slices->add(entry);
    }
    root->set("slices", slices);
    if (head.head->has("covers")) root->set("covers", head.head->get("covers"));
    std::ostringstream out;
    root->stringify(out);
    return out.str();
  });
}

}  // namespace sandbox
