// The JSON of the agents' session files as their line readers
// (src/*_session_line.cpp) take it: a line that is not a JSON object, or a field of
// another type, is read as nothing rather than an error — the files are the agents',
// written as they go. Private to hooks.
#pragma once

#include <cstdint>
#include <string>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

namespace hooks::session_line_json {

// line as a JSON object, or null.
inline Poco::JSON::Object::Ptr parse(const std::string& line) {
  try {
    Poco::JSON::Parser parser;
    Poco::Dynamic::Var parsed = parser.parse(line);
    if (parsed.type() == typeid(Poco::JSON::Object::Ptr)) {
      return parsed.extract<Poco::JSON::Object::Ptr>();
    }
  } catch (const std::exception&) {
  }
  return nullptr;
}

// The count o[key] holds (0 if none, negative or not a number).
inline std::uint64_t tokens(const Poco::JSON::Object::Ptr& o, const char* key) {
  if (!o || !o->has(key) || o->isNull(key)) return 0;
  try {
    double n = o->getValue<double>(key);
    return n > 0 ? static_cast<std::uint64_t>(n) : 0;
  } catch (const Poco::Exception&) {
    return 0;
  }
}

// The string o[key] holds ("" if none).
inline std::string text(const Poco::JSON::Object::Ptr& o, const char* key) {
  if (!o || !o->has(key) || o->isNull(key)) return "";
  try {
    return o->getValue<std::string>(key);
  } catch (const Poco::Exception&) {
    return "";
  }
}

// total less part (tokens an agent counts twice, cached input inside input), never
// below 0.
inline std::uint64_t less(std::uint64_t total, std::uint64_t part) {
  return total > part ? total - part : 0;
}

}  // namespace hooks::session_line_json
