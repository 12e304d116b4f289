#include "arguments.hpp"

#include <algorithm>
#include <deque>
#include <memory>

#include <CLI/CLI.hpp>

#include "fsnap/error.hpp"

namespace cli {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string option_names(const OptionSpec& option) {
  return option.alias != nullptr ? std::string(option.alias) + "," + option.name : option.name;
}

// One parse of a command line: a CLI11 application made from the declarations, with
// storage for what it reads.
class Parser {
 public:
  explicit Parser(const std::vector<const CommandSyntax*>& commands) {
    app_.allow_extras();            // left-overs are reported below, in our words
    app_.require_subcommand(0, 1);  // `show log`: a tag named log, not a second command
    for (const OptionSpec& option : global_option_specs()) {
      if (option.value != nullptr) {
        app_.add_option(option.name, global_values_[option.name])->type_name(option.value);
      } else {
        app_.add_flag(option.name, global_flags_[option.name]);
      }
    }
    for (const CommandSyntax* syntax : commands) add_command(*syntax);
  }

  // Parses args; the result holds what the user asked for. Throws UsageError.
  CommandLine parse(std::vector<std::string> args) {
    CommandLine line;
    Bound* bound = nullptr;
    try {
      std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
      app_.parse(args);
      bound = selected();
    } catch (const CLI::CallForHelp&) {
      line.help = true;
      if ((bound = selected()) != nullptr) {
        line.command = bound->syntax;
      } else {
        reject_extras(app_.remaining(), nullptr);  // `shadowbox nosuch --help`
      }
      return line;
    } catch (const CLI::ParseError& e) {
      bound = selected();
      std::string message = e.what();
      if (bound != nullptr) {
        throw UsageError(std::string(bound->syntax->name) + ": " + message + " (usage: shadowbox " +
                         synopsis(*bound->syntax) + ")");
      }
      throw UsageError(message);
    }
    line.version = global_flags_["--version"];
    line.options = global_options();
    if (bound == nullptr) {
      reject_extras(app_.remaining(), nullptr);
      return line;
    }
    line.command = bound->syntax;
    line.args = command_args(*bound);
    return line;
  }

 private:
  struct Bound {
    const CommandSyntax* syntax;
    CLI::App* app;
    std::vector<std::pair<const OptionSpec*, CLI::Option*>> options;
    std::vector<CLI::Option*> operands;
  };

  void add_command(const CommandSyntax& syntax) {
    Bound bound{&syntax, app_.add_subcommand(syntax.name, syntax.summary), {}, {}};
    if (syntax.passes_through) {
      bound.app->prefix_command();  // the first operand starts the other program's line
    } else {
      bound.app->fallthrough();  // global options after the command's name
    }
    for (const OptionSpec& option : syntax.options) {
      CLI::Option* o;
      if (option.value == nullptr) {
        o = bound.app->add_flag(option_names(option), option.help);
      } else {
        o = bound.app->add_option(option_names(option), values_.emplace_back(), option.help)
                ->type_name(option.value)
                ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
      }
      bound.options.emplace_back(&option, o);
    }
    for (const OperandSpec& operand : syntax.operands) {
      if (syntax.passes_through) break;  // what follows is taken as it is, not parsed
      CLI::Option* o =
          operand.variadic
              ? bound.app->add_option(operand.name, operand_values_.emplace_back(), operand.help)
              : bound.app->add_option(operand.name, values_.emplace_back(), operand.help);
      if (operand.required) o->required();
      bound.operands.push_back(o);
    }
    bound_.push_back(std::move(bound));
  }

  Bound* selected() {
    std::vector<CLI::App*> apps = app_.get_subcommands();
    if (apps.empty()) return nullptr;
    for (Bound& bound : bound_) {
      if (bound.app == apps.front()) return &bound;
    }
    return nullptr;
  }

  GlobalOptions global_options() {
    GlobalOptions options;
    auto take = [&](const char* name) -> std::optional<std::string> {
      if (app_.get_option(name)->count() == 0) return std::nullopt;
      const std::string& value = global_values_[name];
      if (value.empty()) throw UsageError("option " + std::string(name) + " is empty");
      return value;
    };
    options.workspace = take("--workspace");
    options.store = take("--store");
    options.config = take("--config");
    options.json = global_flags_["--json"];
    return options;
  }

  CommandArgs command_args(const Bound& bound) const {
    std::map<std::string, std::string> values;
    for (const auto& [spec, option] : bound.options) {
      if (option->count() == 0) continue;
      values[spec->name] = spec->value != nullptr ? option->as<std::string>() : "";
    }
    std::vector<std::string> operands;
    for (CLI::Option* option : bound.operands) {
      for (const std::string& v : option->results()) operands.push_back(v);
    }
    if (bound.syntax->passes_through) {
      // Left over where the other program's line starts; an option there is a typo of
      // one of ours, not the program's name.
      operands = bound.app->remaining();
      if (!operands.empty() && starts_with(operands.front(), "-")) {
        reject_extras(operands, bound.syntax);
      }
    }
    reject_extras(app_.remaining(), bound.syntax);
    return CommandArgs(bound.syntax, std::move(values), std::move(operands));
  }

