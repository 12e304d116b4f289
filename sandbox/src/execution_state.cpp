#include "sandbox/execution_state.hpp"

#include <sstream>
#include <vector>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "sandbox/builtin_slices.hpp"
#include "sandbox/checkpoint_store.hpp"

namespace sandbox {

ExecutionState::ExecutionState(std::shared_ptr<Session> session, ResourceRegistry resources,
                               std::shared_ptr<const Clock> clock,
                               std::optional<std::uint64_t> seed,
                               std::shared_ptr<CheckpointStore> checkpoints)
    : session_(std::move(session)),
      resources_(std::move(resources)),
      clock_(std::move(clock)),
      rng_(seed ? *seed : std::random_device{}()),
      checkpoints_(std::move(checkpoints)) {
  if (session_ == nullptr) throw std::invalid_argument("ExecutionState needs a session");
  if (clock_ == nullptr) clock_ = std::make_shared<SystemClock>();
  register_builtin_resource_codecs();
  // Tool calls are always logged (ToolRunner dispatches ToolInvoked).
  if (!session_->has_reducer<ToolInvoked, ToolInvoked>()) {
    session_->register_reducer<ToolInvoked, ToolInvoked>(reducers::append_all<ToolInvoked>);
  }
}

CompositeSnapshot ExecutionState::snapshot(const SnapshotMetadata& metadata) {
  CompositeSnapshot snap;
  snap.id = new_id();
  snap.created_at = clock_->now();
  snap.metadata = metadata;
  std::map<std::string, std::string> tags;
  if (!metadata.tag.empty()) tags["tag"] = metadata.tag;
  snap.session = session_->snapshot(kStatePolicies, /*include_all=*/true, std::move(tags));
  for (const ResourceRegistry::Entry* entry : resources_.snapshotable()) {
    snap.resources.emplace(entry->name, entry->snapshot(metadata.checkpoint_meta()));
  }
  return snap;
}

void ExecutionState::restore(const CompositeSnapshot& snapshot) {
  // 1. Everything must fit before anything changes.
  std::vector<std::pair<const ResourceRegistry::Entry*, const ResourceSnapshot*>> parts;
  for (const auto& [name, value] : snapshot.resources) {
    const ResourceRegistry::Entry* entry = resources_.find(std::string_view(name));
    if (entry == nullptr || !entry->restore) {
      throw SnapshotMismatchError("snapshot " + snapshot.id + " holds resource '" + name +
                                  "', which this state does not have");
    }
    if (entry->snapshot_type != value.type) {
      throw SnapshotMismatchError("snapshot " + snapshot.id +
                                  " holds a snapshot of another kind "
                                  "for resource '" +
                                  name + "'");
    }
    parts.emplace_back(entry, &value);
  }
  SessionSnapshot session_before = session_->snapshot(kStatePolicies, /*include_all=*/true);
  session_->rollback(snapshot.session, /*preserve_logs=*/true);  // checks before changing

  // 2. Resources, each with a way back.
  std::vector<std::pair<const ResourceRegistry::Entry*, ResourceSnapshot>> undo;
  // The last part needs no way back of its own: if it fails, it is the only one
  // that can have been left changed, and a resource's restore is its own to make
  // atomic (a HostFilesystem restore keeps a safety checkpoint).
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& [entry, value] = parts[i];
    try {
      if (i + 1 < parts.size()) {
        fsnap::CheckpointMeta safety;
        safety.phase = fsnap::Phase::kSafety;
        safety.run = snapshot.metadata.run;
        undo.emplace_back(entry, entry->snapshot(safety));
      }
      entry->restore(*value);
    } catch (const std::exception& e) {
      std::string failure = "cannot restore resource '" + entry->name + "' of snapshot " +
                            snapshot.id + ": " + e.what();
      std::string leftover;
      for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
        try {
          it->first->restore(it->second);
        } catch (const std::exception& undo_error) {
          leftover += "; and could not put back '" + it->first->name + "': " + undo_error.what();
        }
      }
      session_->rollback(session_before, /*preserve_logs=*/true);
      throw RestoreFailedError(failure + leftover);
    }
  }
}

