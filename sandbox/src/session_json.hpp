// The parts of a session snapshot's JSON that its inline form (SessionSnapshot::to_json)
// and its tree form (SessionTrees' head.json) share. Private to sandbox.
#pragma once

#include <memory>
#include <string>
#include <typeindex>

#include <Poco/JSON/Object.h>

#include "sandbox/codec_json.hpp"
#include "sandbox/session.hpp"
#include "sandbox/slice_types.hpp"

namespace sandbox::session_json {

// The registered type of a slice with its codec; Error kInvalidArgument naming the type
// if it has none.
std::shared_ptr<const SliceType> codec_for(std::type_index type);

// An object that keeps its keys in insertion order.
Poco::JSON::Object::Ptr ordered_object();

using codec_json::object_of;
using codec_json::string_field;

// Sets id, session_id and created_at of out.
void write_stamp(const SessionSnapshot& snapshot, Poco::JSON::Object& out);
// Sets parent_id, children_ids and tags of out.
void write_header(const SessionSnapshot& snapshot, Poco::JSON::Object& out);
// Sets "covers" if the snapshot does not cover every policy, and "selects" if it does
// not select every slice type (SliceSelection).
void write_covers(const SessionSnapshot& snapshot, Poco::JSON::Object& out);
// Reads what write_stamp sets; Error kInvalidArgument if malformed.
void read_stamp(const Poco::JSON::Object::Ptr& in, SessionSnapshot& snapshot);
// Reads what write_header and write_covers set; Error kInvalidArgument if malformed.
void read_header(const Poco::JSON::Object::Ptr& in, SessionSnapshot& snapshot);

}  // namespace sandbox::session_json
