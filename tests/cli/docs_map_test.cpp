// The map a newcomer follows stays true: every function and file docs/architecture.md's
// "Where is X" table names exists where it says, every source file the architecture page
// and the folder READMEs name is in the tree, and the code cites the specifications it
// implements by their pages under docs/conformance/ — never by a file outside the
// repository. (docs_commands_test.cpp does the same for the commands the docs show.)
#include <cctype>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "test_support.hpp"

namespace {

namespace fs = boost::filesystem;

const fs::path kSource(SHADOWBOX_SOURCE_DIR);
const std::vector<std::string> kLibraries = {"fsnap", "policy", "statekit", "sandbox", "runs",
                                             "embed", "fleet",  "hooks",    "cli"};
const std::vector<std::string> kSpecifications = {"ADAPTER_STATE", "EXECUTION_CONTEXT",
                                                  "EXECUTION_STATE", "STATE_MANAGEMENT"};

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in(file.string());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The rows of the table under architecture.md's "## Where is X" (header and rule left out).
std::vector<std::string> where_is_rows() {
  std::vector<std::string> rows;
  bool in_section = false;
  for (const std::string& line : lines_of(kSource / "docs/architecture.md")) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Where is X";
    if (!in_section || line.rfind("| ", 0) != 0 || line.rfind("| you want", 0) == 0) continue;
    rows.push_back(line);
  }
  return rows;
}

// Whether file holds name: a qualified name (Class::function) as it is written where it
// is defined, or its class and the function declared in it; a plain name as a word.
bool holds(const fs::path& file, const std::string& name) {
  std::string text = testing_support::read_file(file);
  if (std::regex_search(text, std::regex("\\b" + name + "\\b"))) return true;
  std::size_t last = name.rfind("::");
  if (last == std::string::npos) return false;
  std::string owner = name.substr(0, last), member = name.substr(last + 2);
  if (owner.find("::") != std::string::npos) owner = owner.substr(owner.rfind("::") + 2);
  return std::regex_search(text, std::regex("(class|struct) " + owner + "\\b")) &&
         std::regex_search(text, std::regex("\\b" + member + "\\("));
}

// name without the namespace of one of our libraries (fsnap::Error -> Error), and that
// library ("" when it names none).
std::pair<std::string, std::string> split_library(const std::string& name) {
  for (const std::string& lib : kLibraries) {
    if (name.rfind(lib + "::", 0) == 0) return {lib, name.substr(lib.size() + 2)};
  }
  return {"", name};
}

// Every source file of lib, one after another (read once).
const std::string& library_text(const std::string& lib) {
  static std::map<std::string, std::string> texts;
  std::string& text = texts[lib];
  if (text.empty()) {
    for (fs::recursive_directory_iterator it(kSource / lib), end; it != end; ++it) {
      std::string ext = it->path().extension().string();
      if (ext == ".cpp" || ext == ".hpp") text += testing_support::read_file(it->path()) + "\n";
    }
  }
  return text;
}

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether some source file of lib declares or defines name (a type, or a function).
bool library_declares(const std::string& lib, const std::string& name) {
  std::string first = name.substr(0, name.find("::"));
  const std::string& text = library_text(lib);
  for (std::size_t at = text.find(first); at != std::string::npos; at = text.find(first, at + 1)) {
    std::size_t after = at + first.size();
    if ((at > 0 && identifier_char(text[at - 1])) ||
        (after < text.size() && identifier_char(text[after]))) {
      continue;
    }
    if (after < text.size() && text[after] == '(') return true;  // a function
    for (const char* keyword : {"class ", "struct ", "using ", "enum class "}) {
      std::size_t n = std::string(keyword).size();
      if (at >= n && text.compare(at - n, n, keyword) == 0) return true;
    }
  }
  return false;
}

// The source files (and docs) a text names: a path from the repository's root, or one a
// folder README gives from its folder (src/x.cpp, include-style fsnap/x.hpp, or a bare
// x.cpp).
std::vector<std::string> named_files(const std::string& line) {
  static const std::regex path(
      "(?:^|[\\s(`,\\[])((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\\.(?:cpp|hpp))(?=$|[\\s)`,;:.\\]])");
  std::vector<std::string> out;
  for (std::sregex_iterator it(line.begin(), line.end(), path), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

// Where a name a document in folder gives can be (empty: none exists).
fs::path resolve(const std::string& name, const fs::path& folder) {
  // (A folder's tests are in tests/<folder>/.)
  std::vector<fs::path> candidates = {kSource / name, folder / name, folder / "src" / name,
                                      folder / "include" / folder.filename() / name,
                                      kSource / "tests" / folder.filename() / name};
  std::string first = name.substr(0, name.find('/'));
  candidates.push_back(kSource / first / "include" / name);
  if (folder == kSource) {
    // The architecture page names a library's files by their bare names too.
    for (const std::string& lib : kLibraries) {
      candidates.push_back(kSource / lib / "src" / name);
      candidates.push_back(kSource / lib / "include" / lib / name);
    }
  }
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c)) return c;
  }
  return {};
}

