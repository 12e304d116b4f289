// The command line of the shadowbox executable. Each command declares its options and
// operands once (OptionSpec, OperandSpec in the command table); CLI11 parses against
// that declaration, and help, synopses and usage errors are made from it. A malformed
// command line is a UsageError (exit status 2).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

// A command line that does not follow the documented syntax.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Options of every command, accepted before or after the command's name.
struct GlobalOptions {
  std::optional<std::string> workspace;  // --workspace DIR (default: found, see locate)
  std::optional<std::string> store;      // --store DIR
  std::optional<std::string> config;     // --config FILE
  bool json = false;                     // --json
  // Not an option: where the workspace is looked for when --workspace is not given
  // (default: the current directory; a hook event's project directory).
  std::optional<std::string> search_from;
};

// What an option's value or an operand names: what the shell completions offer for it
// (cli/completion_scripts.cpp) and, for a run, what main checks before anything is opened.
enum class ValueKind {
  kText,     // anything: nothing is offered
  kChoice,   // one of a closed set: the choices, '|'-separated
  kRun,      // an existing run (its id)
  kNewRun,   // the id of a run to make
  kRef,      // a checkpoint (REF: pre:<id>, post:<id>, a tag, run:<run>, ...)
  kCallId,   // a tool call id
  kPath,     // a file or directory
  kDir,      // a directory
  kFile,     // a file
  kProgram,  // a program on the PATH
  kCommand,  // one of shadowbox's commands
};

// One option of a command: "--name" (the key the command reads it by), an optional
// one-letter alias, the name of its value (nullptr for a flag), a line of help, what its
// value names and, for kChoice, the values it takes ("a|b|c").
struct OptionSpec {
  const char* name;
  const char* alias;
  const char* value;
  const char* help;
  ValueKind kind = ValueKind::kText;
  const char* choices = nullptr;
};

// One operand of a command, in order. A variadic one takes the rest of the line, options
// included after `--` (ARGS of another program). An operand of kind kChoice takes the
// choices given, else those it is named by ("status|stop|serve").
struct OperandSpec {
  const char* name;
  bool required;
  bool variadic;
  const char* help;
  ValueKind kind = ValueKind::kText;
  const char* choices = nullptr;
};

// The values a kChoice option or operand takes, in order (empty for other kinds).
std::vector<std::string> choices_of(const OptionSpec& option);
std::vector<std::string> choices_of(const OperandSpec& operand);

// The options of every command (--workspace, --store, --config, --json, --version), as
// GlobalOptions holds them: the parser, the overview and the manual page read this one
// table.
const std::vector<OptionSpec>& global_option_specs();

// The syntax of one command, as the command table declares it.
struct CommandSyntax {
  const char* name;
  const char* summary;
  std::vector<OptionSpec> options;
  std::vector<OperandSpec> operands;
  // The operands are another program's command line, begun by its first operand or by
  // `--`: nothing after that is shadowbox's (`run -- claude --help`).
  bool passes_through = false;
};

// "log [--run RUN] [-n N]": the usage line of a command, made from its declaration.
std::string synopsis(const CommandSyntax& syntax);

// The options and operands of one command as parsed.
class CommandArgs {
 public:
  CommandArgs(const CommandSyntax* syntax, std::map<std::string, std::string> values,
              std::vector<std::string> operands)
      : syntax_(syntax), values_(std::move(values)), operands_(std::move(operands)) {}

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  // A non-negative integer option; throws UsageError when it is not one.
  std::optional<std::size_t> count(const std::string& name) const;
  const std::vector<std::string>& operands() const { return operands_; }
  // The same options with other operands.
  CommandArgs with_operands(std::vector<std::string> operands) const {
    return CommandArgs(syntax_, values_, std::move(operands));
  }
  // A UsageError with message, followed by the command's synopsis.
  UsageError usage_error(const std::string& message) const;

 private:
  const CommandSyntax* syntax_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> operands_;
};

// What a command line asks for.
struct CommandLine {
  GlobalOptions options;
  const CommandSyntax* command = nullptr;  // nullptr with --help / --version alone
  std::optional<CommandArgs> args;
  bool help = false;     // --help / -h (of the command, if one is named)
  bool version = false;  // --version
};

// Parses argv (without argv[0]) against the commands' declarations. Throws UsageError.
CommandLine parse_command_line(const std::vector<std::string>& argv,
                               const std::vector<const CommandSyntax*>& commands);

// text wrapped at 79 columns for a line whose first part starts at first_column; the
// lines after the first are indented by indent.
std::string wrap(const std::string& text, std::size_t indent, std::size_t first_column);

// The help of one command: usage, summary, its options and operands, each with its help.
std::string command_help(const CommandSyntax& syntax);

}  // namespace cli
