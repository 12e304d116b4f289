#include "arguments.hpp"

#include "fsnap/error.hpp"

namespace cli {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

GlobalOptions parse_global_options(const std::vector<std::string>& argv) {
  GlobalOptions options;
  std::size_t i = 0;
  auto take_value = [&](const std::string& arg, const std::string& name) -> std::string {
    if (arg.size() > name.size() && arg[name.size()] == '=') return arg.substr(name.size() + 1);
    if (i + 1 >= argv.size()) throw UsageError("option " + name + " needs a value");
    return argv[++i];
  };
  for (; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    auto is = [&](const std::string& name) { return arg == name || starts_with(arg, name + "="); };
    if (is("--workspace")) {
      options.workspace = take_value(arg, "--workspace");
    } else if (is("--store")) {
      options.store = take_value(arg, "--store");
    } else if (is("--config")) {
      options.config = take_value(arg, "--config");
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--version") {
      options.version = true;
    } else if (starts_with(arg, "-") && arg != "-") {
      throw UsageError("unknown option " + fsnap::quote_input(arg) +
                       " (global options go before the command)");
    } else {
      options.command = arg;
      options.args.assign(argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, argv.end());
      break;
    }
  }
  auto require_nonempty = [](const std::optional<std::string>& value, const char* name) {
    if (value && value->empty()) throw UsageError("option " + std::string(name) + " is empty");
  };
  require_nonempty(options.workspace, "--workspace");
  require_nonempty(options.store, "--store");
  require_nonempty(options.config, "--config");
  return options;
}

CommandArgs::CommandArgs(const std::string& command, const std::vector<std::string>& args,
                         const std::set<std::string>& value_options,
                         const std::set<std::string>& flags,
                         const std::map<std::string, std::string>& aliases)
    : command_(command) {
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (options_done || arg == "-" || !starts_with(arg, "-")) {
      operands_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
      continue;
    }
    std::optional<std::string> inline_value;
    if (std::size_t eq = arg.find('='); starts_with(arg, "--") && eq != std::string::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (auto alias = aliases.find(arg); alias != aliases.end()) arg = alias->second;
    if (flags.count(arg) != 0) {
      if (inline_value) throw usage_error("option " + arg + " takes no value");
      values_[arg] = "";
    } else if (value_options.count(arg) != 0) {
      if (inline_value) {
        values_[arg] = *inline_value;
      } else if (i + 1 < args.size()) {
        values_[arg] = args[++i];
      } else {
        throw usage_error("option " + arg + " needs a value");
      }
    } else {
      throw usage_error("unknown option " + fsnap::quote_input(args[i]));
    }
  }
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

void CommandArgs::expect_operands(std::size_t min, std::size_t max) const {
  if (operands_.size() < min) throw UsageError("usage: shadowbox " + synopsis_of(command_));
  if (operands_.size() > max) {
    throw usage_error("unexpected argument " + fsnap::quote_input(operands_[max]));
  }
}

UsageError CommandArgs::usage_error(const std::string& message) const {
  return UsageError(command_ + ": " + message + " (usage: shadowbox " + synopsis_of(command_) +
                    ")");
}

}  // namespace cli
