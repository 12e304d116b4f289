#include "yaml_keys.hpp"

#include <map>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "hooks/config_error.hpp"

namespace hooks {

namespace {

// Follows the events of a document: the mappings and sequences open around the node
// being read, and in each mapping the keys seen so far.
class KeyChecker : public YAML::EventHandler {
 public:
  explicit KeyChecker(std::string origin) : origin_(std::move(origin)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string& value) override {
    node(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark, false);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark, true);
  }
  void OnMapEnd() override { close(); }

 private:
  // A mapping or sequence being read.
  struct Open {
    bool mapping = false;
    std::string path;                  // its own, dotted ("" at the top)
    std::map<std::string, int> lines;  // mapping: each key seen, on its line (1-based)
    bool key_next = true;              // mapping: the next node is a key
    std::string key;                   // mapping: the key whose value comes next
    std::size_t items = 0;             // sequence: items seen
  };

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what,
                         const std::string& problem) const {
    std::ostringstream out;
    out << origin_ << ":" << mark.line + 1 << ": " << what << ": " << problem;
    throw ConfigError(out.str());
  }

  // The path of a value (or item) that begins now, in the collection open around it.
  std::string child_path() {
    Open& around = open_.back();
    if (around.mapping) return around.path.empty() ? around.key : around.path + "." + around.key;
    return around.path + "[" + std::to_string(around.items++) + "]";
  }

  // A node that is not a collection: a scalar (value), or null or an alias (no value).
  void node(const YAML::Mark& mark, const std::string* value) {
    if (open_.empty()) return;  // a document that is one scalar
    Open& around = open_.back();
    if (around.mapping && around.key_next) {
      std::string where = around.path.empty() ? "(top level)" : around.path;
      if (value == nullptr) fail(mark, where, "a key must be a name");
      std::string path = around.path.empty() ? *value : around.path + "." + *value;
      auto [seen, fresh] = around.lines.emplace(*value, mark.line + 1);
      if (!fresh) {
        fail(mark, path,
             "given twice (lines " + std::to_string(seen->second) + " and " +
                 std::to_string(mark.line + 1) + "); give each key once");
      }
      around.key = *value;
      around.key_next = false;
      return;
    }
    child_path();
    if (around.mapping) around.key_next = true;
  }

  void open(const YAML::Mark& mark, bool mapping) {
    Open next;
    next.mapping = mapping;
    if (!open_.empty()) {
      Open& around = open_.back();
      if (around.mapping && around.key_next) {
        fail(mark, around.path.empty() ? "(top level)" : around.path, "a key must be a name");
      }
      next.path = child_path();
    }
    open_.push_back(std::move(next));
  }

  void close() {
    open_.pop_back();
    if (!open_.empty() && open_.back().mapping) open_.back().key_next = true;
  }

  std::string origin_;
  std::vector<Open> open_;
};

}  // namespace

void check_unique_keys(const std::string& yaml_text, const std::string& origin) {
  std::istringstream in(yaml_text);
  YAML::Parser parser(in);
  KeyChecker checker(origin);
  // Only the first document is the configuration (YAML::Load reads no other).
  parser.HandleNextDocument(checker);
}

}  // namespace hooks
