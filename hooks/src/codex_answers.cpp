#include "hooks/codex_answers.hpp"

#include <set>
#include <sstream>
#include <vector>

namespace hooks {

namespace {

// One table of a TOML file: its header's key (whitespace outside quotes dropped: `a . "b"`
// is `a."b"`) and its text, header line included. The lines before the first header are
// a table whose key is "".
struct Table {
  std::string key;
  std::string text;
};

// The key of a `[table]` header line, or "" when line is none (an array of tables
// `[[…]]` included: it is never an answer, and stays with the table before it).
std::string header_key(const std::string& line) {
  std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != '[' || line.compare(start, 2, "[[") == 0) {
    return "";
  }
  std::string key;
  char quote = 0;
  for (std::size_t i = start + 1; i < line.size(); ++i) {
    char c = line[i];
    if (quote != 0) {
      key += c;
      if (c == '\\' && quote == '"' && i + 1 < line.size()) {
        key += line[++i];
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
      key += c;
    } else if (c == ']') {
      return key;
    } else if (c != ' ' && c != '\t') {
      key += c;
    }
  }
  return "";  // no closing bracket: not a header
}

// Whether line opens or closes a multi-line string (an odd number of """ or ''').
bool toggles_multiline(const std::string& line) {
  std::size_t count = 0;
  for (const char* delimiter : {"\"\"\"", "'''"}) {
    for (std::size_t at = line.find(delimiter); at != std::string::npos;
         at = line.find(delimiter, at + 3)) {
      ++count;
    }
  }
  return count % 2 == 1;
}

std::vector<Table> tables_of(const std::string& text) {
  std::vector<Table> tables(1);
  std::istringstream lines(text);
  bool in_string = false;
  for (std::string line; std::getline(lines, line);) {
    std::string key = in_string ? "" : header_key(line);
    if (!key.empty()) tables.push_back({key, ""});
    tables.back().text += line + '\n';
    if (toggles_multiline(line)) in_string = !in_string;
  }
  return tables;
}

// The first component of a dotted key: `notice.model_migrations` -> `notice`.
std::string top_of(const std::string& key) {
  std::size_t dot = key.find('.');
  return key.substr(0, dot);
}

std::string basic_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + '"';
}

bool is_answer(const std::string& key, const std::string& workspace) {
  if (key == "projects." + basic_string(workspace) || key == "projects.'" + workspace + "'") {
    return true;
  }
  std::string top = top_of(key);
  return top == "notice" || top == "tui";
}

// Whether config holds anything of the table key already: the same table, or (for an
// answer under `notice` or `tui`) a key of that name at its top, which a table appended
// after it would contradict.
bool holds(const std::string& config, const std::string& key, const std::string& workspace) {
  std::set<std::string> keys;
  for (const Table& table : tables_of(config)) keys.insert(table.key);
  if (keys.count(key) != 0) return true;
  std::string top = top_of(key);
  if (top == "projects") {
    // A dotted key or an inline table naming the workspace: left to the user's file.
    return config.find(basic_string(workspace)) != std::string::npos ||
           config.find("'" + workspace + "'") != std::string::npos;
  }
  std::istringstream lines(tables_of(config).front().text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, top.size(), top) != 0) continue;
    std::size_t after = line.find_first_not_of(" \t", start + top.size());
    if (after != std::string::npos && (line[after] == '.' || line[after] == '=')) return true;
  }
  return false;
}

}  // namespace

std::string codex_answers(const std::string& config, const std::string& user_config,
                          const std::string& workspace) {
  std::string out;
  for (const Table& table : tables_of(config)) {
    if (table.key.empty() || !is_answer(table.key, workspace)) continue;
    if (holds(user_config, table.key, workspace)) continue;
    out += table.text;
  }
  return out;
}

std::string with_codex_answers(const std::string& config, const std::string& answers,
                               const std::string& workspace) {
  std::string out = config;
  for (const Table& table : tables_of(answers)) {
    if (table.key.empty() || !is_answer(table.key, workspace)) continue;
    if (holds(out, table.key, workspace)) continue;
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += table.text;
  }
  return out;
}

}  // namespace hooks
