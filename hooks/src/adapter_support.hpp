// What the agents' adapters (hooks/src/*_adapter.cpp) share: small reads of the
// environment and of files. Private to hooks.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/filesystem/path.hpp>

namespace hooks::adapter_support {

// Whether the environment variable name is set and not empty.
inline bool environment_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

// The content of file ("" if it cannot be read).
inline std::string read_text(const boost::filesystem::path& file) {
  std::ifstream in(file.string(), std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace hooks::adapter_support