// ---- JSON ------------------------------------------------------------------------

std::string CompositeSnapshot::to_json() const {
  Poco::JSON::Object::Ptr root = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
  root->set("format", "shadowbox.composite-snapshot.v1");
  root->set("id", id);
  root->set("created_at", fsnap::format_timestamp(created_at));
  Poco::JSON::Object::Ptr meta = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
  meta->set("tag", metadata.tag);
  meta->set("tool_call_id", metadata.tool_call_id);
  meta->set("tool_name", metadata.tool_name);
  meta->set("phase", std::string(fsnap::to_string(metadata.phase)));
  meta->set("run", metadata.run);
  root->set("metadata", meta);
  Poco::JSON::Parser parser;
  root->set("session", parser.parse(session.to_json()));
  Poco::JSON::Object::Ptr resource_object = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
  for (const auto& [name, value] : resources) {
    std::shared_ptr<const ResourceSnapshotCodecs::Codec> codec =
        ResourceSnapshotCodecs::find(value.type);
    if (codec == nullptr) {
      throw std::invalid_argument("resource '" + name + "' has a snapshot type with no codec");
    }
    Poco::JSON::Object::Ptr item = new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
    item->set("type", codec->name);
    item->set("value", codec->encode(value));
    resource_object->set(name, item);
  }
  root->set("resources", resource_object);
  std::ostringstream out;
  root->stringify(out);
  return out.str();
}

CompositeSnapshot CompositeSnapshot::from_json(const std::string& json) {
  register_builtin_resource_codecs();
  CompositeSnapshot snap;
  try {
    Poco::JSON::Parser parser;
    Poco::JSON::Object::Ptr root = parser.parse(json).extract<Poco::JSON::Object::Ptr>();
    if (!root->has("format") ||
        root->getValue<std::string>("format") != "shadowbox.composite-snapshot.v1") {
      throw std::invalid_argument("composite snapshot: unknown format");
    }
    snap.id = root->getValue<std::string>("id");
    auto created = fsnap::parse_timestamp(root->getValue<std::string>("created_at"));
    if (!created) throw std::invalid_argument("composite snapshot: bad created_at");
    snap.created_at = *created;
    Poco::JSON::Object::Ptr meta = root->getObject("metadata");
    if (meta == nullptr) throw std::invalid_argument("composite snapshot: no metadata");
    snap.metadata.tag = meta->getValue<std::string>("tag");
    snap.metadata.tool_call_id = meta->getValue<std::string>("tool_call_id");
    snap.metadata.tool_name = meta->getValue<std::string>("tool_name");
    std::optional<fsnap::Phase> phase = fsnap::parse_phase(meta->getValue<std::string>("phase"));
    if (!phase) throw std::invalid_argument("composite snapshot: bad phase");
    snap.metadata.phase = *phase;
    if (meta->has("run")) snap.metadata.run = meta->getValue<std::string>("run");
    Poco::JSON::Object::Ptr session = root->getObject("session");
    if (session == nullptr) throw std::invalid_argument("composite snapshot: no session");
    std::ostringstream session_text;
    session->stringify(session_text);
    snap.session = SessionSnapshot::from_json(session_text.str());
    if (Poco::JSON::Object::Ptr resources = root->getObject("resources")) {
      for (const auto& [name, value] : *resources) {
        Poco::JSON::Object::Ptr item = value.extract<Poco::JSON::Object::Ptr>();
        std::string type = item->getValue<std::string>("type");
        std::shared_ptr<const ResourceSnapshotCodecs::Codec> codec =
            ResourceSnapshotCodecs::find(type);
        if (codec == nullptr) {
          throw SnapshotMismatchError("composite snapshot " + snap.id + " holds a '" + type +
                                      "' snapshot, a type this process has not registered");
        }
        snap.resources.emplace(name, codec->decode(item->get("value")));
      }
    }
  } catch (const Poco::Exception& e) {
    throw std::invalid_argument("composite snapshot: " + e.displayText());
  }
  return snap;
}

}  // namespace sandbox
