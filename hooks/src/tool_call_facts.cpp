#include "hooks/tool_call_facts.hpp"

#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Stringifier.h>
#include <boost/filesystem/operations.hpp>

namespace hooks {

namespace fs = boost::filesystem;

namespace {

// The string member key of the event's tool input, or "".
std::string input_text(const AgentEvent& event, const std::string& key) {
  if (event.tool_input.type() != typeid(Poco::JSON::Object::Ptr)) return "";
  Poco::JSON::Object::Ptr input = event.tool_input.extract<Poco::JSON::Object::Ptr>();
  if (!input || !input->has(key)) return "";
  Poco::Dynamic::Var value = input->get(key);
  return value.isString() ? value.extract<std::string>() : "";
}

// value as canonical_input writes it (an event's input nests no deeper than
// kMaxEventDepth levels: readable_event_json saw to it).
void write_canonical(std::ostream& out, const Poco::Dynamic::Var& value) {
  if (value.type() == typeid(Poco::JSON::Object::Ptr)) {
    Poco::JSON::Object::Ptr o = value.extract<Poco::JSON::Object::Ptr>();
    std::map<std::string, Poco::Dynamic::Var> sorted(o->begin(), o->end());
    out << '{';
    const char* comma = "";
    for (const auto& [key, item] : sorted) {
      out << comma;
      Poco::JSON::Stringifier::stringify(Poco::Dynamic::Var(key), out, 0);
      out << ':';
      write_canonical(out, item);
      comma = ",";
    }
    out << '}';
    return;
  }
  if (value.type() == typeid(Poco::JSON::Array::Ptr)) {
    Poco::JSON::Array::Ptr a = value.extract<Poco::JSON::Array::Ptr>();
    out << '[';
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (i > 0) out << ',';
      write_canonical(out, a->get(static_cast<unsigned>(i)));
    }
    out << ']';
    return;
  }
  Poco::JSON::Stringifier::stringify(value, out, 0);
}

// The files an apply_patch text adds, updates, deletes or moves to.
std::vector<std::string> patch_files(const std::string& patch) {
  static const char* kMarkers[] = {
      "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "};
  std::vector<std::string> out;
  std::istringstream in(patch);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (const char* marker : kMarkers) {
      if (line.rfind(marker, 0) == 0) out.push_back(line.substr(std::string(marker).size()));
    }
  }
  return out;
}

// path relative to root, if it lies inside it ("" for root itself).
std::optional<std::string> inside(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return std::nullopt;
  }
  fs::path rest;
  for (; p != path.end(); ++p) rest /= *p;
  return rest.generic_string();
}

}  // namespace

std::optional<std::vector<std::string>> named_paths(const AgentEvent& event,
                                                    const fs::path& workspace) {
  static const std::set<std::string> kFilePath = {"Edit", "Write", "MultiEdit", "write_file",
                                                  "replace"};
  std::vector<std::string> written;
  if (kFilePath.count(event.tool_name) != 0) {
    written.push_back(input_text(event, "file_path"));
  } else if (event.tool_name == "NotebookEdit") {
    written.push_back(input_text(event, "notebook_path"));
  } else if (event.tool_name == "apply_patch") {
    std::string patch = input_text(event, "input");
    if (patch.empty()) patch = input_text(event, "patch");
    if (patch.empty()) patch = input_text(event, "command");
    written = patch_files(patch);
  } else {
    return std::nullopt;
  }
  if (written.empty() || std::find(written.begin(), written.end(), "") != written.end()) {
    return std::nullopt;  // an input without its path: it may change anything
  }
  fs::path base = event.cwd.empty() ? workspace : fs::path(event.cwd);
  std::set<std::string> out;
  for (const std::string& w : written) {
    fs::path path = fs::path(w).is_absolute() ? fs::path(w) : base / w;
    path = path.lexically_normal();
    boost::system::error_code ec;
    fs::path resolved = fs::weakly_canonical(path, ec);
    for (const fs::path& p : {path, ec ? path : resolved}) {
      if (std::optional<std::string> rel = inside(p, workspace); rel && !rel->empty()) {
        out.insert(*rel);
      }
    }
  }
  return std::vector<std::string>(out.begin(), out.end());
}

sandbox::FailureDetails failure_details(const AgentEvent& event) {
  sandbox::FailureDetails details;
  static const std::set<std::string> kShells = {"Bash", "run_shell_command", "shell"};
  if (kShells.count(event.tool_name) != 0) details.command = input_text(event, "command");
  std::string error = event.error.isString() ? event.error.extract<std::string>() : "";
  std::istringstream in(error);
  for (std::string line; std::getline(in, line);) {
    for (const std::string prefix : {"Exit code ", "Exit Code: ", "exit code "}) {
      if (line.rfind(prefix, 0) != 0) continue;
      std::string digits;
      for (char c : line.substr(prefix.size())) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        digits.push_back(c);
      }
      if (!digits.empty() && digits.size() <= 3) {
        details.exit_code = std::stoi(digits);
        return details;
      }
    }
  }
  return details;
}

std::string canonical_input(const AgentEvent& event) {
  if (event.tool_input.isEmpty()) return "";
  std::ostringstream out;
  write_canonical(out, event.tool_input);
  return out.str();
}

}  // namespace hooks
