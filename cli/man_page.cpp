#include "man_page.hpp"

#include <sstream>

#include "arguments.hpp"
#include "commands.hpp"
#include "overview.hpp"
#include "version.hpp"

namespace cli {

namespace {

// text as roff reads it literally: a backslash escaped, every hyphen a minus sign (what
// a reader copies into a shell), and a line that would start with a control character
// made plain.
std::string roff(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string bold(const std::string& text) {
  return "\\fB" + roff(text) + "\\fR";
}

std::string italic(const std::string& text) {
  return "\\fI" + roff(text) + "\\fR";
}

// "-n, --max-count N" with the names bold and the value italic, as man pages write it.
std::string option_term(const OptionSpec& option) {
  std::string term = option.alias != nullptr ? bold(option.alias) + ", " : "";
  term += bold(option.name);
  if (option.value != nullptr) term += " " + italic(option.value);
  return term;
}

void tagged(std::ostream& out, const std::string& term, const std::string& text) {
  out << ".TP\n" << term << '\n' << roff(text) << '\n';
}

}  // namespace

std::string man_page() {
  std::ostringstream out;
  out << ".\\\" Made by `shadowbox help --man` from its command table; do not edit.\n"
      << ".TH SHADOWBOX 1 \"\" \"shadowbox " << kVersion
      << "\" \"User Commands\"\n"
      // Left-aligned and unhyphenated: option names and synopses stay as typed.
      << ".ad l\n.nh\n"
      << ".SH NAME\nshadowbox \\- " << roff(kTagline) << '\n'
      << ".SH SYNOPSIS\n"
      << roff(overview_synopsis()) << '\n'
      << ".SH DESCRIPTION\n"
      << roff(kDescription) << '\n'
      << ".PP\n"
      << roff(
             "`shadowbox --help` lists the commands, `shadowbox COMMAND --help` (or `shadowbox "
             "help COMMAND`) describes one: this page says the same.")
      << '\n'
      << ".SH COMMANDS\n";
  for (const Command& c : all_commands()) {
    const CommandSyntax& syntax = c.syntax;
    out << ".SS " << syntax.name << '\n'
        << bold("shadowbox " + synopsis(syntax)) << '\n'
        << ".PP\n"
        << roff(syntax.summary) << '\n';
    if (!syntax.operands.empty()) {
      out << ".PP\nOperands:\n.RS\n";
      for (const OperandSpec& operand : syntax.operands) {
        tagged(out, italic(operand.name), operand.help);
      }
      out << ".RE\n";
    }
    if (!syntax.options.empty()) {
      out << ".PP\nOptions:\n.RS\n";
      for (const OptionSpec& option : syntax.options) {
        tagged(out, option_term(option), option.help);
      }
      out << ".RE\n";
    }
  }
  out << ".SH REF\n" << roff(kRefSyntax) << '\n' << ".SH GLOBAL OPTIONS\n";
  out << roff("Before or after the command's name.") << '\n';
  for (const OptionSpec& option : global_option_specs()) {
    tagged(out, option_term(option), option.help);
  }
  out << ".SH ENVIRONMENT\n";
  for (const NamedText& variable : environment_variables()) {
    tagged(out, bold(variable.name), variable.text);
  }
  out << ".SH FILES\n";
  for (const NamedText& file : documented_files()) {
    tagged(out, italic(file.name), file.text);
  }
  out << ".SH EXIT STATUS\n"
      << roff(kExitStatus) << ".\n"
      << ".SH SEE ALSO\n"
      << ".BR shadowbox\\-hook (1),\n"
      << ".BR git (1)\n";
  return out.str();
}

}  // namespace cli