TEST(DocsMapTest, WhereIsXAnswersEachLookupWithFunctionsThatExist) {
  std::vector<std::string> rows = where_is_rows();
  std::string all;
  for (const std::string& row : rows) all += row + "\n";
  for (const char* lookup :
       {"where a snapshot is taken", "where a rollback is decided", "where a hook event is parsed",
        "a Claude Agent SDK application", "HTTP hooks", "the watch daemon's socket",
        "where a limit is decided", "where a limit is enforced", "the run supervisor",
        "the store layout", "the fleet push", "the config"}) {
    EXPECT_NE(all.find(lookup), std::string::npos) << "architecture.md's table answers " << lookup;
  }
  // `name` (path or `name`, path: the function, and the file it is in.
  static const std::regex pair(
      "`([A-Za-z_][A-Za-z0-9_:]*)`,? \\(?((?:[a-z_]+/)+[A-Za-z0-9_-]+\\.(?:cpp|hpp))");
  static const std::regex qualified(
      "`((?:fsnap|policy|statekit|sandbox|runs|embed|fleet|hooks|cli)::[A-Za-z0-9_:]+)`");
  std::size_t pairs = 0, names = 0;
  for (const std::string& row : rows) {
    for (std::sregex_iterator it(row.begin(), row.end(), pair), end; it != end; ++it) {
      ++pairs;
      fs::path file = kSource / std::string((*it)[2]);
      ASSERT_TRUE(fs::is_regular_file(file)) << (*it)[2] << " named in: " << row;
      EXPECT_TRUE(holds(file, split_library((*it)[1]).second))
          << (*it)[2] << " does not hold " << (*it)[1];
    }
    for (std::sregex_iterator it(row.begin(), row.end(), qualified), end; it != end; ++it) {
      ++names;
      auto [lib, name] = split_library((*it)[1]);
      EXPECT_TRUE(library_declares(lib, name)) << lib << "/ declares no " << name;
    }
    for (const std::string& file : named_files(row)) {
      EXPECT_TRUE(fs::is_regular_file(kSource / file)) << file << " named in: " << row;
    }
  }
  EXPECT_GE(pairs, 30u);
  EXPECT_GE(names, 30u);
}

TEST(DocsMapTest, EverySourceFileTheArchitectureAndTheFolderReadmesNameExists) {
  std::vector<std::pair<fs::path, fs::path>> documents = {
      {kSource / "docs/architecture.md", kSource}};
  for (const std::string& lib : kLibraries) {
    documents.push_back({kSource / lib / "README.md", kSource / lib});
  }
  std::size_t checked = 0;
  for (const auto& [document, folder] : documents) {
    std::vector<std::string> lines = lines_of(document);
    ASSERT_FALSE(lines.empty()) << document;
    for (std::size_t n = 0; n < lines.size(); ++n) {
      for (const std::string& name : named_files(lines[n])) {
        ++checked;
        EXPECT_FALSE(resolve(name, folder).empty())
            << fs::relative(document, kSource).string() << ":" << n + 1 << " names " << name
            << ", which is not in the tree";
      }
    }
  }
  EXPECT_GT(checked, 150u);
}

TEST(DocsMapTest, SpecificationsAreCitedByTheirConformancePages) {
  for (const std::string& spec : kSpecifications) {
    EXPECT_TRUE(fs::is_regular_file(kSource / "docs/conformance" / (spec + ".md"))) << spec;
  }
  std::regex named("((?:docs/)?conformance/)?(" + kSpecifications[0] + "|" + kSpecifications[1] +
                   "|" + kSpecifications[2] + "|" + kSpecifications[3] + ")(\\.md)?");
  std::size_t cited = 0;
  std::vector<fs::path> roots = {kSource / "docs", kSource / "tests"};
  for (const std::string& lib : kLibraries) roots.push_back(kSource / lib);
  for (const fs::path& root : roots) {
    for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
      std::string ext = it->path().extension().string();
      if ((ext != ".cpp" && ext != ".hpp" && ext != ".md") ||
          it->path().filename() == "docs_map_test.cpp") {
        continue;
      }
      std::vector<std::string> lines = lines_of(it->path());
      std::string where = fs::relative(it->path(), kSource).string();
      bool conformance_page = where.rfind("docs/conformance/", 0) == 0;
      for (std::size_t n = 0; n < lines.size(); ++n) {
        const std::string& line = lines[n];
        // The specifications and design notes live outside the repository.
        EXPECT_EQ(line.find("shared/"), std::string::npos) << where << ":" << n + 1 << ": " << line;
        EXPECT_EQ(line.find("DESIGN.md"), std::string::npos)
            << where << ":" << n + 1 << ": " << line;
        if (conformance_page || (line.find("_STATE") == std::string::npos &&
                                 line.find("_CONTEXT") == std::string::npos &&
                                 line.find("STATE_MANAGEMENT") == std::string::npos)) {
          continue;
        }
        for (std::sregex_iterator m(line.begin(), line.end(), named), e; m != e; ++m) {
          ++cited;
          EXPECT_TRUE((*m)[1].matched && (*m)[3].matched)
              << where << ":" << n + 1 << " cites " << (*m)[2]
              << " other than by its page, docs/conformance/" << (*m)[2] << ".md";
        }
      }
    }
  }
  EXPECT_GT(cited, 15u);
}

