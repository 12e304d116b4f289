// What the agents' adapters (hooks/src/*_adapter.cpp) share: the environment, JSON out,
// and summaries. Private to hooks.
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

// text cut to limit bytes ("..." marks a cut), as the core's summaries are.
inline std::string shortened(std::string text, std::size_t limit) {
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return text;
}

}  // namespace hooks::adapter_support
