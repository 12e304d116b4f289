// shadowbox completion: the shell completion scripts, and the words they offer.
#include <iostream>

#include "commands.hpp"
#include "completion_scripts.hpp"
#include "completion_words.hpp"
#include "fsnap/error.hpp"
#include "output.hpp"

namespace cli {

// Finds its store itself, without the config: a completion must answer quietly, even in
// a workspace whose config is broken or not trusted.
int cmd_completion(const GlobalOptions& options, const Args& parsed) {
  if (std::optional<std::string> kind = parsed.value("--words")) {
    if (!parsed.operands().empty()) {
      throw parsed.usage_error("--words prints words, not a script: name no shell");
    }
    if (*kind != "runs" && *kind != "refs" && *kind != "calls") {
      throw parsed.usage_error("--words takes runs, refs or calls, not " +
                               fsnap::quote_input(*kind));
    }
    std::vector<std::string> words = completion_words(options, *kind);
    if (options.json) {
      Poco::JSON::Array::Ptr list = new Poco::JSON::Array;
      for (const std::string& word : words) list->add(word);
      print_json(std::cout, list);
    } else {
      for (const std::string& word : words) std::cout << word << '\n';
    }
    return 0;
  }
  if (parsed.operands().empty()) throw parsed.usage_error("name the shell: bash, zsh or fish");
  const std::string& shell = parsed.operands()[0];
  std::string script = completion_script(shell);
  if (script.empty()) {
    throw parsed.usage_error("expected bash, zsh or fish, not " + fsnap::quote_input(shell));
  }
  if (options.json) {
    Poco::JSON::Object::Ptr out = make_object();
    out->set("shell", shell);
    out->set("script", script);
    print_json(std::cout, out);
  } else {
    std::cout << script;
  }
  return 0;
}

}  // namespace cli
