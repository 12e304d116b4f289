// CompositeSnapshot's JSON form: every field of the snapshot, its metadata (the call's
// outcome, containment's decision and the event that tripped, the paths, ...) and the
// ledger record written with it, so that from_json(to_json()) gives the snapshot back
// exactly — and, for an in-memory filesystem, a snapshot that can be restored.
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include "sandbox/containment.hpp"
#include "sandbox/execution_state.hpp"

namespace sandbox {

namespace {

constexpr const char* kFormat = "shadowbox.composite-snapshot.v1";

using Poco::Dynamic::Var;
using Poco::JSON::Array;
using Poco::JSON::Object;

Object::Ptr ordered() {
  return new Object(Poco::JSON_PRESERVE_KEY_ORDER);
}

std::string text(const Object::Ptr& o, const std::string& key) {
  return o->has(key) && !o->isNull(key) ? o->getValue<std::string>(key) : std::string();
}

Error malformed(const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, "composite snapshot: " + why);
}

// [{"path", "why"}, ...]
Array::Ptr pairs_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  Array::Ptr out = new Array;
  for (const auto& [path, why] : pairs) {
    Object::Ptr item = ordered();
    item->set("path", path);
    item->set("why", why);
    out->add(item);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> pairs_from(const Object::Ptr& o,
                                                            const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  if (Array::Ptr list = o->getArray(key)) {
    for (std::size_t i = 0; i < list->size(); ++i) {
      Object::Ptr item = list->getObject(static_cast<unsigned>(i));
      if (item == nullptr) throw malformed("bad " + key);
      out.emplace_back(text(item, "path"), text(item, "why"));
    }
  }
  return out;
}

Object::Ptr metadata_json(const SnapshotMetadata& m) {
  Object::Ptr meta = ordered();
  meta->set("tag", m.tag);
  if (!m.label.empty()) meta->set("label", m.label);
  meta->set("tool_call_id", m.tool_call_id);
  meta->set("tool_name", m.tool_name);
  meta->set("phase", std::string(fsnap::to_string(m.phase)));
  meta->set("run", m.run);
  if (m.move_tag) meta->set("move_tag", true);
  const CallOutcome& outcome = m.outcome;
  if (!(outcome == CallOutcome{})) {
    meta->set("input_summary", outcome.input_summary);
    meta->set("success", outcome.success ? Var(*outcome.success) : Var());
    meta->set("result_summary", outcome.result_summary);
    meta->set("elapsed_ms", outcome.elapsed_ms ? Var(*outcome.elapsed_ms) : Var());
    if (!outcome.rollback.empty()) {
      meta->set("rollback", outcome.rollback);
      meta->set("rollback_reason", outcome.rollback_reason);
    }
    if (!outcome.rollback_kept.empty())
      meta->set("rollback_kept", pairs_json(outcome.rollback_kept));
    if (!outcome.rollback_unrestored.empty()) {
      meta->set("rollback_unrestored", pairs_json(outcome.rollback_unrestored));
    }
    if (outcome.agent_denied) meta->set("agent_denied", true);
  }
  if (!m.decision.empty()) meta->set("decision", m.decision);
  if (m.safety_event) meta->set("safety_event", safety_event_json(*m.safety_event));
  if (m.paths) {
    Array::Ptr list = new Array;
    for (const std::string& p : *m.paths) list->add(p);
    meta->set("paths", list);
  }
  if (!m.parent_call_id.empty()) meta->set("parent_call_id", m.parent_call_id);
  if (!m.undoes.empty()) meta->set("undoes", m.undoes);
  if (m.separate_outside_changes) meta->set("separate_outside_changes", true);
  return meta;
}

SnapshotMetadata metadata_from(const Object::Ptr& meta) {
  SnapshotMetadata m;
  m.tag = text(meta, "tag");
  m.label = text(meta, "label");
  m.tool_call_id = text(meta, "tool_call_id");
  m.tool_name = text(meta, "tool_name");
  std::optional<fsnap::Phase> phase = fsnap::parse_phase(text(meta, "phase"));
  if (!phase) throw malformed("bad phase");
  m.phase = *phase;
  if (meta->has("run")) m.run = text(meta, "run");
  m.move_tag = meta->optValue<bool>("move_tag", false);
  CallOutcome& outcome = m.outcome;
  outcome.input_summary = text(meta, "input_summary");
  if (meta->has("success") && !meta->isNull("success"))
    outcome.success = meta->getValue<bool>("success");
  outcome.result_summary = text(meta, "result_summary");
  if (meta->has("elapsed_ms") && !meta->isNull("elapsed_ms")) {
    outcome.elapsed_ms = meta->getValue<std::int64_t>("elapsed_ms");
  }
  outcome.rollback = text(meta, "rollback");
  outcome.rollback_reason = text(meta, "rollback_reason");
  outcome.rollback_kept = pairs_from(meta, "rollback_kept");
  outcome.rollback_unrestored = pairs_from(meta, "rollback_unrestored");
  outcome.agent_denied = meta->optValue<bool>("agent_denied", false);
  m.decision = text(meta, "decision");
  if (meta->has("safety_event") && !meta->isNull("safety_event")) {
    m.safety_event = safety_event_from_json(meta->get("safety_event"));
  }
  if (Array::Ptr list = meta->getArray("paths")) {
    m.paths.emplace();
    for (std::size_t i = 0; i < list->size(); ++i) {
      m.paths->push_back(list->getElement<std::string>(static_cast<unsigned>(i)));
    }
  }
  m.parent_call_id = text(meta, "parent_call_id");
  m.undoes = text(meta, "undoes");
  m.separate_outside_changes = meta->optValue<bool>("separate_outside_changes", false);
  return m;
}

std::string stringified(const Object::Ptr& o) {
  std::ostringstream out;
  o->stringify(out);
  return out.str();
}

}  // namespace

std::string CompositeSnapshot::to_json() const {
  Object::Ptr root = ordered();
  root->set("format", kFormat);
  root->set("id", id);
  root->set("created_at", fsnap::format_timestamp(created_at));
  root->set("metadata", metadata_json(metadata));
  Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
  root->set("session", parser.parse(session.to_json()));
  Object::Ptr resource_object = ordered();
  for (const auto& [name, value] : resources) {
    std::shared_ptr<const ResourceSnapshotCodecs::Codec> codec =
        ResourceSnapshotCodecs::find(value.type);
    if (codec == nullptr) {
      throw Error(ErrorCode::kInvalidArgument,
                  "resource '" + name + "' has a snapshot type with no codec");
    }
    Object::Ptr item = ordered();
    item->set("type", codec->name);
    item->set("value", codec->encode(value));
    resource_object->set(name, item);
  }
  root->set("resources", resource_object);
  // The ledger record written with it, as the ledger's note holds it.
  if (!(record == LedgerRecord{})) root->set("record", parser.parse(record.to_json()));
  return stringified(root);
}

CompositeSnapshot CompositeSnapshot::from_json(const std::string& json) {
  register_builtin_resource_codecs();
  CompositeSnapshot snap;
  try {
    Poco::JSON::Parser parser;
    Var parsed = parser.parse(json);
    if (parsed.type() != typeid(Object::Ptr)) throw malformed("not a JSON object");
    Object::Ptr root = parsed.extract<Object::Ptr>();
    if (text(root, "format") != kFormat) throw malformed("unknown format");
    if (!root->has("id")) throw malformed("no id");
    snap.id = text(root, "id");
    auto created = fsnap::parse_timestamp(text(root, "created_at"));
    if (!created) throw malformed("bad created_at");
    snap.created_at = *created;
    Object::Ptr meta = root->getObject("metadata");
    if (meta == nullptr) throw malformed("no metadata");
    snap.metadata = metadata_from(meta);
    Object::Ptr session = root->getObject("session");
    if (session == nullptr) throw malformed("no session");
    snap.session = SessionSnapshot::from_json(stringified(session));
    if (Object::Ptr resources = root->getObject("resources")) {
      for (const auto& [name, value] : *resources) {
        if (value.type() != typeid(Object::Ptr))
          throw malformed("resource '" + name + "' is no object");
        Object::Ptr item = value.extract<Object::Ptr>();
        std::string type = text(item, "type");
        std::shared_ptr<const ResourceSnapshotCodecs::Codec> codec =
            ResourceSnapshotCodecs::find(type);
        if (codec == nullptr) {
          throw SnapshotMismatchError("composite snapshot " + snap.id + " holds a '" + type +
                                      "' snapshot, a type this process has not registered");
        }
        snap.resources.emplace(name, codec->decode(item->get("value")));
      }
    }
    if (Object::Ptr record = root->getObject("record")) {
      try {
        snap.record = LedgerRecord::from_json(stringified(record));
      } catch (const Error& e) {
        throw malformed(std::string("its record: ") + e.what());
      }
    }
  } catch (const Poco::Exception& e) {
    throw malformed(e.displayText());
  }
  return snap;
}

}  // namespace sandbox
