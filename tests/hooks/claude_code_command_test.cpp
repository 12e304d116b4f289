// Which arguments of a `claude` command line are options (kept by resume) and which are
// the prompt (replaced), with the arity of the pinned CLI's options.
#include <gtest/gtest.h>

#include "hooks/claude_code_command.hpp"

namespace {

using hooks::options_to_resume_with;
using hooks::split_claude_code_args;
using Args = std::vector<std::string>;

TEST(ClaudeCodeCommandTest, OptionsTakeTheirValuesAndTheRestIsThePrompt) {
  hooks::ClaudeCodeArgs a =
      split_claude_code_args({"-p", "fix the bug", "--model", "opus", "--allowedTools", "Bash",
                              "Edit(src/*)", "--permission-mode=acceptEdits", "--verbose"});
  EXPECT_EQ(a.prompt, Args({"fix the bug"}));
  EXPECT_EQ(a.options, Args({"-p", "--model", "opus", "--allowedTools", "Bash", "Edit(src/*)",
                             "--permission-mode=acceptEdits", "--verbose"}));
  // An optional value is taken only when the next argument is not an option.
  EXPECT_EQ(split_claude_code_args({"--debug", "hooks", "task"}).prompt, Args({"task"}));
  EXPECT_EQ(split_claude_code_args({"--debug", "-p", "task"}).prompt, Args({"task"}));
  // After --, everything is the prompt.
  EXPECT_EQ(split_claude_code_args({"--model", "x", "--", "--not-an-option"}).prompt,
            Args({"--not-an-option"}));
}

TEST(ClaudeCodeCommandTest, ResumeKeepsOptionsButNotThePromptOrTheSession) {
  Args original = {"-p",       "go",     "--allowedTools",  "Bash",
                   "--resume", "old-id", "--fork-session",  "--session-id",
                   "abc",      "-c",     "--output-format", "json",
                   "--model",  "opus"};
  EXPECT_EQ(options_to_resume_with(original, /*new_prompt=*/true),
            Args({"-p", "--allowedTools", "Bash", "--output-format", "json", "--model", "opus"}));
  // Without a new prompt the session is interactive: print mode and its options go.
  EXPECT_EQ(options_to_resume_with(original, /*new_prompt=*/false),
            Args({"--allowedTools", "Bash", "--model", "opus"}));
}

}  // namespace
