// The manual page `shadowbox help --man` writes: valid roff that man renders without a
// warning, and the same commands, options and fixed text as --help, since both are made
// from the command table. shadowbox-hook's page is checked as roff too.
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;
using testing_support::CommandResult;
using testing_support::run_command;
using testing_support::TempDir;
using testing_support::write_file;
using Names = std::set<std::string>;

std::string shadowbox_out(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SHADOWBOX_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = run_command(argv, std::nullopt, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return r.out;
}

// A roff line as a reader sees its words: font changes dropped, \- and \e as - and \.
std::string plain(const std::string& roff) {
  std::string text = std::regex_replace(roff, std::regex(R"(\\f[BIRP])"), "");
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  text = std::regex_replace(text, std::regex(R"(\\&)"), "");
  return std::regex_replace(text, std::regex(R"(\\e)"), "\\");
}

// The option names of a help's or a man page's option lines ("-n, --max-count N").
Names option_names(const std::string& left) {
  Names names;
  std::regex name(R"((^|[ ,])(--?[a-z][a-z-]*))");
  for (std::sregex_iterator it(left.begin(), left.end(), name), end; it != end; ++it) {
    names.insert((*it)[2]);
  }
  return names;
}

// The page, section by section (.SH) and command by command (.SS of COMMANDS).
struct ManPage {
  std::map<std::string, std::string> sections;  // text of each .SH, its lines as they are
  std::vector<std::string> commands;            // in order
  std::map<std::string, Names> options;         // of each command
  Names global_options;                         // of GLOBAL OPTIONS
};

ManPage read_man_page(const std::string& roff) {
  ManPage page;
  std::istringstream in(roff);
  std::string section, command, line;
  bool term_next = false, in_options = false;
  while (std::getline(in, line)) {
    if (line.rfind(".SH ", 0) == 0) {
      section = line.substr(4);
      command.clear();
      continue;
    }
    page.sections[section] += line + "\n";
    if (section == "GLOBAL OPTIONS") {
      if (term_next) page.global_options.merge(option_names(plain(line)));
      term_next = line == ".TP";
      continue;
    }
    if (section != "COMMANDS") continue;
    if (line.rfind(".SS ", 0) == 0) {
      command = line.substr(4);
      page.commands.push_back(command);
      page.options[command];
      in_options = false;
    } else if (line == "Options:") {
      in_options = true;
    } else if (line == ".RE") {
      in_options = false;
    } else if (line == ".TP") {
      term_next = in_options;
      continue;
    } else if (term_next) {
      for (const std::string& n : option_names(plain(line))) page.options[command].insert(n);
    }
    term_next = false;
  }
  return page;
}

// The lines of a help after header up to the next blank line.
std::vector<std::string> help_block(const std::string& help, const std::string& header) {
  std::vector<std::string> lines;
  std::size_t at = help.find("\n" + header + "\n");
  if (at == std::string::npos) return lines;
  std::istringstream in(help.substr(at + header.size() + 2));
  for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
  return lines;
}

// The names a help lists in its options block: the left column of each row.
Names help_options(const std::string& help, const std::string& header) {
  Names names;
  for (const std::string& line : help_block(help, header)) {
    if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] == '-') {
      for (const std::string& n : option_names(line.substr(0, line.find("  ", 2)))) {
        names.insert(n);
      }
    }
  }
  return names;
}

std::string words(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(\s+)"), " ");
}

TEST(ManPageTest, ListsTheCommandsAndOptionsOfHelp) {
  std::string overview = shadowbox_out({"--help"});
  ManPage page = read_man_page(shadowbox_out({"help", "--man"}));
  std::vector<std::string> help_commands;
  for (const std::string& line : help_block(overview, "commands:")) {
    if (line.size() > 2 && line[2] != ' ')
      help_commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  ASSERT_GT(help_commands.size(), 20u);
  EXPECT_EQ(page.commands, help_commands) << "the same commands, in the same order";
  for (const std::string& command : help_commands) {
    std::string help = shadowbox_out({command, "--help"});
    Names options = help_options(help, "options:");
    options.erase("-h");  // every command's help ends with -h, --help; the page says it once
    options.erase("--help");
    EXPECT_EQ(page.options[command], options) << command;
    // The synopsis and summary as --help gives them.
    std::string usage = help.substr(7, help.find("\n\n") - 7);
    EXPECT_NE(words(plain(page.sections["COMMANDS"])).find(words("shadowbox " + usage.substr(10))),
              std::string::npos)
        << usage;
  }
  EXPECT_GT(page.options["log"].count("--max-count"), 0u);
  EXPECT_GT(page.options["log"].count("-n"), 0u);
  // The global options, the REF syntax and the exit statuses: one text for both.
  EXPECT_EQ(page.global_options,
            help_options(overview, "global options (before or after the command's name):"));
  std::string ref = overview.substr(overview.find("\nREF: ") + 6);
  ref = ref.substr(0, ref.find("\n\n"));
  EXPECT_EQ(words(plain(page.sections["REF"])), words(ref + "\n"));
  std::string status = overview.substr(overview.find("\nexit status: ") + 14);
  EXPECT_NE(words(plain(page.sections["EXIT STATUS"])).find(words(status).substr(0, 60)),
            std::string::npos);
  for (const char* section :
       {"NAME", "SYNOPSIS", "DESCRIPTION", "ENVIRONMENT", "FILES", "SEE ALSO"}) {
    EXPECT_TRUE(page.sections.count(section)) << section;
  }
  for (const char* variable :
       {"SHADOWBOX_STORE", "SHADOWBOX_CONFIG", "SHADOWBOX_RUN", "XDG_DATA_HOME"}) {
    EXPECT_NE(plain(page.sections["ENVIRONMENT"]).find(variable), std::string::npos) << variable;
  }
}

TEST(ManPageTest, IsRoffThatManRendersWithoutAWarning) {
  if (run_command({"sh", "-c", "command -v groff"}).exit_code != 0) {
    GTEST_SKIP() << "groff is not installed: the pages are not rendered";
  }
  TempDir temp;
  write_file(temp / "shadowbox.1", shadowbox_out({"help", "--man"}));
  fs::path hook_page = fs::path(SHADOWBOX_SOURCE_DIR) / "cli" / "hook_client" / "shadowbox-hook.1";
  for (const fs::path& page : {temp / "shadowbox.1", hook_page}) {
    CommandResult checked = run_command({"groff", "-man", "-ww", "-z", page.string()});
    EXPECT_EQ(checked.exit_code, 0) << page;
    EXPECT_EQ(checked.err, "") << page;
    CommandResult shown = run_command({"groff", "-man", "-ww", "-Tutf8", "-P-cbou", page.string()},
                                      std::nullopt, {"LC_ALL=C.UTF-8"});
    EXPECT_EQ(shown.err, "") << page;
    EXPECT_NE(shown.out.find("SEE ALSO"), std::string::npos) << page;
  }
  CommandResult shown =
      run_command({"groff", "-man", "-Tutf8", "-P-cbou", (temp / "shadowbox.1").string()},
                  std::nullopt, {"LC_ALL=C.UTF-8"});
  EXPECT_NE(shown.out.find("shadowbox restore REF"), std::string::npos);
  EXPECT_NE(shown.out.find("--max-count"), std::string::npos) << "a minus sign prints as -";
}

TEST(ManPageTest, HelpManTakesNoCommand) {
  CommandResult r =
      run_command({SHADOWBOX_BIN, "help", "log", "--man"}, std::nullopt, {"SHADOWBOX_CONFIG="});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--man"), std::string::npos) << r.err;
}

}  // namespace
