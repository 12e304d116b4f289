// SHA-256 of a text, as the files that record trust by content write it.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace sandbox {

// The SHA-256 of text, as 64 lowercase hex digits.
std::string sha256_hex(std::string_view text);

}  // namespace sandbox