  // Arguments nobody took: an unknown command or option, or one operand too many.
  static void reject_extras(const std::vector<std::string>& extras, const CommandSyntax* syntax) {
    if (extras.empty()) return;
    const std::string& first = extras.front();
    bool option = starts_with(first, "-") && first != "-";
    std::string what = option   ? "unknown option "
                       : syntax ? "unexpected argument "
                                : "unknown command ";
    std::string message = what + fsnap::quote_input(first);
    if (syntax == nullptr) throw UsageError(message);
    if (option && syntax->passes_through) {
      message += "; the agent's own options follow its name or --, global options go before " +
                 std::string(syntax->name);
    }
    throw UsageError(std::string(syntax->name) + ": " + message + " (usage: shadowbox " +
                     synopsis(*syntax) + ")");
  }

  CLI::App app_{"", "shadowbox"};
  std::map<std::string, std::string> global_values_;  // by name; nodes stay where they are
  std::map<std::string, bool> global_flags_;
  std::deque<std::string> values_;  // stable addresses for CLI11
  std::deque<std::vector<std::string>> operand_values_;
  std::vector<Bound> bound_;
};

}  // namespace

const std::vector<OptionSpec>& global_option_specs() {
  static const std::vector<OptionSpec> options = {
      {"--workspace", nullptr, "DIR",
       "the workspace (default: the nearest directory, from the current one up, that has a "
       "store; else the root of the enclosing git work tree; else the current directory; your "
       "HOME and / are refused where a command records)",
       ValueKind::kDir},
      {"--store", nullptr, "DIR",
       "the store (default: $SHADOWBOX_STORE, else $XDG_DATA_HOME/shadowbox/<name>-<hash>)",
       ValueKind::kDir},
      {"--config", nullptr, "FILE",
       "settings (default: $SHADOWBOX_CONFIG, else <workspace>/.shadowbox.yaml)", ValueKind::kFile},
      {"--json", nullptr, nullptr, "machine-readable output"},
      {"--version", nullptr, nullptr, "print the version and the commit it was built from"},
  };
  return options;
}

