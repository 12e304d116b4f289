// Helpers for commands that write shell command lines (hook settings): this
// executable's absolute path, and POSIX shell quoting.
#pragma once

#include <string>

namespace cli {

// The absolute path of the running shadowbox executable.
std::string self_path();
// s quoted for a POSIX shell ('...' with embedded quotes escaped).
std::string shell_quote(const std::string& s);

}  // namespace cli
