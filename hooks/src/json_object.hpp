// JSON objects as hooks reads and writes agents' files (settings, configuration): keys
// kept in their order, so that a file shadowbox rewrites reads as its owner wrote it.
// Private to hooks.
#pragma once

#include <sstream>
#include <string>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/ParseHandler.h>
#include <Poco/JSON/Parser.h>

#include "sandbox/errors.hpp"

namespace hooks::json_object {

// text as a JSON object, its keys in order. Error kInvalidArgument naming what ("what
// is not valid JSON: ...", "what is not a JSON object").
inline Poco::JSON::Object::Ptr parse(const std::string& text, const std::string& what) {
  using sandbox::Error;
  using sandbox::ErrorCode;
  try {
    Poco::JSON::Parser parser(new Poco::JSON::ParseHandler(/*preserveObjectOrder=*/true));
    Poco::Dynamic::Var v = parser.parse(text);
    if (v.type() == typeid(Poco::JSON::Object::Ptr)) return v.extract<Poco::JSON::Object::Ptr>();
  } catch (const Poco::Exception& e) {
    throw Error(ErrorCode::kInvalidArgument, what + " is not valid JSON: " + e.displayText());
  }
  throw Error(ErrorCode::kInvalidArgument, what + " is not a JSON object");
}

// o as a settings file holds it: indented by two, with a final newline.
inline std::string file_text(const Poco::JSON::Object::Ptr& o) {
  std::ostringstream out;
  o->stringify(out, 2);
  out << '\n';
  return out.str();
}

}  // namespace hooks::json_object