TEST(DocsMapTest, TheChecksThemselvesCatchAWrongName) {
  fs::path transactions = kSource / "sandbox/src/tool_transactions.cpp";
  EXPECT_TRUE(holds(transactions, "ToolTransactions::fail"));
  EXPECT_FALSE(holds(transactions, "ToolTransactions::fails"));
  EXPECT_FALSE(holds(transactions, "ToolTransactions::undo")) << "it is in tool_undo.cpp";
  EXPECT_TRUE(holds(kSource / "hooks/include/hooks/agent_adapter.hpp", "AgentAdapter::parse_event"))
      << "declared in its class";
  EXPECT_FALSE(holds(kSource / "hooks/include/hooks/agent_adapter.hpp", "AgentAdapter::parse"));
  EXPECT_TRUE(library_declares("fsnap", "HostFilesystem::checkpoint"));
  EXPECT_FALSE(library_declares("fsnap", "RollbackPolicy"));
  EXPECT_EQ(
      named_files("see `agent_hook.cpp` (src/event_json.cpp, fsnap/watch_daemon.hpp)."),
      (std::vector<std::string>{"agent_hook.cpp", "src/event_json.cpp", "fsnap/watch_daemon.hpp"}));
  EXPECT_FALSE(resolve("src/event_json.cpp", kSource / "hooks").empty());
  EXPECT_FALSE(resolve("fsnap/watch_daemon.hpp", kSource / "hooks").empty());
  EXPECT_TRUE(resolve("src/event_jsn.cpp", kSource / "hooks").empty());
}

// Every test a conformance page cites as the one that holds a requirement
// (`Suite.Name`, or `Suite.*` for a whole suite) is a test of tests/: a renamed or
// imagined test would leave a requirement claimed with nothing holding it.
std::set<std::string> defined_tests() {
  std::set<std::string> names;
  std::regex test(R"(\bTEST(?:_F|_P)?\(\s*([A-Za-z0-9_]+),\s*([A-Za-z0-9_]+)\))");
  for (fs::recursive_directory_iterator it(kSource / "tests"), end; it != end; ++it) {
    if (it->path().extension() != ".cpp") continue;
    std::string text = testing_support::read_file(it->path());
    for (std::sregex_iterator m(text.begin(), text.end(), test), e; m != e; ++m) {
      names.insert((*m)[1].str() + ".*");
      names.insert((*m)[1].str() + "." + (*m)[2].str());
    }
  }
  return names;
}

// The `Suite.Name` and `Suite.*` a text cites.
std::vector<std::string> cited_tests(const std::string& text) {
  std::vector<std::string> out;
  std::regex cited(R"(`([A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9]*|\*)`)");
  for (std::sregex_iterator m(text.begin(), text.end(), cited), e; m != e; ++m) {
    out.push_back((*m)[1].str() + "." + (*m)[2].str());
  }
  return out;
}

TEST(DocsMapTest, EveryTestAConformancePageCitesExists) {
  std::set<std::string> tests = defined_tests();
  std::size_t checked = 0;
  for (const std::string& spec : kSpecifications) {
    fs::path page = kSource / "docs/conformance" / (spec + ".md");
    for (const std::string& name : cited_tests(testing_support::read_file(page))) {
      ++checked;
      EXPECT_EQ(tests.count(name), 1u)
          << page.filename().string() << " cites " << name << ", which no TEST of tests/ defines";
    }
  }
  EXPECT_GT(checked, 60u);
  // The check itself: a name that is not a test is caught.
  EXPECT_EQ(cited_tests("`ResumeProblemsTest.X` and `A.*`, not `x.y` or `A::b`"),
            (std::vector<std::string>{"ResumeProblemsTest.X", "A.*"}));
  EXPECT_EQ(tests.count("DocsMapTest.EveryTestAConformancePageCitesExists"), 1u);
  EXPECT_EQ(tests.count("DocsMapTest.NoSuchTest"), 0u);
}

}  // namespace
