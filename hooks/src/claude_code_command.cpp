#include "hooks/claude_code_command.hpp"

#include <algorithm>
#include <string_view>

namespace hooks {

namespace {

enum class Arity { kFlag, kValue, kValues, kOptionalValue };

struct OptionArity {
  std::string_view name;
  Arity arity;
};

// The options of Claude Code 2.1.330 that take values (`claude --help`); others are flags.
constexpr OptionArity kOptions[] = {
    {"--add-dir", Arity::kValues},
    {"--agent", Arity::kValue},
    {"--agents", Arity::kValue},
    {"--allowedTools", Arity::kValues},
    {"--allowed-tools", Arity::kValues},
    {"--append-system-prompt", Arity::kValue},
    {"--append-system-prompt-file", Arity::kValue},
    {"--autocompact", Arity::kValue},
    {"--betas", Arity::kValues},
    {"--cloud", Arity::kOptionalValue},
    {"-d", Arity::kOptionalValue},
    {"--debug", Arity::kOptionalValue},
    {"--debug-file", Arity::kValue},
    {"--disallowedTools", Arity::kValues},
    {"--disallowed-tools", Arity::kValues},
    {"--effort", Arity::kValue},
    {"--environment", Arity::kValue},
    {"--fallback-model", Arity::kValue},
    {"--file", Arity::kValues},
    {"--from-pr", Arity::kOptionalValue},
    {"--input-format", Arity::kValue},
    {"--json-schema", Arity::kValue},
    {"--max-budget-usd", Arity::kValue},
    {"--max-turns", Arity::kValue},
    {"--mcp-config", Arity::kValues},
    {"--model", Arity::kValue},
    {"-n", Arity::kValue},
    {"--name", Arity::kValue},
    {"--output-format", Arity::kValue},
    {"--permission-mode", Arity::kValue},
    {"--permission-prompt-tool", Arity::kValue},
    {"--permission-prompts", Arity::kValue},
    {"--plugin-dir", Arity::kValue},
    {"--plugin-url", Arity::kValue},
    {"--prompt-suggestions", Arity::kOptionalValue},
    {"--remote-control", Arity::kOptionalValue},
    {"--remote-control-session-name-prefix", Arity::kValue},
    {"-r", Arity::kOptionalValue},
    {"--resume", Arity::kOptionalValue},
    {"--session-id", Arity::kValue},
    {"--setting-sources", Arity::kValue},
    {"--settings", Arity::kValue},
    {"--system-prompt", Arity::kValue},
    {"--system-prompt-file", Arity::kValue},
    {"--system-prompt-snapshot", Arity::kValue},
    {"--teleport", Arity::kOptionalValue},
    {"--tools", Arity::kValues},
    {"-w", Arity::kOptionalValue},
    {"--worktree", Arity::kOptionalValue},
};

// Options that choose the session: resume sets its own.
constexpr std::string_view kSessionOptions[] = {"-r",         "--resume",     "-c",
                                                "--continue", "--session-id", "--fork-session",
                                                "--from-pr",  "--teleport"};

// Print mode and what only works with it.
constexpr std::string_view kPrintOptions[] = {"-p",
                                              "--print",
                                              "--output-format",
                                              "--input-format",
                                              "--json-schema",
                                              "--max-turns",
                                              "--max-budget-usd",
                                              "--include-partial-messages",
                                              "--replay-user-messages",
                                              "--include-hook-events",
                                              "--permission-prompt-tool",
                                              "--forward-subagent-text"};

bool is_option(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-' && arg != "--";
}

Arity arity_of(std::string_view name) {
  for (const OptionArity& o : kOptions) {
    if (o.name == name) return o.arity;
  }
  return Arity::kFlag;
}

template <std::size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// One option with its values, as consecutive arguments.
struct ParsedOption {
  std::string name;
  std::vector<std::string> words;
};

std::vector<ParsedOption> parse(const std::vector<std::string>& args,
                                std::vector<std::string>& prompt) {
  std::vector<ParsedOption> options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      prompt.insert(prompt.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (!is_option(arg)) {
      prompt.push_back(arg);
      continue;
    }
    std::size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    ParsedOption option{name, {arg}};
    if (eq == std::string::npos) {
      switch (arity_of(name)) {
        case Arity::kFlag:
          break;
        case Arity::kValue:
          if (i + 1 < args.size()) option.words.push_back(args[++i]);
          break;
        case Arity::kOptionalValue:
          if (i + 1 < args.size() && !is_option(args[i + 1]) && args[i + 1] != "--") {
            option.words.push_back(args[++i]);
          }
          break;
        case Arity::kValues:
          while (i + 1 < args.size() && !is_option(args[i + 1]) && args[i + 1] != "--") {
            option.words.push_back(args[++i]);
          }
          break;
      }
    }
    options.push_back(std::move(option));
  }
  return options;
}

}  // namespace

ClaudeCodeArgs split_claude_code_args(const std::vector<std::string>& args) {
  ClaudeCodeArgs out;
  for (ParsedOption& o : parse(args, out.prompt)) {
    out.options.insert(out.options.end(), o.words.begin(), o.words.end());
  }
  return out;
}

std::vector<std::string> options_to_resume_with(const std::vector<std::string>& original_args,
                                                bool new_prompt) {
  std::vector<std::string> prompt;
  std::vector<std::string> kept;
  for (const ParsedOption& o : parse(original_args, prompt)) {
    if (listed(kSessionOptions, o.name)) continue;
    if (!new_prompt && listed(kPrintOptions, o.name)) continue;
    kept.insert(kept.end(), o.words.begin(), o.words.end());
  }
  return kept;
}

}  // namespace hooks
