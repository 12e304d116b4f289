#include "sandbox/resource_registry.hpp"

#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <Poco/Base64Decoder.h>
#include <Poco/Base64Encoder.h>
#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"
#include "fsnap/in_memory_filesystem.hpp"

namespace sandbox {

void ResourceRegistry::add(Entry entry) {
  for (const Entry& e : entries_) {
    if (e.key == entry.key || e.name == entry.name) {
      throw Error(ErrorCode::kInvalidArgument,
                  "resource '" + entry.name + "' is already registered");
    }
  }
  entries_.push_back(std::move(entry));
}

const ResourceRegistry::Entry* ResourceRegistry::find(std::type_index key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const ResourceRegistry::Entry* ResourceRegistry::find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

fsnap::CheckpointMeta ResourceRegistry::outside_meta(const fsnap::CheckpointMeta& meta) {
  fsnap::CheckpointMeta outside;
  outside.phase = fsnap::Phase::kCheckpoint;
  outside.run = meta.run;
  return outside;
}

fsnap::RestoreReport ResourceRegistry::restore_host(
    fsnap::HostFilesystem& host, const std::string& name, const ResourceSnapshot& snap,
    const ResourceRegistry::RestoreContext& context) {
  const fsnap::FilesystemSnapshot* value = snap.get<fsnap::FilesystemSnapshot>();
  if (value == nullptr || value->commit.empty()) {
    throw SnapshotMismatchError("resource '" + name +
                                "' (a host workspace) cannot restore a snapshot that names no "
                                "checkpoint commit");
  }
  fsnap::Checkpoint target = host.repo().read_checkpoint(value->commit);
  fsnap::RestoreOptions options;
  options.run = context.run.empty() ? target.meta.run : context.run;
  options.safety_notes = context.safety_notes;
  options.only = context.only_paths;
  options.paths = context.paths;
  options.tool_call_id = context.tool_call_id;
  options.tool_name = context.tool_name;
  return host.restore_checkpoint(target, options);
}

std::vector<const ResourceRegistry::Entry*> ResourceRegistry::snapshotable() const {
  std::vector<const Entry*> out;
  for (const Entry& e : entries_) {
    if (e.snapshot) out.push_back(&e);
  }
  return out;
}

namespace {

struct CodecRegistry {
  std::mutex mutex;
  std::map<std::type_index, std::shared_ptr<const ResourceSnapshotCodecs::Codec>> by_type;
  std::map<std::string, std::shared_ptr<const ResourceSnapshotCodecs::Codec>, std::less<>> by_name;
};

CodecRegistry& codecs() {
  static CodecRegistry* r = new CodecRegistry;
  return *r;
}

using Poco::Dynamic::Var;
using Poco::JSON::Array;
using Poco::JSON::Object;

std::string base64(const std::string& bytes) {
  std::ostringstream out;
  Poco::Base64Encoder encoder(out);
  encoder.rdbuf()->setLineLength(0);
  encoder << bytes;
  encoder.close();
  return out.str();
}

std::string from_base64(const std::string& text) {
  std::istringstream in(text);
  Poco::Base64Decoder decoder(in);
  return std::string(std::istreambuf_iterator<char>(decoder), std::istreambuf_iterator<char>());
}

// An in-memory filesystem's tree, entry by entry (contents in base64: any bytes).
Array::Ptr encode_entries(const fsnap::FilesystemSnapshot& s) {
  Array::Ptr out = new Array;
  for (const fsnap::InMemoryFilesystem::FrozenEntry& e : fsnap::InMemoryFilesystem::entries_of(s)) {
    Object::Ptr item = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    item->set("path", e.path);
    item->set("type", std::string(fsnap::to_string(e.type)));
    if (e.executable) item->set("executable", true);
    if (e.type != fsnap::EntryType::kDirectory) item->set("data_base64", base64(e.data));
    out->add(item);
  }
  return out;
}

std::vector<fsnap::InMemoryFilesystem::FrozenEntry> decode_entries(const Array::Ptr& entries) {
  std::vector<fsnap::InMemoryFilesystem::FrozenEntry> out;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    Object::Ptr item = entries->getObject(static_cast<unsigned>(i));
    if (item == nullptr) {
      throw Error(ErrorCode::kInvalidArgument, "filesystem snapshot: an entry is no object");
    }
    fsnap::InMemoryFilesystem::FrozenEntry e;
    e.path = item->getValue<std::string>("path");
    std::string type = item->getValue<std::string>("type");
    std::optional<fsnap::EntryType> parsed;
    for (fsnap::EntryType t :
         {fsnap::EntryType::kFile, fsnap::EntryType::kDirectory, fsnap::EntryType::kSymlink}) {
      if (fsnap::to_string(t) == type) parsed = t;
    }
    if (!parsed) {
      throw Error(ErrorCode::kInvalidArgument,
                  "filesystem snapshot: entry " + fsnap::quote_input(e.path) +
                      " has the unknown type " + fsnap::quote_input(type));
    }
    e.type = *parsed;
    e.executable = item->optValue<bool>("executable", false);
    if (item->has("data_base64")) e.data = from_base64(item->getValue<std::string>("data_base64"));
    out.push_back(std::move(e));
  }
  return out;
}

Var encode_fs(const fsnap::FilesystemSnapshot& s) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("id", s.id);
  o->set("commit", s.commit);
  o->set("tree", s.tree);
  o->set("tag", s.tag);
  if (!s.label.empty()) o->set("label", s.label);
  o->set("created_at", fsnap::format_timestamp(s.created_at));
  Array::Ptr skipped = new Array;
  for (const fsnap::SkippedPath& p : s.skipped) {
    Object::Ptr item = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
    item->set("path", p.path);
    item->set("reason", p.reason);
    item->set("size", p.size);
    if (p.copy) {
      Object::Ptr copy = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
      copy->set("name", p.copy->name);
      copy->set("mtime_ns", p.copy->mtime_ns);
      item->set("copy", copy);
    }
    skipped->add(item);
  }
  o->set("skipped", skipped);
  // An in-memory snapshot holds its tree (a host one is in its store, by commit).
  if (s.commit.empty() && s.state != nullptr) o->set("entries", encode_entries(s));
  return o;
}

fsnap::FilesystemSnapshot decode_fs(const Var& v) {
  Object::Ptr o = v.extract<Object::Ptr>();
  fsnap::FilesystemSnapshot s;
  s.id = o->getValue<std::string>("id");
  s.commit = o->getValue<std::string>("commit");
  if (o->has("tree")) s.tree = o->getValue<std::string>("tree");
  s.tag = o->getValue<std::string>("tag");
  if (o->has("label")) s.label = o->getValue<std::string>("label");
  auto created = fsnap::parse_timestamp(o->getValue<std::string>("created_at"));
  if (!created) throw Error(ErrorCode::kInvalidArgument, "filesystem snapshot: bad created_at");
  s.created_at = *created;
  if (Array::Ptr skipped = o->getArray("skipped")) {
    for (std::size_t i = 0; i < skipped->size(); ++i) {
      Object::Ptr item = skipped->getObject(static_cast<unsigned>(i));
      fsnap::SkippedPath path{item->getValue<std::string>("path"),
                              item->getValue<std::string>("reason"),
                              item->getValue<std::uint64_t>("size")};
      if (Object::Ptr copy = item->getObject("copy")) {
        path.copy = fsnap::LargeFileCopy{copy->getValue<std::string>("name"),
                                         copy->getValue<std::int64_t>("mtime_ns")};
      }
      s.skipped.push_back(std::move(path));
    }
  }
  if (Array::Ptr entries = o->getArray("entries")) {
    s = fsnap::InMemoryFilesystem::with_entries(std::move(s), decode_entries(entries));
  }
  return s;
}

}  // namespace

void ResourceSnapshotCodecs::add_codec(Codec codec) {
  CodecRegistry& r = codecs();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto shared = std::make_shared<const Codec>(std::move(codec));
  r.by_type[shared->type] = shared;
  r.by_name[shared->name] = shared;
}

std::shared_ptr<const ResourceSnapshotCodecs::Codec> ResourceSnapshotCodecs::find(
    std::type_index type) {
  CodecRegistry& r = codecs();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_type.find(type);
  return it == r.by_type.end() ? nullptr : it->second;
}

std::shared_ptr<const ResourceSnapshotCodecs::Codec> ResourceSnapshotCodecs::find(
    std::string_view name) {
  CodecRegistry& r = codecs();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_name.find(name);
  return it == r.by_name.end() ? nullptr : it->second;
}

void register_builtin_resource_codecs() {
  static std::once_flag once;
  std::call_once(once, [] {
    ResourceSnapshotCodecs::add<fsnap::FilesystemSnapshot>("filesystem", encode_fs, decode_fs);
  });
}

}  // namespace sandbox
