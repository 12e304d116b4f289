// The program's version (`shadowbox --version`).
#pragma once

namespace cli {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace cli
