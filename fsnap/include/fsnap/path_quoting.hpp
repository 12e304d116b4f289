// Quoting of path names for one-line text (commit trailers, human output), in the
// style of git's core.quotePath: a name made only of printable ASCII (other than `"`
// and `\`) and valid UTF-8 beyond ASCII is left as it is; any other name is wrapped in
// double quotes with C escapes (\n, \t, \", \\, and \ooo octal for control bytes and
// bytes that are not valid UTF-8). unquote_path reverses it exactly.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fsnap {

// The name as it may appear on one line of text.
std::string quote_path(std::string_view path);
// The raw name from quote_path's output; nullopt if text is not validly quoted.
std::optional<std::string> unquote_path(std::string_view text);
// True if s is valid UTF-8.
bool is_valid_utf8(std::string_view s);
// The length of the valid UTF-8 sequence starting at s[i] (1 for ASCII), or 0 if none
// starts there (a stray byte, an overlong form, a surrogate, beyond U+10FFFF).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

}  // namespace fsnap