namespace {

std::vector<std::string> split_choices(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string s = text;
  for (std::size_t start = 0;;) {
    std::size_t bar = s.find('|', start);
    out.push_back(s.substr(start, bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 1;
  }
}

}  // namespace

std::vector<std::string> choices_of(const OptionSpec& option) {
  return option.kind == ValueKind::kChoice ? split_choices(option.choices)
                                           : std::vector<std::string>();
}

std::vector<std::string> choices_of(const OperandSpec& operand) {
  if (operand.kind != ValueKind::kChoice) return {};
  return split_choices(operand.choices != nullptr ? operand.choices : operand.name);
}

std::string wrap(const std::string& text, std::size_t indent, std::size_t first_column) {
  constexpr std::size_t kWidth = 79;
  std::string out;
  std::size_t column = first_column;
  bool line_empty = true;
  std::size_t start = 0;
  while (start < text.size()) {
    // A word ends at a space outside brackets: "[--max-steps N]" stays on one line.
    std::size_t end = start;
    for (int depth = 0; end < text.size() && (text[end] != ' ' || depth > 0); ++end) {
      depth += text[end] == '[' ? 1 : text[end] == ']' ? -1 : 0;
    }
    std::size_t length = end - start;
    if (!line_empty && column + 1 + length > kWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out.append(text, start, length);
    column += length;
    line_empty = false;
    start = end + 1;
  }
  return out;
}

std::string synopsis(const CommandSyntax& syntax) {
  // "restore REF [--dry-run]", "resume RUN [--continue] [-- ARGS...]",
  // "run [--run-id ID] [--] CMD [ARGS...]": operands that name what the command works on
  // first, then the options, then what is passed through.
  auto operands = [&](bool leading) {
    std::string text;
    for (const OperandSpec& operand : syntax.operands) {
      if (leading != (!operand.variadic && !syntax.passes_through)) continue;
      std::string name = operand.variadic && !syntax.passes_through ? "-- " : "";
      name += operand.name;
      if (operand.variadic) name += "...";
      text += operand.required ? " " + name : " [" + name + "]";
    }
    return text;
  };
  std::string text = syntax.name + operands(true);
  for (const OptionSpec& option : syntax.options) {
    text += " [";
    text += option.alias != nullptr ? option.alias : option.name;
    if (option.value != nullptr) text += std::string(" ") + option.value;
    text += "]";
  }
  if (syntax.passes_through) text += " [--]";
  return text + operands(false);
}

std::optional<std::string> CommandArgs::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string CommandArgs::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

std::optional<std::size_t> CommandArgs::count(const std::string& name) const {
  std::optional<std::string> text = value(name);
  if (!text) return std::nullopt;
  if (text->empty() || text->size() > 18 ||
      text->find_first_not_of("0123456789") != std::string::npos) {
    throw usage_error("option " + name + " needs a non-negative number, got " +
                      fsnap::quote_input(*text));
  }
  return static_cast<std::size_t>(std::stoull(*text));
}

UsageError CommandArgs::usage_error(const std::string& message) const {
  return UsageError(std::string(syntax_->name) + ": " + message + " (usage: shadowbox " +
                    synopsis(*syntax_) + ")");
}

namespace {

// argv with "--name VALUE" written "--name=VALUE" where VALUE starts with '-' (a tool
// call's input may: `snapshot --input "-rf /tmp/x"`), which CLI11 would take for an
// option. Only up to `--`, and never in a command whose operands are another
// program's line.
std::vector<std::string> values_joined(const std::vector<std::string>& argv,
                                       const std::vector<const CommandSyntax*>& commands) {
  std::vector<std::string> out;
  const CommandSyntax* command = nullptr;
  auto takes_value = [&](const std::string& arg) {
    auto named = [&](const OptionSpec& o) {
      return o.value != nullptr && (arg == o.name || (o.alias != nullptr && arg == o.alias));
    };
    const std::vector<OptionSpec>& globals = global_option_specs();
    if (std::any_of(globals.begin(), globals.end(), named)) return true;
    return command != nullptr &&
           std::any_of(command->options.begin(), command->options.end(), named);
  };
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg == "--" || (command != nullptr && command->passes_through)) {
      out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
      break;
    }
    if (takes_value(arg) && i + 1 < argv.size()) {
      const std::string& value = argv[i + 1];
      bool looks_like_option = value.size() > 1 && value[0] == '-' && value != "--";
      // "--name=-x"; a one-letter alias takes its value attached: "-n-x".
      out.push_back(!looks_like_option ? arg : arg + (arg.rfind("--", 0) == 0 ? "=" : "") + value);
      if (!looks_like_option) out.push_back(value);
      ++i;
      continue;
    }
    if (command == nullptr) {
      for (const CommandSyntax* c : commands) {
        if (arg == c->name) command = c;
      }
    }
    out.push_back(arg);
  }
  return out;
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& raw_argv,
                               const std::vector<const CommandSyntax*>& commands) {
  std::vector<std::string> argv = values_joined(raw_argv, commands);
  // A command whose operands are another program's line (`run … -- claude --json`) must
  // not read what follows `--`: parse what precedes it, and if the command passes
  // through, hand the rest over untouched.
  CommandLine line;
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  if (dashes != argv.end()) {
    line = Parser(commands).parse(std::vector<std::string>(argv.begin(), dashes));
    if (line.command != nullptr && line.command->passes_through && !line.help) {
      std::vector<std::string> operands = line.args->operands();
      if (!operands.empty()) operands.emplace_back("--");  // `run claude -- x`: the agent's
      operands.insert(operands.end(), dashes + 1, argv.end());
      line.args = line.args->with_operands(std::move(operands));
    } else {
      line = Parser(commands).parse(argv);
    }
  } else {
    line = Parser(commands).parse(argv);
  }
  if (line.command != nullptr && line.command->passes_through && !line.help &&
      line.args->operands().empty()) {
    throw line.args->usage_error("no command given to run");
  }
  return line;
}

std::string command_help(const CommandSyntax& syntax) {
  std::string text = "usage: shadowbox " + wrap(synopsis(syntax), 6, 17) + "\n\n" +
                     wrap(syntax.summary, 0, 0) + "\n";
  auto row = [&](std::string left, const char* help) {
    if (left.size() < 20) left.resize(20, ' ');
    text += "  " + left + wrap(help, 22, 22) + "\n";
  };
  if (!syntax.operands.empty()) {
    text += "\noperands:\n";
    for (const OperandSpec& operand : syntax.operands) row(operand.name, operand.help);
  }
  text += "\noptions:\n";
  for (const OptionSpec& option : syntax.options) {
    std::string left = option.alias != nullptr ? std::string(option.alias) + ", " : "";
    left += option.name;
    if (option.value != nullptr) left += std::string(" ") + option.value;
    row(left, option.help);
  }
  row("-h, --help", "this help");
  text +=
      "\nThe global options (--workspace, --store, --config, --json) go before or after\n"
      "the command's name; see shadowbox --help.\n";
  return text;
}

}  // namespace cli
