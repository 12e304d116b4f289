#include "overview.hpp"

#include <algorithm>

#include "arguments.hpp"
#include "commands.hpp"

namespace cli {

const std::vector<NamedText>& environment_variables() {
  static const std::vector<NamedText> variables = {
      {"SHADOWBOX_STORE", "the store of every workspace, when --store is not given"},
      {"SHADOWBOX_CONFIG", "the settings file, when --config is not given"},
      {"SHADOWBOX_RUN",
       "the run `shadowbox hook` records into when --run is not given (`shadowbox run` sets it "
       "for its agent)"},
      {"XDG_DATA_HOME",
       "the stores are in $XDG_DATA_HOME/shadowbox/ (default: ~/.local/share/shadowbox/)"},
      {"XDG_CONFIG_HOME",
       "the workspace settings you trusted are listed in $XDG_CONFIG_HOME/shadowbox/trusted.json "
       "(default: ~/.config/shadowbox/trusted.json)"},
      {"XDG_STATE_HOME",
       "the Claude Code settings files `hooks install` created are listed in "
       "$XDG_STATE_HOME/shadowbox/created-settings (default: ~/.local/state/shadowbox/)"},
      {"CLAUDE_PROJECT_DIR", "where `shadowbox hook` looks for the workspace, without --workspace"},
      {"GIT_CEILING_DIRECTORIES",
       "directories the search for a workspace does not go above, as for git"},
      {"SHADOWBOX_NO_PROGRESS", "when not empty, no progress line is drawn on a terminal"},
  };
  return variables;
}

const std::vector<NamedText>& documented_files() {
  static const std::vector<NamedText> files = {
      {"<workspace>/.shadowbox.yaml",
       "the workspace's settings: until `shadowbox trust`, only what tightens protection applies"},
      {"$XDG_DATA_HOME/shadowbox/<name>-<hash>/",
       "the store of a workspace: repo.git, the shadow repository (`shadowbox path`), and runs/, "
       "each run's agent HOME and record"},
      {"$XDG_CONFIG_HOME/shadowbox/trusted.json", "the workspace settings you trusted"},
  };
  return files;
}

std::string overview_synopsis() {
  std::string text = "shadowbox";
  for (const OptionSpec& option : global_option_specs()) {
    if (std::string(option.name) == "--version") continue;  // a question of its own
    text += std::string(" [") + option.name;
    if (option.value != nullptr) text += std::string(" ") + option.value;
    text += "]";
  }
  return text + " COMMAND [ARGS]";
}

void print_overview(std::ostream& out) {
  out << "usage: " << wrap(overview_synopsis(), 7, 7) << "\n\n"
      << wrap(kDescription, 0, 0) << "\n\ncommands:\n";
  for (const Command& c : all_commands()) {
    out << "  " << wrap(synopsis(c.syntax), 6, 2) << "\n      " << wrap(c.syntax.summary, 6, 6)
        << '\n';
  }
  out << "\n`shadowbox COMMAND --help` describes each option of a command.\n\n"
      << "REF: " << wrap(kRefSyntax, 0, 5) << "\n\n"
      << "global options (before or after the command's name):\n";
  for (const OptionSpec& option : global_option_specs()) {
    std::string left = option.name;
    if (option.value != nullptr) left += std::string(" ") + option.value;
    left.resize(std::max<std::size_t>(left.size(), 17), ' ');
    out << "  " << left << wrap(option.help, 19, 19) << '\n';
  }
  out << "\nexit status: " << wrap(kExitStatus, 0, 13) << '\n';
}

}  // namespace cli
