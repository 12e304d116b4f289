// Claude Code's command line, as far as `shadowbox resume` needs it: which of the
// agent's arguments are its options (kept when a run is resumed) and which are the
// prompt (replaced). The arity of each option is the pinned CLI's (`claude --help`);
// an option this table does not know is taken for a flag.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace hooks {

// The arguments of a `claude` command line (without the program), split as Claude Code
// parses them.
struct ClaudeCodeArgs {
  std::vector<std::string> options;  // options with their values, in order
  std::vector<std::string> prompt;   // the operands: the prompt
};

// Splits args as Claude Code would (a variadic option takes values up to the next
// option; an optional value is taken when the next argument is not an option;
// everything after `--` is an operand).
ClaudeCodeArgs split_claude_code_args(const std::vector<std::string>& args);

// The options of an earlier command line to resume with: without its prompt and
// without the options that choose a session (--resume, --continue, --session-id,
// --fork-session...), which resume sets itself. When the resume gives no prompt of its
// own (an interactive session), print-mode options (-p and those that only work with
// it) go too.
std::vector<std::string> options_to_resume_with(const std::vector<std::string>& original_args,
                                                bool new_prompt);

}  // namespace hooks
