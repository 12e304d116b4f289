// Command-line parsing for the shadowbox executable: global options, and a small
// parser for each command's own options. A malformed command line is a UsageError
// (exit status 2).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

// A command line that does not follow the documented syntax.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Options accepted before the command.
struct GlobalOptions {
  std::optional<std::string> workspace;  // --workspace DIR (default: current directory)
  std::optional<std::string> store;      // --store DIR
  std::optional<std::string> config;     // --config FILE
  bool json = false;                     // --json
  bool help = false;                     // --help / -h
  bool version = false;                  // --version
  std::string command;                   // first non-option argument ("" if none)
  std::vector<std::string> args;         // everything after the command
};

// Parses argv (without argv[0]) into the global options and the command.
GlobalOptions parse_global_options(const std::vector<std::string>& argv);

// The synopsis of a command as the command table declares it ("restore REF [--dry-run]…").
std::string synopsis_of(const std::string& command);

// The options and operands of one command, parsed against a declared set of options.
// Accepts "--name VALUE", "--name=VALUE", short aliases ("-n 5"), and "--" to end
// options.
class CommandArgs {
 public:
  // value_options take a value, flags do not; aliases maps "-n" to "--count" style.
  CommandArgs(const std::string& command, const std::vector<std::string>& args,
              const std::set<std::string>& value_options, const std::set<std::string>& flags,
              const std::map<std::string, std::string>& aliases = {});

  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  // A non-negative integer option; throws UsageError when it is not one.
  std::optional<std::size_t> count(const std::string& name) const;
  const std::vector<std::string>& operands() const { return operands_; }
  // Requires between min and max operands (the error shows the command's synopsis).
  void expect_operands(std::size_t min, std::size_t max) const;
  // A UsageError with message, followed by the command's synopsis.
  UsageError usage_error(const std::string& message) const;

 private:
  std::string command_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> operands_;
};

}  // namespace cli
