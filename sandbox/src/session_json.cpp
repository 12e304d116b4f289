#include "session_json.hpp"

#include <map>
#include <set>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Parser.h>

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

namespace {

// The registered names of types, in name order.
Poco::JSON::Array::Ptr type_names(const std::set<std::type_index>& types) {
  std::set<std::string> names;
  for (std::type_index t : types) {
    if (t == typeid(void)) continue;  // SliceSelection::both's "none"
    std::shared_ptr<const SliceType> entry = SliceTypes::find(t);
    if (entry == nullptr) {
      throw Error(ErrorCode::kInvalidArgument, "slice type " + SliceTypes::name_of(t) +
                                                   " is selected but has no registered name");
    }
    names.insert(entry->name);
  }
  Poco::JSON::Array::Ptr out = new Poco::JSON::Array;
  for (const std::string& n : names) out->add(n);
  return out;
}

std::set<std::type_index> types_named(const Poco::JSON::Array::Ptr& names) {
  std::set<std::type_index> out;
  for (std::size_t i = 0; names && i < names->size(); ++i) {
    std::string name = names->getElement<std::string>(static_cast<unsigned>(i));
    std::shared_ptr<const SliceType> entry = SliceTypes::find(std::string_view(name));
    if (entry == nullptr) {
      throw SnapshotMismatchError("session snapshot selects slice type " + name +
                                  ", which this process has not registered");
    }
    out.insert(entry->type);
  }
  return out;
}

}  // namespace

