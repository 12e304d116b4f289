// What the agents' adapters (hooks/src/*_adapter.cpp) share: the environment and JSON
// out. Private to hooks.
#pragma once

#include <cstdlib>
#include <sstream>
#include <string>

#include <Poco/JSON/Object.h>

namespace hooks::adapter_support {

// Whether the environment variable name is set and not empty.
inline bool environment_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// o as compact JSON text (a hook's answer).
inline std::string to_json(const Poco::JSON::Object::Ptr& o) {
  std::ostringstream text;
  o->stringify(text);
  return text.str();
}

}  // namespace hooks::adapter_support
