// Small readers that slice codecs share (slice_types.hpp): every owner of a slice type
// that stores its items as JSON reads members the same way, with the same errors.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include <Poco/Dynamic/Var.h>
#include <Poco/JSON/Object.h>

namespace sandbox::codec_json {

// A string member, "" if absent or null.
std::string string_field(const Poco::JSON::Object::Ptr& o, const std::string& key);

// v as a JSON object (a slice item's codec reads one); Error kInvalidArgument saying
// `what` is not a JSON object otherwise.
Poco::JSON::Object::Ptr object_of(const Poco::Dynamic::Var& v, const char* what);

}  // namespace sandbox::codec_json
