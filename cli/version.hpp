// The program's version (`shadowbox --version`): the project's one version, declared in
// the top-level CMakeLists.txt (project(... VERSION ...)) and passed to the compiler.
#pragma once

namespace cli {

inline constexpr const char* kVersion = SHADOWBOX_VERSION;

}  // namespace cli
