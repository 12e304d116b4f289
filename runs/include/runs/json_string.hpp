// The body of a JSON string (the text between its quotes) as the common writers make
// it: Node's JSON.stringify and Rust's serde_json escape '"', '\' and control
// characters (\n, \t, \b, \f, \r, else \u001f), and leave everything else as it is;
// some writers escape '/' as "\/" too.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace runs {

// text as the body of a JSON string; '/' written "\/" if escape_slash.
std::string json_string_body(std::string_view text, bool escape_slash = false);

}  // namespace runs