void write_covers(const SessionSnapshot& snapshot, Poco::JSON::Object& out) {
  if (!snapshot.selection.everything()) {
    Poco::JSON::Object::Ptr selects = ordered_object();
    // No "include": every type. An empty one: none (SliceSelection::both's "none").
    if (!snapshot.selection.include.empty()) {
      selects->set("include", type_names(snapshot.selection.include));
    }
    selects->set("exclude", type_names(snapshot.selection.exclude));
    out.set("selects", selects);
  }
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
  if (Poco::JSON::Object::Ptr selects = in->getObject("selects")) {
    if (Poco::JSON::Array::Ptr include = selects->getArray("include")) {
      snap.selection.include = types_named(include);
      if (snap.selection.include.empty()) snap.selection.include.insert(typeid(void));
    }
    snap.selection.exclude = types_named(selects->getArray("exclude"));
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

namespace sandbox::codec_json {

std::string string_field(const Poco::JSON::Object::Ptr& o, const std::string& key) {
  if (!o->has(key) || o->isNull(key)) return "";
  return o->getValue<std::string>(key);
}

Poco::JSON::Object::Ptr object_of(const Poco::Dynamic::Var& v, const char* what) {
  if (v.type() != typeid(Poco::JSON::Object::Ptr) ||
      v.extract<Poco::JSON::Object::Ptr>() == nullptr) {
    throw Error(ErrorCode::kInvalidArgument, std::string(what) + " is not a JSON object");
  }
  return v.extract<Poco::JSON::Object::Ptr>();
}

}  // namespace sandbox::codec_json

// ---- SessionSnapshot's JSON and comparisons (declared in sandbox/session.hpp) -----

namespace sandbox {

namespace {

using session_json::codec_for;
using session_json::ordered_object;
using session_json::string_field;

}  // namespace

std::string SessionSnapshot::to_json() const {
  Poco::JSON::Object::Ptr root = ordered_object();
  root->set("format", "shadowbox.session-snapshot.v1");
  session_json::write_stamp(*this, *root);
  session_json::write_header(*this, *root);
  // Slices in name order, so equal snapshots give equal text.
  std::map<std::string, std::type_index> by_name;
  for (const auto& [type, items] : slices) by_name.emplace(codec_for(type)->name, type);
  Poco::JSON::Array::Ptr slice_array = new Poco::JSON::Array;
  for (const auto& [name, type] : by_name) {
    std::shared_ptr<const SliceType> codec = codec_for(type);
    Poco::JSON::Object::Ptr slice = ordered_object();
    slice->set("type", name);
    auto policy = policies.find(type);
    slice->set("policy", std::string(to_string(policy == policies.end() ? SlicePolicy::kState
                                                                        : policy->second)));
    Poco::JSON::Array::Ptr values = new Poco::JSON::Array;
    for (const statekit::Item& item : slices.at(type)) values->add(codec->encode(item.get()));
    slice->set("items", values);
    slice_array->add(slice);
  }
  root->set("slices", slice_array);
  session_json::write_covers(*this, *root);
  std::ostringstream out;
  root->stringify(out);
  return out.str();
}

SessionSnapshot SessionSnapshot::from_json(const std::string& json) {
  Poco::JSON::Object::Ptr root;
  try {
    Poco::JSON::Parser parser;
    root = parser.parse(json).extract<Poco::JSON::Object::Ptr>();
  } catch (const Poco::Exception& e) {
    throw Error(ErrorCode::kInvalidArgument,
                "session snapshot: not a JSON object: " + e.displayText());
  }
  if (string_field(root, "format") != "shadowbox.session-snapshot.v1") {
    throw Error(ErrorCode::kInvalidArgument, "session snapshot: unknown format " +
                                                 fsnap::quote_input(string_field(root, "format")));
  }
  SessionSnapshot snap;
  try {
    session_json::read_stamp(root, snap);
    session_json::read_header(root, snap);
    Poco::JSON::Array::Ptr slice_array = root->getArray("slices");
    if (slice_array == nullptr)
      throw Error(ErrorCode::kInvalidArgument, "session snapshot: no slices");
    for (std::size_t i = 0; i < slice_array->size(); ++i) {
      Poco::JSON::Object::Ptr slice = slice_array->getObject(static_cast<unsigned>(i));
      if (slice == nullptr)
        throw Error(ErrorCode::kInvalidArgument, "session snapshot: bad slice entry");
      std::string name = string_field(slice, "type");
      std::shared_ptr<const SliceType> codec = SliceTypes::find(name);
      if (codec == nullptr || !codec->decode) {
        throw SnapshotMismatchError("session snapshot " + snap.id + " holds slice type '" + name +
                                    "', which this process has not registered");
      }
      std::optional<SlicePolicy> policy = parse_slice_policy(string_field(slice, "policy"));
      if (!policy)
        throw Error(ErrorCode::kInvalidArgument, "session snapshot: bad policy of " + name);
      statekit::SliceItems items;
      Poco::JSON::Array::Ptr values = slice->getArray("items");
      if (values == nullptr)
        throw Error(ErrorCode::kInvalidArgument, "session snapshot: no items in " + name);
      for (std::size_t k = 0; k < values->size(); ++k) {
        items = items.push_back(codec->decode(values->get(static_cast<unsigned>(k))));
      }
      snap.slices.emplace(codec->type, std::move(items));
      snap.policies.emplace(codec->type, *policy);
    }
  } catch (const Poco::Exception& e) {
    throw Error(ErrorCode::kInvalidArgument, "session snapshot: " + e.displayText());
  }
  return snap;
}

namespace {

// Whether two versions of slice type hold equal items (by identity, else by encoding).
bool same_items(std::type_index type, const statekit::SliceItems& a,
                const statekit::SliceItems& b) {
  if (a.size() != b.size()) return false;
  if (a.shares_root_with(b)) return true;
  std::shared_ptr<const SliceType> codec = codec_for(type);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (codec->encode(a[i].get()).toString() != codec->encode(b[i].get()).toString()) return false;
  }
  return true;
}

}  // namespace

bool SessionSnapshot::equivalent(const SessionSnapshot& other) const {
  if (policies != other.policies || slices.size() != other.slices.size() ||
      selection.include != other.selection.include ||
      selection.exclude != other.selection.exclude) {
    return false;
  }
  for (const auto& [type, items] : slices) {
    auto it = other.slices.find(type);
    if (it == other.slices.end() || !same_items(type, items, it->second)) return false;
  }
  return true;
}

SnapshotDiff SessionSnapshot::diff(const SessionSnapshot& before, const SessionSnapshot& after) {
  SnapshotDiff out;
  for (const auto& [type, items] : before.slices) {
    auto now = after.slices.find(type);
    if (now == after.slices.end()) {
      out.removed.emplace(type, items);
    } else if (!same_items(type, items, now->second)) {
      out.modified.emplace(type, std::make_pair(items, now->second));
    }
  }
  for (const auto& [type, items] : after.slices) {
    if (before.slices.count(type) == 0) out.added.emplace(type, items);
  }
  return out;
}

}  // namespace sandbox
