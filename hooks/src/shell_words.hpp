// The words of a command line as a POSIX shell splits them, for the plain command lines
// shadowbox writes into an agent's settings: words of ordinary characters, '...' and
// "..." quoting and backslash escapes (cli's shell_quote writes '\'' for a quote).
// Private to hooks.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hooks {

// The words of command, or nullopt if the shell would do more than split and unquote
// it: anything it expands or interprets ($, `, globs, ~, redirections, ;, &, |, #,
// parentheses, braces, a newline...), or a quote left open.
std::optional<std::vector<std::string>> plain_shell_words(const std::string& command);

}  // namespace hooks
