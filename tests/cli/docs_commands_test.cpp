// The shadowbox commands the README and docs/ show a reader: every `shadowbox ...` line
// of their shell examples names a command this build has, with options that command
// takes (as its --help lists them). What the first five minutes run for real is
// scripts/demo-run.sh (tests/e2e/demo_test.cpp); this keeps the rest of the manual from
// naming a command or an option that does not exist.
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

// One `shadowbox` command line of a document, split into words.
struct DocCommand {
  std::string where;  // file:line
  std::vector<std::string> words;
};

// Splits a shell line into words, as sh would for plain quoting: '…', "…", and an
// unquoted # starting a comment. Stops at a control operator (&&, ||, |, ;, >, <).
std::vector<std::vector<std::string>> shell_commands(const std::string& line) {
  std::vector<std::vector<std::string>> commands(1);
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) commands.back().push_back(word);
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\'' || c == '"') {
      std::size_t close = line.find(c, i + 1);
      if (close == std::string::npos) close = line.size();
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close;
    } else if (c == ' ' || c == '\t') {
      end_word();
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '&' || c == '|' || c == ';' || c == '>' || c == '<') {
      end_word();
      if (!commands.back().empty()) commands.emplace_back();
    } else {
      word += c;
      in_word = true;
    }
  }
  end_word();
  return commands;
}

std::vector<fs::path> documents() {
  fs::path source(SHADOWBOX_SOURCE_DIR);
  std::vector<fs::path> docs = {source / "README.md"};
  for (fs::recursive_directory_iterator it(source / "docs"), end; it != end; ++it) {
    if (it->path().extension() == ".md") docs.push_back(it->path());
  }
  return docs;
}

std::vector<DocCommand> documented_commands() {
  std::vector<DocCommand> found;
  for (const fs::path& doc : documents()) {
    std::ifstream in(doc.string());
    std::string line;
    bool shell = false, fenced = false;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.rfind("```", 0) == 0) {
        fenced = !fenced;
        std::string lang = line.substr(3);
        shell = fenced && (lang == "sh" || lang == "bash" || lang == "console");
        continue;
      }
      if (!shell) continue;
      if (line.rfind("$ ", 0) == 0) line = line.substr(2);
      for (std::vector<std::string>& words : shell_commands(line)) {
        if (words.empty() || words[0] != "shadowbox") continue;
        found.push_back({fs::relative(doc, SHADOWBOX_SOURCE_DIR).string() + ":" + std::to_string(n),
                         std::move(words)});
      }
    }
  }
  return found;
}

// Whether help lists option (e.g. "--max-steps") as one of its own.
bool lists_option(const std::string& help, const std::string& option) {
  std::regex listed("(^|[\\s\\[,|])" + std::regex_replace(option, std::regex("-"), "\\-") +
                    "($|[\\s\\],=|])");
  return std::regex_search(help, listed);
}

TEST(DocsCommandsTest, EveryDocumentedCommandAndOptionExists) {
  std::vector<DocCommand> commands = documented_commands();
  ASSERT_GT(commands.size(), 40u) << "the README and docs/ show shadowbox commands";
  const std::map<std::string, bool> global_takes_value = {
      {"--workspace", true}, {"--store", true}, {"--config", true}, {"--json", false}};
  std::map<std::string, std::string> helps;
  std::size_t checked_options = 0;
  for (const DocCommand& c : commands) {
    std::size_t i = 1;
    std::string name;
    // Global options first, then the command's name.
    while (i < c.words.size()) {
      std::string word = c.words[i];
      std::string bare = word.substr(0, word.find('='));
      auto global = global_takes_value.find(bare);
      if (global == global_takes_value.end()) break;
      i += (global->second && word.find('=') == std::string::npos) ? 2 : 1;
    }
    if (i >= c.words.size()) continue;  // `shadowbox --help` and the like
    name = c.words[i++];
    if (name == "--help" || name == "--version" || name == "help") continue;
    if (!helps.count(name)) {
      testing_support::CommandResult help = testing_support::run_command(
          {SHADOWBOX_BIN, name, "--help"}, std::nullopt, {"SHADOWBOX_CONFIG="});
      EXPECT_EQ(help.exit_code, 0) << c.where << ": shadowbox has no command '" << name << "'\n"
                                   << help.err;
      helps[name] = help.out;
    }
    for (; i < c.words.size(); ++i) {
      const std::string& word = c.words[i];
      if (word == "--") break;  // what follows is the agent's, or paths
      if (word.size() < 2 || word[0] != '-') {
        if (name == "run") break;  // everything from the agent's name on is the agent's
        continue;
      }
      std::string option = word.substr(0, word.find('='));
      if (global_takes_value.count(option)) continue;
      if (option.size() > 2 && option[1] != '-') option = option.substr(0, 2);  // -n1
      ++checked_options;
      EXPECT_TRUE(lists_option(helps[name], option))
          << c.where << ": 'shadowbox " << name << "' takes no option " << option << "\n"
          << helps[name];
    }
  }
  EXPECT_GT(checked_options, 20u);
}

TEST(DocsCommandsTest, AMisspelledCommandOrOptionIsCaught) {
  // The check itself: what it reads as a command and an option, and what it refuses.
  std::vector<std::vector<std::string>> words =
      shell_commands("cd app && shadowbox --json log --run 'a b' -n1 # newest first | head");
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[1],
            (std::vector<std::string>{"shadowbox", "--json", "log", "--run", "a b", "-n1"}));
  testing_support::CommandResult store = testing_support::run_command(
      {SHADOWBOX_BIN, "store", "--help"}, std::nullopt, {"SHADOWBOX_CONFIG="});
  EXPECT_NE(store.exit_code, 0) << "there is no `shadowbox store` command";
  testing_support::CommandResult log = testing_support::run_command(
      {SHADOWBOX_BIN, "log", "--help"}, std::nullopt, {"SHADOWBOX_CONFIG="});
  EXPECT_TRUE(lists_option(log.out, "--run"));
  EXPECT_TRUE(lists_option(log.out, "-n"));
  EXPECT_FALSE(lists_option(log.out, "--branch"));
  EXPECT_FALSE(lists_option(log.out, "--ru"));
}

}  // namespace
