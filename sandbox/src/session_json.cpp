#include "session_json.hpp"

#include <Poco/JSON/Array.h>

#include "fsnap/checkpoint.hpp"
#include "sandbox/errors.hpp"

namespace sandbox::session_json {

std::shared_ptr<const SliceType> codec_for(std::type_index type) {
  std::shared_ptr<const SliceType> entry = SliceTypes::find(type);
  if (entry == nullptr || !entry->encode) {
    throw Error(ErrorCode::kInvalidArgument,
                "slice type " + SliceTypes::name_of(type) +
                    " has no registered JSON codec (see SliceTypes::add)");
  }
  return entry;
}

Poco::JSON::Object::Ptr ordered_object() {
  return new Poco::JSON::Object(Poco::JSON_PRESERVE_KEY_ORDER);
}

std::string string_field(const Poco::JSON::Object::Ptr& o, const std::string& key) {
  if (!o->has(key) || o->isNull(key)) return "";
  return o->getValue<std::string>(key);
}

void write_stamp(const SessionSnapshot& snapshot, Poco::JSON::Object& out) {
  out.set("id", snapshot.id);
  out.set("session_id", snapshot.session_id);
  out.set("created_at", fsnap::format_timestamp(snapshot.created_at));
}

void write_header(const SessionSnapshot& snapshot, Poco::JSON::Object& out) {
  out.set("parent_id", snapshot.parent_id.empty() ? Poco::Dynamic::Var()
                                                  : Poco::Dynamic::Var(snapshot.parent_id));
  Poco::JSON::Array::Ptr children = new Poco::JSON::Array;
  for (const std::string& c : snapshot.children_ids) children->add(c);
  out.set("children_ids", children);
  Poco::JSON::Object::Ptr tag_object = ordered_object();
  for (const auto& [k, v] : snapshot.tags) tag_object->set(k, v);
  out.set("tags", tag_object);
}

void write_covers(const SessionSnapshot& snapshot, Poco::JSON::Object& out) {
  if (snapshot.covered.size() >= 3) return;
  Poco::JSON::Array::Ptr covers = new Poco::JSON::Array;
  for (SlicePolicy p : snapshot.covered) covers->add(std::string(to_string(p)));
  out.set("covers", covers);
}

void read_stamp(const Poco::JSON::Object::Ptr& in, SessionSnapshot& snap) {
  snap.id = string_field(in, "id");
  snap.session_id = string_field(in, "session_id");
  std::optional<std::chrono::system_clock::time_point> created =
      fsnap::parse_timestamp(string_field(in, "created_at"));
  if (!created) throw Error(ErrorCode::kInvalidArgument, "session snapshot: bad created_at");
  snap.created_at = *created;
}

void read_header(const Poco::JSON::Object::Ptr& in, SessionSnapshot& snap) {
  snap.parent_id = string_field(in, "parent_id");
  if (Poco::JSON::Array::Ptr children = in->getArray("children_ids")) {
    for (std::size_t i = 0; i < children->size(); ++i) {
      snap.children_ids.push_back(children->getElement<std::string>(static_cast<unsigned>(i)));
    }
  }
  if (Poco::JSON::Object::Ptr tags = in->getObject("tags")) {
    for (const auto& [k, v] : *tags) snap.tags[k] = v.toString();
  }
  if (Poco::JSON::Array::Ptr covers = in->getArray("covers")) {
    snap.covered.clear();
    for (std::size_t i = 0; i < covers->size(); ++i) {
      std::optional<SlicePolicy> p =
          parse_slice_policy(covers->getElement<std::string>(static_cast<unsigned>(i)));
      if (!p) throw Error(ErrorCode::kInvalidArgument, "session snapshot: bad \"covers\"");
      snap.covered.insert(*p);
    }
  }
}

}  // namespace sandbox::session_json
