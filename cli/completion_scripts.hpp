// The shell completion scripts of shadowbox (`shadowbox completion bash|zsh|fish`), made
// from the command table and the global options: commands, each command's options, the
// values of an option or operand whose set is closed, files and directories where a path
// goes, and run ids, checkpoints and call ids, which the scripts ask of
// `shadowbox completion --words` (completion_words.hpp).
#pragma once

#include <string>

namespace cli {

// The script for shell ("bash", "zsh" or "fish"); empty for another shell.
std::string completion_script(const std::string& shell);

}  // namespace cli
