#include "sandbox/resource_registry.hpp"

#include <map>
#include <mutex>
#include <stdexcept>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>

#include "fsnap/checkpoint.hpp"

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

fsnap::RestoreReport ResourceRegistry::restore_host(fsnap::HostFilesystem& host,
                                                    const std::string& name,
                                                    const ResourceSnapshot& snap,
                                                    const RestoreContext& context) {
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

Var encode_fs(const fsnap::FilesystemSnapshot& s) {
  Object::Ptr o = new Object(Poco::JSON_PRESERVE_KEY_ORDER);
  o->set("id", s.id);
  o->set("commit", s.commit);
  o->set("tree", s.tree);
  o->set("tag", s.tag);
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
  return o;
}

fsnap::FilesystemSnapshot decode_fs(const Var& v) {
  Object::Ptr o = v.extract<Object::Ptr>();
  fsnap::FilesystemSnapshot s;
  s.id = o->getValue<std::string>("id");
  s.commit = o->getValue<std::string>("commit");
  if (o->has("tree")) s.tree = o->getValue<std::string>("tree");
  s.tag = o->getValue<std::string>("tag");
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
